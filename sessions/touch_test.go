package sessions

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"searchsvc/storage/uuid"
)

// TestFlushSurvivesReopen: a lastAccessedAt kept only in memory is lost in
// a crash (the stored one is older, never newer); once flushed it survives.
func TestFlushSurvivesReopen(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.create("u")
	e.clk.Add(5 * time.Minute)
	if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	touched := e.clk.Now()
	if got, ok := e.m.Get(s.ID); !ok || !got.LastAccessedAt.Equal(touched) {
		t.Fatalf("before the crash: lastAccessedAt %v %v, want the touch in memory %v", got.LastAccessedAt, ok, touched)
	}

	e.reopen() // a crash: no Flush
	got, ok := e.m.Get(s.ID)
	if !ok || !got.LastAccessedAt.Equal(s.CreatedAt) {
		t.Fatalf("unflushed: lastAccessedAt %v %v, want the stored %v", got.LastAccessedAt, ok, s.CreatedAt)
	}

	e.clk.Add(5 * time.Minute)
	if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	touched = e.clk.Now()
	if err := e.m.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	e.reopen()
	got, ok = e.m.Get(s.ID)
	if !ok || !got.LastAccessedAt.Equal(touched) {
		t.Errorf("flushed: lastAccessedAt %v %v, want %v", got.LastAccessedAt, ok, touched)
	}
	if got.ExpiresAt != s.ExpiresAt || got.UserID != s.UserID || got.CreatedAt != s.CreatedAt {
		t.Errorf("Flush changed more than lastAccessedAt: %+v, was %+v", got, s)
	}
}

func TestFlushWritesOnlyChanges(t *testing.T) {
	e := newEnv(t, Config{})
	a, b, c := e.create("u"), e.create("u"), e.create("v")
	stats := e.store.Stats()
	if err := e.m.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if got := e.store.Stats(); got.BytesWritten != stats.BytesWritten {
		t.Errorf("Flush with nothing touched wrote %d bytes", got.BytesWritten-stats.BytesWritten)
	}

	e.clk.Add(time.Second)
	for _, s := range []Session{a, b} {
		if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	}
	stats = e.store.Stats()
	if err := e.m.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	got := e.store.Stats()
	if got.Commits-stats.Commits != 1 || got.Records-stats.Records != 1 {
		t.Errorf("Flush of 2 touched sessions: %d commits, %d records; want 1, 1 (a seen record)",
			got.Commits-stats.Commits, got.Records-stats.Records)
	}
	if d, _ := e.stored(c.ID); !d.LastAccessedAt.Equal(c.CreatedAt) {
		t.Errorf("untouched session rewritten: lastAccessedAt %v", d.LastAccessedAt)
	}

	stats = got
	if err := e.m.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if got := e.store.Stats(); got.BytesWritten != stats.BytesWritten {
		t.Errorf("second Flush wrote %d bytes, want none", got.BytesWritten-stats.BytesWritten)
	}
}

