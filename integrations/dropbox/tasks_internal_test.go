package dropbox

import (
	"context"
	"errors"
	"testing"

	"searchsvc/integrations"
)

// FuzzProviderID: what parses builds back to itself.
func FuzzProviderID(f *testing.F) {
	f.Add("id:abc|0123abcd|/docs/a.txt")
	f.Add("id:abc||/a|b.txt")
	f.Add("C1/1.2")
	f.Fuzz(func(t *testing.T, pid string) {
		id, hash, path, ok := parseProviderID(pid)
		if !ok {
			return
		}
		if again := providerID(Entry{ID: id, ContentHash: hash, PathLower: path}); again != pid {
			t.Fatalf("round trip of %q: got %q", pid, again)
		}
	})
}

func TestParseProviderID(t *testing.T) {
	for _, tc := range []struct {
		pid, id, hash, path string
		ok                  bool
	}{
		{"id:abc|0123|/docs/a|b.txt", "id:abc", "0123", "/docs/a|b.txt", true},
		{"id:abc|0123", "", "", "", false},
		{"abc|0123|/a", "", "", "", false},
	} {
		id, hash, path, ok := parseProviderID(tc.pid)
		if ok != tc.ok || ok && (id != tc.id || hash != tc.hash || path != tc.path) {
			t.Errorf("parse %q: got %q %q %q %v; want %q %q %q %v", tc.pid, id, hash, path, ok, tc.id, tc.hash, tc.path, tc.ok)
		}
	}
}

// TestUnknownTask: a task type the sync does not give is an error the
// scheduler reports as a bug, not a silent success.
func TestUnknownTask(t *testing.T) {
	a := &account{sync: &syncer{}}
	_, err := a.RunTask(context.Background(), integrations.Task{Type: "downloadEmail"})
	if !errors.Is(err, integrations.ErrUnsupportedTask) {
		t.Errorf("got %v, want ErrUnsupportedTask", err)
	}
}
