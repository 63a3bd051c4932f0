package storage

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestLockNamesHolder(t *testing.T) {
	dir := t.TempDir()
	first := openDB(t, dir, Options{Sync: SyncNone})

	second := newDB(dir, Options{Sync: SyncNone})
	err := second.s.Open()
	var le *LockError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: got %v, want *LockError matching ErrLocked", err)
	}
	host, _ := os.Hostname()
	for _, want := range []string{fmt.Sprintf("pid %d", os.Getpid()), "host " + host, "since "} {
		if !strings.Contains(le.Holder, want) || !strings.Contains(err.Error(), want) {
			t.Errorf("lock error %q does not name the holder's %q", err, want)
		}
	}
	if le.Dir != dir {
		t.Errorf("LockError.Dir = %q, want %q", le.Dir, dir)
	}
	// The refused store touched nothing: the first still works.
	mustCommit(t, first.s, first.users.Put(user{ID: "u1", Email: "a@x"}))

	if err := first.s.Close(); err != nil {
		t.Fatal(err)
	}
	third := openDB(t, dir, Options{Sync: SyncNone})
	if _, ok := third.users.Get("u1"); !ok {
		t.Errorf("u1 missing after the lock changed hands")
	}
}