// TestFlushDeleted: the in-memory state of a session that is gone never
// brings it back, and is dropped.
func TestFlushDeleted(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.create("u")
	live := e.create("u")
	e.clk.Add(time.Minute)
	e.m.Validate(s.ID, homeIP)
	e.m.Validate(live.ID, homeIP)
	// A validation that raced with the delete leaves an entry behind.
	if err := e.m.Delete(s.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	e.m.entry(e.m.key(s.ID)).touch(e.clk.Now())

	if err := e.m.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if _, ok := e.m.Get(s.ID); ok {
		t.Error("Flush brought a deleted session back")
	}
	if e.m.lookup(e.m.key(s.ID)) != nil {
		t.Error("Flush kept the entry of a deleted session")
	}
	e.reopen()
	if d, _ := e.m.Get(live.ID); !d.LastAccessedAt.Equal(e.clk.Now()) {
		t.Errorf("live session after a restart: lastAccessedAt %v, want %v", d.LastAccessedAt, e.clk.Now())
	}

	// The same when the session goes between Flush's look and its Commit.
	gone := e.create("u")
	e.m.Delete(gone.ID)
	e.clk.Add(time.Minute)
	at := e.clk.Now().UnixNano()
	if err := e.m.writeAccess([]flushUpdate{{e.m.key(live.ID), at}, {e.m.key(gone.ID), at}}); err != nil {
		t.Fatalf("writeAccess with a deleted session: %v", err)
	}
	if _, ok := e.m.Get(gone.ID); ok {
		t.Error("writeAccess brought a deleted session back")
	}
	if d, _ := e.stored(live.ID); d.LastAccessedAt.UnixNano() != at {
		t.Errorf("live session: stored lastAccessedAt %v, want %v", d.LastAccessedAt, time.Unix(0, at).UTC())
	}
}

// runEnv starts Run on e with a ticker the test drives. tick advances the
// clock by d, ticks, and returns once Run has done the tick's work.
func runEnv(t *testing.T, e *env) (tick func(d time.Duration), stop func()) {
	t.Helper()
	ticks := make(chan time.Time)
	done := make(chan struct{})
	e.m.tick = func(d time.Duration) (<-chan time.Time, func()) {
		if d != FlushEvery {
			t.Errorf("ticker every %v, want %v", d, FlushEvery)
		}
		return ticks, func() {}
	}
	e.m.afterTick = func() { done <- struct{}{} }
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	go func() {
		e.m.Run(ctx)
		close(exited)
	}()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-exited
		}
	}
	t.Cleanup(stop)
	tick = func(d time.Duration) {
		e.clk.Add(d)
		ticks <- e.clk.Now()
		<-done
	}
	return tick, stop
}

// TestRunTouchInterval: Run writes a lastAccessedAt only once it is
// TouchInterval ahead of the stored one, and everything on exit.
func TestRunTouchInterval(t *testing.T) {
	e := newEnv(t, Config{}) // TouchInterval 15 min
	s := e.create("u")
	tick, stop := runEnv(t, e)
	stats := e.store.Stats()

	for range 14 { // used every minute for 14 minutes, ticked in between
		tick(time.Minute)
		if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	}
	tick(0)
	if got := e.store.Stats(); got.BytesWritten != stats.BytesWritten {
		t.Fatalf("flushed before the touch interval: %d bytes", got.BytesWritten-stats.BytesWritten)
	}
	e.clk.Add(time.Minute)
	if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	validated := e.clk.Now() // 15 min after the stored lastAccessedAt
	tick(0)
	got := e.store.Stats()
	if got.Commits-stats.Commits != 1 {
		t.Fatalf("after 15 min: %d commits, want 1", got.Commits-stats.Commits)
	}
	if d, _ := e.stored(s.ID); !d.LastAccessedAt.Equal(validated) {
		t.Errorf("stored lastAccessedAt %v, want %v", d.LastAccessedAt, validated)
	}

	// One more minute of use: not due, but written on exit.
	e.clk.Add(30 * time.Second)
	e.m.Validate(s.ID, homeIP)
	last := e.clk.Now()
	stats = e.store.Stats()
	tick(30 * time.Second)
	if got := e.store.Stats(); got.Commits != stats.Commits {
		t.Errorf("flushed a minute after the last flush")
	}
	stop()
	e.reopen()
	if d, _ := e.m.Get(s.ID); !d.LastAccessedAt.Equal(last) {
		t.Errorf("after Run exited and a restart: lastAccessedAt %v, want %v", d.LastAccessedAt, last)
	}
}

