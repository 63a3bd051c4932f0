package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// logFiles lists the log files in dir.
func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "log.*"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}

func TestAutomaticCompaction(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{Sync: SyncNone, CompactMinBytes: 4096})
	mustCommit(t, db.s, db.users.Put(user{ID: "keep", Email: "keep@x"}))
	for i := range 200 {
		mustCommit(t, db.s, db.users.Put(user{ID: "hot", Email: "hot@x", Name: fmt.Sprint(i)}))
	}
	st := db.s.Stats()
	if st.Compactions == 0 {
		t.Fatalf("no automatic compaction after 200 overwrites: %+v", st)
	}
	if st.LiveRecords != 2 || st.DeadRecords+st.LiveRecords >= 201 {
		t.Errorf("got %d live and %d dead records, want 2 live and fewer than 199 dead", st.LiveRecords, st.DeadRecords)
	}
	if st.DeadRecords >= st.LiveRecords && st.FileBytes >= 4096 {
		t.Errorf("left a log due for compaction: %+v", st)
	}
	if st.LastCompaction != epoch {
		t.Errorf("LastCompaction = %v, want the store's clock %v", st.LastCompaction, epoch)
	}
	if got := logFiles(t, dir); len(got) != 1 || got[0] == logName(1) {
		t.Errorf("log files %v, want one newer than generation 1", got)
	}
	db.s.Close()
	db = openDB(t, dir, Options{Sync: SyncNone})
	if got, _ := db.users.Get("hot"); got.Name != "199" {
		t.Errorf("hot.Name = %q after reopen, want 199", got.Name)
	}
	if _, ok := db.users.Get("keep"); !ok {
		t.Errorf("keep lost by compaction")
	}
}

// A small log is not compacted however dead it is: on an SD card the
// rewrite costs more than the dead bytes.
func TestNoCompactionBelowFloor(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	for range 100 {
		mustCommit(t, db.s, db.users.Put(user{ID: "hot", Email: "hot@x"}))
	}
	if st := db.s.Stats(); st.Compactions != 0 || st.DeadRecords != 99 || st.LiveRecords != 1 {
		t.Errorf("got %+v, want no compaction, 99 dead, 1 live", st)
	}
}

func TestCompactDropsExpired(t *testing.T) {
	dir := t.TempDir()
	now := epoch
	clock := func() time.Time { return now }
	db := openDB(t, dir, Options{Sync: SyncNone, Now: clock})
	mustCommit(t, db.s,
		db.sessions.Put(sess("s1", "u1", time.Hour)),
		db.sessions.Put(sess("s2", "u1", 2*time.Hour)),
		db.sessions.Put(sess("s3", "u2", 3*time.Hour)),
	)
	now = epoch.Add(90 * time.Minute) // s1 has expired
	if got := len(db.sessions.Find("user", "u1")); got != 2 {
		t.Errorf("before compaction: %d sessions of u1, want 2 (expired ones stay until compaction)", got)
	}
	if err := db.s.Compact(); err != nil {
		t.Fatal(err)
	}
	if got := db.sessions.Find("user", "u1"); len(got) != 1 || got[0].ID != "s2" {
		t.Errorf("after compaction: sessions of u1 %+v, want [s2]", got)
	}
	if _, ok := db.sessions.Get("s1"); ok {
		t.Errorf("expired s1 still readable after compaction")
	}
	if st := db.s.Stats(); st.LiveRecords != 2 || st.DeadRecords != 0 {
		t.Errorf("stats after compaction: %+v, want 2 live, 0 dead", st)
	}
	db.s.Close()

	// At open, records expired by then are not loaded.
	now = epoch.Add(150 * time.Minute)
	db = openDB(t, dir, Options{Sync: SyncNone, Now: clock})
	if got := db.sessions.Len(); got != 1 {
		t.Errorf("after reopen: %d sessions, want 1", got)
	}
	if st := db.s.Stats(); st.LiveRecords != 1 || st.DeadRecords != 1 {
		t.Errorf("stats after reopen: %+v, want 1 live, 1 dead", st)
	}
}

