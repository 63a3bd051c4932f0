package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The test schema's sessions table is cold: Meta is kept only in the log.

// checkCold fails the test unless the session with id is held stripped
// (or whole, if wantStripped is false) and loads whole with meta.
func checkCold(t *testing.T, db *testDB, id string, wantStripped bool, meta map[string]string) {
	t.Helper()
	got, ok := db.sessions.Get(id)
	if !ok {
		t.Fatalf("Get(%s): not found", id)
	}
	if got.Cold.Stripped() != wantStripped {
		t.Errorf("Get(%s): stripped %v, want %v", id, got.Cold.Stripped(), wantStripped)
	}
	if wantStripped && got.Meta != nil {
		t.Errorf("Get(%s).Meta = %v, want nil in a stripped record", id, got.Meta)
	}
	whole, err := db.sessions.Load(id)
	if err != nil {
		t.Fatalf("Load(%s): %v", id, err)
	}
	if fmt.Sprint(whole.Meta) != fmt.Sprint(meta) || whole.UserID != got.UserID || !whole.ExpiresAt.Equal(got.ExpiresAt) {
		t.Errorf("Load(%s) = %+v, want meta %v and the fields of %+v", id, whole, meta, got)
	}
	if whole.Cold.Stripped() {
		t.Errorf("Load(%s) is stripped", id)
	}
}

func TestColdTable(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{Sync: SyncNone})
	s1 := sess("s1", "u1", time.Hour)
	mustCommit(t, db.s, db.sessions.Insert(s1), db.sessions.Put(sess("s2", "u1", time.Hour)))
	mustCommit(t, db.s, db.sessions.Update("s2", func(s *session) error {
		if s.Meta["ip"] != "192.0.2.2" {
			return fmt.Errorf("update sees meta %v, want the whole record", s.Meta)
		}
		s.Meta = map[string]string{"ip": "192.0.2.22"}
		return nil
	}))
	want := map[string]map[string]string{"s1": {"ip": "192.0.2.1"}, "s2": {"ip": "192.0.2.22"}}
	check := func(stage string) {
		t.Run(stage, func(t *testing.T) {
			for id, meta := range want {
				checkCold(t, db, id, true, meta)
			}
			if got := len(db.sessions.Find("user", "u1")); got != len(want) {
				t.Errorf("Find(user, u1): %d records, want %d", got, len(want))
			}
		})
	}
	reopen := func() {
		db.s.Close()
		db = openDB(t, dir, Options{Sync: SyncNone})
	}
	check("after commits")
	reopen()
	check("after reopen")
	mustCommit(t, db.s, db.sessions.Update("s1", func(s *session) error { s.Meta["n"] = "1"; return nil }))
	want["s1"] = map[string]string{"ip": "192.0.2.1", "n": "1"}
	check("after an update of a replayed record")
	if err := db.s.Compact(); err != nil {
		t.Fatal(err)
	}
	check("after compact")
	mustCommit(t, db.s, db.sessions.Delete("s2"))
	delete(want, "s2")
	mustCommit(t, db.s, db.sessions.Update("s1", func(s *session) error { s.Meta["n"] = "2"; return nil }))
	want["s1"] = map[string]string{"ip": "192.0.2.1", "n": "2"}
	check("after commits on the compacted log")
	reopen()
	check("after compact and reopen")
	if _, err := db.sessions.Load("s2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load(s2) after delete: %v, want ErrNotFound", err)
	}
}

// A stripped record cannot replace a whole one: Put and Insert refuse it
// and nothing is written.
func TestColdPutStrippedRefused(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	mustCommit(t, db.s, db.sessions.Put(sess("s1", "u1", time.Hour)))
	stripped, _ := db.sessions.Get("s1")
	before := db.s.Stats()
	for _, op := range []Op{db.sessions.Put(stripped), db.sessions.Insert(func() session { s := stripped; s.ID = "s9"; return s }())} {
		if err := db.s.Commit(op); !errors.Is(err, ErrInvalid) {
			t.Errorf("commit of a stripped record: %v, want ErrInvalid", err)
		}
	}
	if got := db.s.Stats(); got.Batches != before.Batches || got.BytesWritten != before.BytesWritten {
		t.Errorf("stats after refused puts: %+v, want %+v", got, before)
	}
	checkCold(t, db, "s1", true, map[string]string{"ip": "192.0.2.1"})
}

