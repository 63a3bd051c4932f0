package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// commitConcurrently runs writers goroutines, each making perWriter
// commits of its own record, and returns the commits acknowledged.
func commitConcurrently(t testing.TB, db *testDB, writers, perWriter int) int {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := db.s.Commit(db.users.Put(user{ID: id, Email: id + "@x"})); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Commit: %v", err)
	}
	return writers * perWriter
}

// TestGroupCommitSharesFsyncs checks by counting, not timing, that 64
// concurrent writers share fsyncs at least 10 to 1, where one fsync per
// write (group commit off) needs one each.
func TestGroupCommitSharesFsyncs(t *testing.T) {
	tests := []struct {
		name      string
		window    time.Duration
		perWriter int
	}{
		{"group", 0, 20},
		{"perwrite", -1, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t, t.TempDir(), Options{CommitWindow: tt.window})
			before := db.s.Stats()
			commits := commitConcurrently(t, db, 64, tt.perWriter)
			st := db.s.Stats()
			fsyncs := st.Fsyncs - before.Fsyncs
			if st.Commits != int64(commits) {
				t.Fatalf("Commits = %d, want %d", st.Commits, commits)
			}
			if st.Batches != fsyncs {
				t.Errorf("%d batches but %d fsyncs, want one fsync per batch", st.Batches, fsyncs)
			}
			if tt.window < 0 && fsyncs != int64(commits) {
				t.Errorf("per-write: %d fsyncs for %d commits, want one each", fsyncs, commits)
			}
			if tt.window >= 0 && fsyncs*10 > int64(commits) {
				t.Errorf("group commit: %d fsyncs for %d commits, want at most %d", fsyncs, commits, commits/10)
			}
			t.Logf("%d commits, %d fsyncs", commits, fsyncs)
		})
	}
}

// Concurrent updates of one record all apply, each on the result of the
// one before, even within one batch.
func TestConcurrentUpdatesSerialize(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	mustCommit(t, db.s, db.users.Put(user{ID: "n", Email: "n@x", Name: "0"}))
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			err := db.s.Commit(db.users.Update("n", func(u *user) error {
				n, err := strconv.Atoi(u.Name)
				u.Name = strconv.Itoa(n + 1)
				return err
			}))
			if err != nil {
				t.Errorf("Commit: %v", err)
			}
		})
	}
	wg.Wait()
	if got, _ := db.users.Get("n"); got.Name != "50" {
		t.Errorf("after 50 increments: %q, want 50", got.Name)
	}
}

// gateFS holds every file Sync until the test opens the gate.
type gateFS struct {
	FS
	entered chan struct{}
	gate    chan struct{}
}

type gateFile struct {
	File
	g *gateFS
}

func (g *gateFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := g.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return gateFile{f, g}, nil
}

func (f gateFile) Sync() error {
	f.g.entered <- struct{}{}
	<-f.g.gate
	return f.File.Sync()
}

func newGateFS() *gateFS {
	return &gateFS{FS: osFS{}, entered: make(chan struct{}, 100), gate: make(chan struct{})}
}

// Reads see a commit only once it is durable, and Close finishes the
// commits queued before it.
func TestReadsWaitForFsyncAndCloseDrains(t *testing.T) {
	synctest.Test(t, testReadsWaitForFsyncAndCloseDrains)
}

