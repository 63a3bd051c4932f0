package slack

import (
	"context"
	"errors"
	"testing"

	"searchsvc/integrations"
)

func TestProviderID(t *testing.T) {
	for _, tc := range []struct{ channel, thread, ts, edited, want string }{
		{"C1", "", "1767225600.000100", "", "C1/1767225600.000100"},
		{"C1", "", "1767225600.000100", "1767225700.000001", "C1/1767225600.000100@1767225700.000001"},
		{"D9", "1767225600.000100", "1767225601.000200", "", "D9/1767225600.000100/1767225601.000200"},
	} {
		pid := providerID(tc.channel, tc.thread, tc.ts, tc.edited)
		if pid != tc.want {
			t.Errorf("providerID: got %q, want %q", pid, tc.want)
		}
		c, th, ts, ed, ok := parseProviderID(pid)
		if !ok || c != tc.channel || th != tc.thread || ts != tc.ts || ed != tc.edited {
			t.Errorf("parse %q: got %q %q %q %q %v", pid, c, th, ts, ed, ok)
		}
	}
	for _, bad := range []string{"", "C1", "c1/1.2", "C1/x", "C1/1.2@", "C1/1.2@x", "C1/a/1.2", "C1/1/2/3", "id:abc|hash|/path"} {
		if _, _, _, _, ok := parseProviderID(bad); ok {
			t.Errorf("parse %q: got ok, want not", bad)
		}
	}
}

func TestCompareTS(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.1", "1.10", 0}, {"1.000100", "1.0001", 0}, {"9.5", "10.1", -1}, {"10.000001", "10.000002", -1},
		{"1767225600.000100", "1767225600.000099", 1}, {"5", "5.000000", 0},
	} {
		got := compareTS(tc.a, tc.b)
		if got > 0 {
			got = 1
		} else if got < 0 {
			got = -1
		}
		if got != tc.want {
			t.Errorf("compareTS(%s, %s): got %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// FuzzProviderID: what parses builds back to itself.
func FuzzProviderID(f *testing.F) {
	f.Add("C1/1767225600.000100@1767225700.000001")
	f.Add("D9/1767225600.000100/1767225601.000200")
	f.Add("C1//1.2")
	f.Fuzz(func(t *testing.T, pid string) {
		c, th, ts, ed, ok := parseProviderID(pid)
		if !ok {
			return
		}
		if again := providerID(c, th, ts, ed); again != pid {
			t.Fatalf("round trip of %q: got %q", pid, again)
		}
	})
}

// TestUnknownTask: a task type the sync does not give is an error the
// scheduler reports as a bug, not a silent success.
func TestUnknownTask(t *testing.T) {
	w := &workspace{sync: &syncer{}}
	_, err := w.RunTask(context.Background(), integrations.Task{Type: "getEmailList"})
	if !errors.Is(err, integrations.ErrUnsupportedTask) {
		t.Errorf("got %v, want ErrUnsupportedTask", err)
	}
}
