package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestVerifyBesideRunningStore(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{Sync: SyncNone})
	mustCommit(t, db.s, db.users.Put(user{ID: "u1", Email: "a@x"}))
	mustCommit(t, db.s, db.users.Put(user{ID: "u2", Email: "b@x"}), db.users.Put(user{ID: "u3", Email: "c@x"}))
	rep, err := Verify(nil, dir)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := Report{File: filepath.Join(dir, logName(1)), Lines: 2, Ops: 3, ValidBytes: db.s.Stats().FileBytes}
	if !reflect.DeepEqual(rep, want) {
		t.Errorf("Verify: got %+v, want %+v", rep, want)
	}
	// The store still works: Verify took no lock.
	mustCommit(t, db.s, db.users.Put(user{ID: "u4", Email: "d@x"}))
}

func TestVerifyEmptyDir(t *testing.T) {
	rep, err := Verify(nil, t.TempDir())
	if err != nil || !reflect.DeepEqual(rep, Report{}) {
		t.Errorf("Verify of an empty dir: got %+v, %v; want an empty report", rep, err)
	}
	if _, err := Verify(nil, filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Verify of a missing dir: got %v, want ErrNotExist", err)
	}
}

func TestVerifyTornTail(t *testing.T) {
	dir := t.TempDir()
	path, full, _ := writeTestLog(t, dir)
	if err := os.WriteFile(path, append(bytes.Clone(full), `{"crc":"12`...), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(nil, dir)
	if err != nil || rep.TornBytes != 10 || rep.ValidBytes != int64(len(full)) || rep.Lines != 5 || rep.Damage != nil {
		t.Errorf("Verify: got %+v, %v; want 5 lines and 10 torn bytes", rep, err)
	}
}

func TestVerifyAndRepairDamage(t *testing.T) {
	dir := t.TempDir()
	path, full, _ := writeTestLog(t, dir)
	offs := lineOffsets(full)
	damaged := bytes.Clone(full)
	damaged[offs[1]+30] ^= 0x04 // inside the second line of five
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}

	rep, err := Verify(nil, dir)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.File != path || ce.Offset != int64(offs[1]) {
		t.Fatalf("Verify: got %v, want *CorruptError in %s at %d", err, path, offs[1])
	}
	if rep.Damage != ce || rep.Lines != 1 || rep.LinesAfter != 3 || rep.ValidBytes != int64(offs[1]) {
		t.Errorf("Verify report: got %+v, want 1 line, damage at %d, 3 lines after", rep, offs[1])
	}

	if err := newDB(dir, Options{Sync: SyncNone}).s.Open(); !errors.As(err, &ce) {
		t.Fatalf("Open of a damaged log: got %v, want *CorruptError", err)
	}
	// Repair refuses to run while another holds the lock.
	lock, err := lockDir(osFS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Repair(nil, dir, RepairOptions{}); !errors.Is(err, ErrLocked) {
		t.Errorf("Repair of a locked dir: got %v, want ErrLocked", err)
	}
	lock.Close()

	rep, err = Repair(nil, dir, RepairOptions{})
	if err != nil {
		t.Fatalf("Repair: %v", err)
	}
	if !strings.HasPrefix(rep.CopiedTo, path+".damaged-") {
		t.Errorf("CopiedTo = %q, want %s.damaged-<time>", rep.CopiedTo, path)
	}
	saved, err := os.ReadFile(rep.CopiedTo)
	if err != nil || !bytes.Equal(saved, damaged) {
		t.Errorf("saved original: %v; equal to the damaged file: %v", err, bytes.Equal(saved, damaged))
	}
	if fi, err := os.Stat(rep.CopiedTo); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("saved original mode: %v, %v; want 600", fi.Mode().Perm(), err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the damaged generation is still in place: %v", err)
	}
	db := openDB(t, dir, Options{Sync: SyncNone, CompactMinBytes: 1})
	if got := db.users.Len(); got != 5 {
		t.Errorf("after repair: %d users, want the 5 of the intact lines", got)
	}
	mustCommit(t, db.s, db.users.Put(user{ID: "new", Email: "new@x"}))
	if err := db.s.Compact(); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if _, err := os.Stat(rep.CopiedTo); err != nil {
		t.Errorf("saved original gone after open and compaction: %v", err)
	}
	rep, err = Repair(nil, dir, RepairOptions{})
	if !errors.Is(err, ErrLocked) {
		t.Errorf("Repair beside an open store: got %+v, %v; want ErrLocked", rep, err)
	}
	db.s.Close()
	if rep, err := Repair(nil, dir, RepairOptions{}); err != nil || rep.CopiedTo != "" {
		t.Errorf("Repair of a clean log: got %+v, %v; want nothing done", rep, err)
	}
}