// TestRunCleanup: Run cleans up at 03:30 of the clock's zone (UTC here),
// once a day, and not before.
func TestRunCleanup(t *testing.T) {
	e := newEnv(t, Config{MaxAge: time.Hour})
	s := e.create("u") // 2026-03-10 12:00 UTC, expires 13:00
	tick, _ := runEnv(t, e)

	tick(2 * time.Hour) // 14:00: expired, but no cleanup yet
	if _, ok := e.m.Get(s.ID); !ok {
		t.Fatal("expired session deleted before 03:30")
	}
	next := time.Date(2026, 3, 11, 3, 30, 0, 0, time.UTC)
	tick(next.Add(-time.Second).Sub(e.clk.Now())) // 03:29:59
	if _, ok := e.m.Get(s.ID); !ok {
		t.Fatal("expired session deleted before 03:30")
	}
	s2 := e.create("u")
	tick(time.Second) // 03:30:00
	if _, ok := e.m.Get(s.ID); ok {
		t.Error("expired session not deleted at 03:30")
	}
	if _, ok := e.m.Get(s2.ID); !ok {
		t.Error("active session deleted by cleanup")
	}
	if logs := e.logs.String(); !strings.Contains(logs, `msg="session cleanup"`) || !strings.Contains(logs, "deleted=1") {
		t.Errorf("cleanup not logged:\n%s", e.logs)
	}

	// Expired again, but the next cleanup is tomorrow.
	tick(2 * time.Hour)
	stats := e.store.Stats()
	tick(time.Hour)
	if _, ok := e.m.Get(s2.ID); !ok {
		t.Error("a second cleanup ran the same day")
	}
	if got := e.store.Stats(); got.Commits != stats.Commits {
		t.Error("a tick with nothing due wrote")
	}
	tick(time.Date(2026, 3, 12, 3, 30, 0, 0, time.UTC).Sub(e.clk.Now()))
	if _, ok := e.m.Get(s2.ID); ok {
		t.Error("no cleanup the next day at 03:30")
	}
}

// TestEntryKey: the in-memory map is keyed by the record's own id, never
// by the caller's string, which may be a slice of a whole Cookie header.
func TestEntryKey(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.create("u")
	header := "svc_session=" + s.ID + "; other=" + uuid.New()
	id := header[len("svc_session=") : len("svc_session=")+36]
	if _, _, err := e.m.Validate(id, homeIP); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	e.m.mu.RLock()
	defer e.m.mu.RUnlock()
	for k := range e.m.entries {
		if unsafe.StringData(k) == unsafe.StringData(id) {
			t.Error("entry keyed by the caller's string")
		}
	}
}

// TestShutdownWritesLittle: 2,000 sessions used since the last flush cost
// the shutdown 16 bytes each in one seen record (a whole sealed record each,
// about 400 bytes, before), a second Flush writes nothing, and after a
// restart every one of them has its last access back.
func TestShutdownWritesLittle(t *testing.T) {
	e := newEnv(t, Config{})
	ss := make([]Session, 2000)
	for i := range ss {
		ss[i] = e.create(fmt.Sprintf("user-%d", i))
	}
	e.clk.Add(10 * time.Minute)
	for _, s := range ss {
		if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	}
	touched := e.clk.Now()
	before := e.store.Stats()
	if err := e.m.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	after := e.store.Stats()
	bytes, records := after.BytesWritten-before.BytesWritten, after.Records-before.Records
	t.Logf("shutdown after %d sessions were used: %d bytes, %d records", len(ss), bytes, records)
	if bytes > 48<<10 || records != 1 {
		t.Errorf("shutdown after %d sessions were used: got %d bytes in %d records, want at most 48 KiB in 1", len(ss), bytes, records)
	}
	if err := e.m.Flush(); err != nil {
		t.Fatalf("second Flush: %v", err)
	}
	if got := e.store.Stats().BytesWritten; got != after.BytesWritten {
		t.Errorf("second Flush wrote %d bytes, want none", got-after.BytesWritten)
	}

	e.reopen()
	for _, s := range ss {
		if got, ok := e.m.Get(s.ID); !ok || !got.LastAccessedAt.Equal(touched) {
			t.Fatalf("after a restart: lastAccessedAt %v %v, want %v", got.LastAccessedAt, ok, touched)
		}
	}
	// The next shutdown with nothing used since writes nothing; with one
	// used, it keeps the others' times too.
	before = e.store.Stats()
	if err := e.m.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if got := e.store.Stats().BytesWritten; got != before.BytesWritten {
		t.Errorf("Flush after a restart with nothing used wrote %d bytes, want none", got-before.BytesWritten)
	}
	e.clk.Add(time.Minute)
	if _, _, err := e.m.Validate(ss[0].ID, homeIP); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if err := e.m.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	e.reopen()
	for i, s := range ss {
		want := touched
		if i == 0 {
			want = e.clk.Now()
		}
		if got, _ := e.m.Get(s.ID); !got.LastAccessedAt.Equal(want) {
			t.Fatalf("session %d after a second restart: lastAccessedAt %v, want %v", i, got.LastAccessedAt, want)
		}
	}
}
