package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestLockWriteFails fails the lock file's Truncate, then its Write: Open
// must refuse rather than run under a lock file that names nobody or an
// old holder, and must release the lock, so that the next Open succeeds.
func TestLockWriteFails(t *testing.T) {
	for _, kind := range []string{"truncate", "write"} {
		t.Run(kind, func(t *testing.T) {
			fsys := newMemFS()
			fsys.failAt(kind, 1, syscall.EIO)
			db := newDB(crashDir, Options{FS: fsys})
			err := db.s.Open()
			if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "write lock") {
				db.s.Close()
				t.Fatalf("Open with a failing lock file %s: got %v, want the write lock error wrapping EIO", kind, err)
			}
			again := openDB(t, crashDir, Options{FS: fsys})
			holder, err := readAll(fsys, filepath.Join(crashDir, lockName))
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("pid %d", os.Getpid()); !strings.HasPrefix(string(holder), want) {
				t.Errorf("lock file after reopen = %q, want it to start with %q", holder, want)
			}
			again.s.Close()
		})
	}
}