// Compaction changes no record, and carries over records of tables this
// build does not register.
func TestCompactKeepsState(t *testing.T) {
	dir := t.TempDir()
	withExtra := func() (*testDB, *Table[credential]) {
		db := newDB(dir, Options{Sync: SyncNone})
		extra := Register(db.s, "extra", TableConfig[credential]{ID: func(c *credential) string { return c.ID }})
		if err := db.s.Open(); err != nil {
			t.Fatal(err)
		}
		return db, extra
	}
	db, extra := withExtra()
	for i := range 30 {
		id := fmt.Sprint(i % 7)
		mustCommit(t, db.s,
			db.users.Put(user{ID: "u" + id, Email: id + "@x", Deleted: i%3 == 0}),
			db.creds.Put(credential{ID: "c" + fmt.Sprint(i), UserID: "u" + id}),
			extra.Put(credential{ID: "e" + id, Secret: fmt.Sprint(i)}),
		)
		if i%5 == 0 {
			mustCommit(t, db.s, db.creds.Delete("c"+fmt.Sprint(i)))
		}
	}
	before := dump(db).String()
	db.s.Close()

	db = openDB(t, dir, Options{Sync: SyncNone}) // no "extra" table
	if err := db.s.Compact(); err != nil {
		t.Fatal(err)
	}
	if got := dump(db).String(); got != before {
		t.Errorf("after compaction\n got %s\nwant %s", got, before)
	}
	db.s.Close()

	db, extra = withExtra()
	defer db.s.Close()
	if got := dump(db).String(); got != before {
		t.Errorf("after reopen\n got %s\nwant %s", got, before)
	}
	if got, ok := extra.Get("e3"); !ok || got.Secret != "24" {
		t.Errorf("unregistered table's record after compaction: got %+v, %v; want e3 with secret 24", got, ok)
	}
	checkIndexes(t, db)
}

// Open uses the newest generation and removes older ones and temp files,
// but nothing that is not its own.
func TestOpenRemovesSupersededFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...[]byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), slices.Concat(lines...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(logName(1), line(1, "old"))
	write(logName(2), line(1, "u1"), line(2, "u2"))
	write(logName(3)+".tmp", line(1, "unfinished"))
	write(logName(2)+".damaged-20300101T000000Z", []byte("operator's copy"))
	write("notes.txt", []byte("x"))
	db := openDB(t, dir, Options{Sync: SyncNone})
	if got := db.users.Len(); got != 2 {
		t.Errorf("opened with %d users, want 2 from generation 2", got)
	}
	names, _ := os.ReadDir(dir)
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	want := []string{"LOCK", logName(2), logName(2) + ".damaged-20300101T000000Z", "notes.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("dir holds %v, want %v", got, want)
	}
}

// A line that reads back into the wrong shape is refused, with its offset.
func TestOpenRefusesUndecodableRecord(t *testing.T) {
	dir := t.TempDir()
	var lb lineBuilder
	lb.reset(2)
	lb.addPut("users", "u2", []byte(`{"id":"u2","email":42}`))
	bad := lb.finish()
	first := line(1, "u1")
	if err := os.WriteFile(filepath.Join(dir, logName(1)), slices.Concat(first, bad), 0o600); err != nil {
		t.Fatal(err)
	}
	err := newDB(dir, Options{Sync: SyncNone}).s.Open()
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != int64(len(first)) {
		t.Fatalf("Open: got %v, want *CorruptError at %d", err, len(first))
	}
}

// A log whose records break a unique index (say, one added since they were
// written) is refused rather than opened with an index that lies.
func TestOpenRefusesUniqueViolation(t *testing.T) {
	dir := t.TempDir()
	var lb lineBuilder
	lb.reset(1)
	lb.addPut("users", "u1", []byte(`{"id":"u1","email":"same@x"}`))
	lb.addPut("users", "u2", []byte(`{"id":"u2","email":"same@x"}`))
	if err := os.WriteFile(filepath.Join(dir, logName(1)), lb.finish(), 0o600); err != nil {
		t.Fatal(err)
	}
	err := newDB(dir, Options{Sync: SyncNone}).s.Open()
	var ue *UniqueError
	if !errors.As(err, &ue) || ue.Key != "same@x" {
		t.Fatalf("Open: got %v, want a *UniqueError for same@x", err)
	}
}