// testReadsWaitForFsyncAndCloseDrains runs in a testing/synctest bubble,
// so that synctest.Wait sees the commits wait in the queue.
func testReadsWaitForFsyncAndCloseDrains(t *testing.T) {
	dir := t.TempDir()
	g := newGateFS()
	db := newDB(dir, Options{FS: g})
	if err := db.s.Open(); err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 3)
	go func() { results <- db.s.Commit(db.users.Put(user{ID: "u1", Email: "a@x"})) }()
	<-g.entered // u1's line is written, its fsync has not returned
	if _, ok := db.users.Get("u1"); ok {
		t.Errorf("u1 readable before its fsync returned")
	}
	if _, ok := db.users.Lookup("email", "a@x"); ok {
		t.Errorf("u1's email indexed before its fsync returned")
	}
	if st := db.s.Stats(); st.Commits != 0 {
		t.Errorf("Stats().Commits = %d before the fsync returned, want 0", st.Commits)
	}
	// Two more commits queue behind it, then Close is called.
	go func() { results <- db.s.Commit(db.users.Put(user{ID: "u2", Email: "b@x"})) }()
	go func() { results <- db.s.Commit(db.users.Put(user{ID: "u3", Email: "c@x"})) }()
	synctest.Wait() // both wait in the queue
	if n := len(db.s.reqs); n != 2 {
		t.Fatalf("commits queued: got %d, want 2", n)
	}
	closed := make(chan error)
	go func() { closed <- db.s.Close() }()
	close(g.gate)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	for range 3 {
		if err := <-results; err != nil {
			t.Errorf("Commit queued before Close: got %v, want nil", err)
		}
	}
	if err := db.s.Commit(db.users.Put(user{ID: "u4"})); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit after Close: got %v, want ErrClosed", err)
	}
	db = openDB(t, dir, Options{Sync: SyncNone})
	if got := db.users.Len(); got != 3 {
		t.Errorf("after reopen: %d users, want 3", got)
	}
}

// The counters add up: Open's directory fsyncs, then one write and one
// fsync per sequential commit, every byte of the file accounted for.
func TestStats(t *testing.T) {
	fsys := newMemFS()
	db := openDB(t, "/data/main", Options{FS: fsys})
	if st := db.s.Stats(); st.Fsyncs != 3 || st.BytesWritten != 0 || st.FileBytes != 0 {
		t.Errorf("after Open: %+v, want 3 directory fsyncs and nothing written", st)
	}
	mustCommit(t, db.s, db.users.Put(user{ID: "u1", Email: "a@x"}))
	mustCommit(t, db.s, db.users.Put(user{ID: "u2", Email: "b@x"}), db.creds.Put(credential{ID: "c1", UserID: "u2"}))
	mustCommit(t, db.s, db.users.Delete("u1"))
	data, err := readAll(fsys, "/data/main/"+logName(1))
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{
		Commits: 3, Records: 4, Batches: 3, Fsyncs: 6,
		BytesWritten: int64(len(data)), FileBytes: int64(len(data)),
		LiveRecords: 2, DeadRecords: 2,
	}
	if got := db.s.Stats(); got != want {
		t.Errorf("Stats:\n got %+v\nwant %+v", got, want)
	}
}

// holdFS holds the first Sync after on is set until gate is closed, so a
// test can queue commits behind a batch in flight.
type holdFS struct {
	FS
	on      atomic.Bool
	entered chan struct{}
	gate    chan struct{}
}

type holdFile struct {
	File
	h *holdFS
}

func (h *holdFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := h.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return holdFile{f, h}, nil
}

func (f holdFile) Sync() error {
	if f.h.on.CompareAndSwap(true, false) {
		f.h.entered <- struct{}{}
		<-f.h.gate
	}
	return f.File.Sync()
}

// A DeleteIfExists that is a no-op only because a commit ahead of it in
// the same batch deletes the record is answered with that batch: when the
// batch's write fails, both fail, and found stays false. A commit of only
// no-ops on a failed store fails too.
func TestNoopCommitSharesItsBatchFate(t *testing.T) {
	synctest.Test(t, testNoopCommitSharesItsBatchFate)
}

