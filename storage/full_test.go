package storage

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDiskFull: a full disk refuses writes with ErrDiskFull, not for
// good: Err stays nil (nothing to restart for), reads serve the last
// durable state, nothing of a refused line is left in the log, and writes
// are taken again as soon as space comes back, by the next Commit or by
// CheckSpace; a restart, from what a power cut could leave, finds exactly
// the acknowledged records.
func TestDiskFull(t *testing.T) {
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	fsys := newMemFS()
	db := newDB(crashDir, Options{FS: fsys, Now: now, CompactMinBytes: 1 << 30})
	if err := db.s.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.s.Close()
	put := func(id string) error { return db.s.Commit(db.users.Put(user{ID: id, Email: id + "@x"})) }
	refused := func(id string) {
		t.Helper()
		if err := put(id); !errors.Is(err, ErrDiskFull) || errors.Is(err, ErrFailed) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("Commit(%s) on a full disk: got %v, want ErrDiskFull wrapping ENOSPC", id, err)
		}
		if err := db.s.Err(); err != nil {
			t.Fatalf("Err() on a full disk: got %v, want nil (no restart needed)", err)
		}
		if err := db.s.Writable(); !errors.Is(err, ErrDiskFull) {
			t.Fatalf("Writable() on a full disk: got %v, want ErrDiskFull", err)
		}
		if _, ok := db.users.Get(id); ok {
			t.Fatalf("refused %s is readable", id)
		}
	}
	logData := func() []byte {
		fsys.mu.Lock()
		defer fsys.mu.Unlock()
		n, err := fsys.walk(filepath.Join(crashDir, logName(1)))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Clone(n.data)
	}

	mustCommit(t, db.s, db.users.Put(user{ID: "u1", Email: "u1@x"}))
	before := logData()
	fsys.setNoSpace(true)
	refused("u2")
	refused("u3")
	if got := logData(); !bytes.Equal(got, before) {
		t.Fatalf("the log holds %d bytes after refused writes, want the %d it had (%q)", len(got), len(before), got[len(before):])
	}
	if _, ok := db.users.Get("u1"); !ok {
		t.Fatal("reads stopped on a full disk")
	}
	if err := db.s.CheckSpace(); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("CheckSpace while full: got %v, want ErrDiskFull", err)
	}

	// Space comes back: CheckSpace sees it (at most once a second).
	fsys.setNoSpace(false)
	if err := db.s.CheckSpace(); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("CheckSpace within a second of the last probe: got %v, want ErrDiskFull still", err)
	}
	clock = clock.Add(2 * time.Second)
	if err := db.s.CheckSpace(); err != nil {
		t.Fatalf("CheckSpace once space is back: got %v, want nil", err)
	}
	mustCommit(t, db.s, db.users.Put(user{ID: "u4", Email: "u4@x"}))

	// Full again, and back: the next Commit alone gets through.
	fsys.setNoSpace(true)
	refused("u5")
	fsys.setNoSpace(false)
	mustCommit(t, db.s, db.users.Put(user{ID: "u6", Email: "u6@x"}))
	if err := db.s.Writable(); err != nil {
		t.Fatalf("Writable after a write fitted: %v", err)
	}

	// An fsync that fails for want of space: the same, and the line it
	// covered is cut off before the store goes on.
	fsys.failAt("sync", fsys.counts["sync"]+1, syscall.ENOSPC)
	refused("u7")
	mustCommit(t, db.s, db.users.Put(user{ID: "u8", Email: "u8@x"}))

	// A compaction that runs out of space leaves the log as it was.
	fsys.setNoSpace(true)
	if err := db.s.Compact(); !errors.Is(err, ErrDiskFull) || db.s.Err() != nil {
		t.Fatalf("Compact on a full disk: got %v (Err %v), want ErrDiskFull and no failure", err, db.s.Err())
	}
	fsys.setNoSpace(false)
	mustCommit(t, db.s, db.users.Put(user{ID: "u9", Email: "u9@x"}))
	db.s.Close()

	fsys.mu.Lock()
	fsys.crashNow()
	fsys.mu.Unlock()
	for _, mode := range crashModes {
		db := newDB(crashDir, Options{FS: fsys.afterCrash(mode)})
		if err := db.s.Open(); err != nil {
			t.Fatalf("%s: reopen: %v", mode, err)
		}
		for i := 1; i <= 9; i++ {
			id := fmt.Sprintf("u%d", i)
			_, ok := db.users.Get(id)
			if want := i != 2 && i != 3 && i != 5 && i != 7; ok != want {
				t.Errorf("%s: %s present %v, want %v", mode, id, ok, want)
			}
		}
		db.s.Close()
	}
}