// Damage to a cold record's bytes in the log after they were verified is
// found when they are read back: by Load, by an Update, and by a
// compaction, which then leaves the log as it was.
func TestColdDamageDetected(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{Sync: SyncNone})
	mustCommit(t, db.s, db.sessions.Put(sess("s1", "u1", time.Hour)), db.sessions.Put(sess("s2", "u1", time.Hour)))
	path := filepath.Join(dir, logName(1))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("192.0.2.1"))
	if i < 0 {
		t.Fatal("the log does not hold s1's meta")
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("7"), int64(i+8)); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var ce *CorruptError
	if _, err := db.sessions.Load("s1"); !errors.As(err, &ce) || ce.File != path {
		t.Errorf("Load of a damaged record: %v, want a *CorruptError in %s", err, path)
	}
	err = db.s.Commit(db.sessions.Update("s1", func(s *session) error { s.UserID = "u2"; return nil }))
	if !errors.As(err, &ce) {
		t.Errorf("Update of a damaged record: %v, want a *CorruptError", err)
	}
	if err := db.s.Compact(); !errors.As(err, &ce) {
		t.Errorf("Compact over a damaged record: %v, want a *CorruptError", err)
	}
	if got := logFiles(t, dir); len(got) != 1 || got[0] != logName(1) {
		t.Errorf("log files after the refused compaction: %v, want [%s]", got, logName(1))
	}
	checkCold(t, db, "s2", true, map[string]string{"ip": "192.0.2.2"})
	if got, _ := db.sessions.Get("s1"); got.UserID != "u1" {
		t.Errorf("s1's user after the refused update: %q, want u1", got.UserID)
	}
}

// A record whose line does not take the fast path of the reader (an id
// with an escape) is kept whole at Open, and still reads and compacts.
func TestColdEscapedIDStaysWhole(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{Sync: SyncNone})
	id := `s"1`
	s := sess(id, "u1", time.Hour)
	s.Meta = map[string]string{"ip": "192.0.2.1"}
	mustCommit(t, db.s, db.sessions.Put(s))
	checkCold(t, db, id, true, s.Meta)
	db.s.Close()
	db = openDB(t, dir, Options{Sync: SyncNone})
	checkCold(t, db, id, false, s.Meta)
	if err := db.s.Compact(); err != nil {
		t.Fatal(err)
	}
	checkCold(t, db, id, true, s.Meta)
}

// Loads running beside updates and compactions read whole, current
// records: a compaction switches the log and every position in it at
// once. Run with -race.
func TestColdConcurrentLoadAndCompact(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone, CompactMinBytes: 1 << 30})
	const n = 50
	for i := range n {
		s := sess(fmt.Sprintf("s%d", i), "u1", time.Hour)
		s.Meta = map[string]string{"ip": fmt.Sprint(i), "v": "0"}
		mustCommit(t, db.s, db.sessions.Put(s))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for r := range 3 {
		wg.Go(func() {
			for k := r; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				i := k % n
				s, err := db.sessions.Load(fmt.Sprintf("s%d", i))
				if err != nil || s.Meta["ip"] != fmt.Sprint(i) || s.Meta["v"] == "" {
					errs <- fmt.Errorf("Load(s%d) = %+v, %v", i, s, err)
					return
				}
			}
		})
	}
	for round := 1; round <= 20; round++ {
		for i := range n {
			mustCommit(t, db.s, db.sessions.Update(fmt.Sprintf("s%d", i), func(s *session) error {
				s.Meta = map[string]string{"ip": s.Meta["ip"], "v": fmt.Sprint(round)}
				return nil
			}))
		}
		if err := db.s.Compact(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range n {
		checkCold(t, db, fmt.Sprintf("s%d", i), true, map[string]string{"ip": fmt.Sprint(i), "v": "20"})
	}
}

// A Load after Close is refused, not a read of a closed file.
func TestColdLoadAfterClose(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	mustCommit(t, db.s, db.sessions.Put(sess("s1", "u1", time.Hour)))
	db.s.Close()
	if _, err := db.sessions.Load("s1"); !errors.Is(err, ErrClosed) {
		t.Errorf("Load after Close: %v, want ErrClosed", err)
	}
}