// testNoopCommitSharesItsBatchFate runs in a testing/synctest bubble, so
// that synctest.Wait sees a commit wait in the queue instead of a loop
// polling for it.
func testNoopCommitSharesItsBatchFate(t *testing.T) {
	mfs := newMemFS()
	h := &holdFS{FS: mfs, entered: make(chan struct{}, 1), gate: make(chan struct{})}
	db := newDB("/d", Options{FS: h})
	if err := db.s.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.s.Close()
	mustCommit(t, db.s, db.users.Insert(user{ID: "x", Email: "x@x"}))

	// A first commit holds the writer in its fsync while A and B queue up
	// behind it; their batch's write will fail.
	h.on.Store(true)
	first := make(chan error, 1)
	go func() { first <- db.s.Commit(db.users.Insert(user{ID: "y", Email: "y@x"})) }()
	<-h.entered
	mfs.mu.Lock()
	n := mfs.counts["write"]
	mfs.mu.Unlock()
	mfs.failAt("write", n+1, errors.New("input/output error"))
	queued := func(k int) { // waits until the new commit waits in the queue
		synctest.Wait()
		if n := len(db.s.reqs); n != k {
			t.Fatalf("commits queued: got %d, want %d", n, k)
		}
	}
	a := make(chan error, 1)
	go func() { a <- db.s.Commit(db.users.Delete("x")) }()
	queued(1)
	var found bool
	b := make(chan error, 1)
	go func() { b <- db.s.Commit(db.users.DeleteIfExists("x", &found)) }()
	queued(2)
	close(h.gate)

	if err := <-first; err != nil {
		t.Fatalf("first commit: %v", err)
	}
	errA, errB := <-a, <-b
	if !errors.Is(errA, ErrFailed) || !errors.Is(errB, ErrFailed) || found {
		t.Errorf("A: %v; B: %v, found %v; want both ErrFailed and found false", errA, errB, found)
	}
	if err := db.s.Commit(db.users.DeleteIfExists("nope", nil)); !errors.Is(err, ErrFailed) {
		t.Errorf("a commit of no-ops on a failed store: %v, want ErrFailed", err)
	}
}

// Stats.Commits counts every acknowledged Commit, no-ops included.
func TestStatsCountNoopCommits(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	mustCommit(t, db.s, db.users.Insert(user{ID: "u1", Email: "a@x"}))
	mustCommit(t, db.s, db.users.DeleteIfExists("nope", nil))
	if st := db.s.Stats(); st.Commits != 2 {
		t.Errorf("Commits = %d after 2 acknowledged commits, want 2", st.Commits)
	}
}

// With LoneWindow, a commit that comes alone shortly after another waits
// for company: two logins a few milliseconds apart share one line and one
// fsync, and each is acknowledged only after it. A commit after a quiet
// spell is written at once. The clock is synctest's.
func TestLoneWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := newDB(t.TempDir(), Options{LoneWindow: 5 * time.Millisecond})
		if err := db.s.Open(); err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer db.s.Close()
		start := time.Now()
		mustCommit(t, db.s, db.users.Insert(user{ID: "a", Email: "a@x"})) // the first: nothing recent
		if d := time.Since(start); d != 0 {
			t.Fatalf("a first commit waited %v, want 0", d)
		}
		before := db.s.Stats()
		var wg sync.WaitGroup
		var waited time.Duration
		wg.Go(func() {
			t0 := time.Now()
			mustCommit(t, db.s, db.users.Insert(user{ID: "b", Email: "b@x"}))
			waited = time.Since(t0)
		})
		time.Sleep(2 * time.Millisecond)
		wg.Go(func() { mustCommit(t, db.s, db.users.Insert(user{ID: "c", Email: "c@x"})) })
		wg.Wait()
		after := db.s.Stats()
		if got := after.Batches - before.Batches; got != 1 {
			t.Errorf("two commits 2 ms apart: got %d lines, want 1", got)
		}
		if got := after.Fsyncs - before.Fsyncs; got != 1 {
			t.Errorf("two commits 2 ms apart: got %d fsyncs, want 1", got)
		}
		if waited != 2*time.Millisecond {
			t.Errorf("the first of them waited %v, want 2ms (until the second came)", waited)
		}

		time.Sleep(time.Second)
		mustCommit(t, db.s, db.users.Insert(user{ID: "d0", Email: "d0@x"})) // after a batch of two: CommitWindow's rule
		time.Sleep(time.Second)                                             // quiet
		t0 := time.Now()
		mustCommit(t, db.s, db.users.Insert(user{ID: "d", Email: "d@x"}))
		if d := time.Since(t0); d != 0 {
			t.Errorf("a commit after a quiet second waited %v, want 0", d)
		}
		// One right after it, alone: waits the window for nobody.
		t0 = time.Now()
		mustCommit(t, db.s, db.users.Insert(user{ID: "e", Email: "e@x"}))
		if d := time.Since(t0); d != 5*time.Millisecond {
			t.Errorf("a lone commit right after another waited %v, want the window, 5ms", d)
		}
	})
}
