package index

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"searchsvc/storage"
)

// A user whose index is found damaged when it opens is caught up.
func TestDamageAtOpen(t *testing.T) {
	dir := t.TempDir()
	st := newStore()
	st.add(userA, "a1", "Alpha", "alpha text")
	x := openTest(t, dir, st)
	x.CatchUp(nil)
	if err := x.Close(storage.Position{}); err != nil {
		t.Fatal(err)
	}
	var largest string
	var size int64
	filepath.Walk(filepath.Join(dir, userA), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && info.Size() > size {
			largest, size = path, info.Size()
		}
		return nil
	})
	b, err := os.ReadFile(largest)
	if err != nil {
		t.Fatal(err)
	}
	// A byte of the footer, which every open reads (a block only a
	// query reads is found later, by a query or Verify).
	b[len(b)-20] ^= 0x40
	if err := os.WriteFile(largest, b, 0o600); err != nil {
		t.Fatal(err)
	}
	x = openTest(t, dir, st)
	x.Flush()
	want(t, x, userA, "alpha", "a1")
	if len(x.Search().NeedsRebuild()) != 0 {
		t.Errorf("NeedsRebuild %v after the catch-up", x.Search().NeedsRebuild())
	}
}

// A catch-up that fails is reported, and the index is not caught up.
func TestCatchUpFails(t *testing.T) {
	st := newStore()
	st.add("bad/user", "a1", "Alpha", "alpha text")
	x := openTest(t, "", st)
	if failed := x.CatchUp(nil); !slices.Equal(failed, []string{"bad/user"}) {
		t.Errorf("CatchUp: failed %v, want [bad/user]", failed)
	}
	if x.CaughtUp() {
		t.Error("CaughtUp after a failed catch-up")
	}
}

// Stale, as the search route calls it for a hit the store no longer has,
// makes a catch-up due without waiting; the catch-up deletes the hit.
func TestStale(t *testing.T) {
	st := newStore()
	st.add(userA, "a1", "Alpha", "alpha text")
	st.add(userA, "a2", "Alpha two", "alpha text")
	x := openTest(t, "", st)
	x.CatchUp(nil)
	st.remove(userA, "a1") // a removal the index missed
	want(t, x, userA, "alpha", "a1", "a2")
	x.Stale(userA)
	x.idle(userA)
	x.Flush()
	want(t, x, userA, "alpha", "a2")
}
