package uuid

import (
	"strings"
	"testing"
)

func TestUUID(t *testing.T) {
	seen := make(map[string]bool)
	for i := 0; i < 1000; i++ {
		u := New()
		if !Valid(u) || u[14] != '4' || !strings.ContainsRune("89ab", rune(u[19])) {
			t.Fatalf("not a v4 UUID: %q", u)
		}
		if seen[u] {
			t.Fatalf("repeated UUID %q", u)
		}
		seen[u] = true
	}
	for _, bad := range []string{"", "not-a-uuid", strings.ToUpper(New()), New() + "0", "g" + New()[1:]} {
		if Valid(bad) {
			t.Errorf("Valid(%q) = true, want false", bad)
		}
	}
}
