package storage

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countFailures counts the log's "automatic compaction failed" lines.
type countFailures struct{ n *atomic.Int64 }

func (h countFailures) Enabled(context.Context, slog.Level) bool { return true }
func (h countFailures) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "automatic compaction failed" {
		h.n.Add(1)
	}
	return nil
}
func (h countFailures) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countFailures) WithGroup(string) slog.Handler      { return h }

// One damaged byte in a cold record, found only when compaction reads it
// back, fails that compaction; the next waits an hour rather than running
// again after every commit batch, each rewriting the live records into a
// temporary file to throw it away (a cold review saw 98 of them, 77 MB
// written, over 500 commits). After the hour it is tried once more.
func TestColdDamagePostponesCompaction(t *testing.T) {
	dir := t.TempDir()
	var fails atomic.Int64
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	db := openDB(t, dir, Options{Sync: SyncNone, CompactMinBytes: 1, Logger: slog.New(countFailures{&fails}),
		Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	big := strings.Repeat("x", 2000)
	for i := range 400 {
		s := sess(fmt.Sprintf("s%d", i), "u1", 24*time.Hour)
		s.Meta["pad"] = big
		mustCommit(t, db.s, db.sessions.Put(s))
	}
	if err := db.s.Compact(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, logName(db.s.Position().Gen))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(data, []byte(`"192.0.2.`)) // in the last cold record of the file
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("~"), int64(i+2)); err != nil {
		t.Fatal(err)
	}
	f.Close()

	before := db.s.Stats()
	overwrite := func(n int) {
		for j := range n {
			// Overwrites: dead ops pile up, so batches ask for compaction.
			mustCommit(t, db.s, db.users.Put(user{ID: "hot", Email: "hot@x", Name: fmt.Sprint(j)}))
		}
	}
	overwrite(500)
	after := db.s.Stats()
	thrown := (after.BytesWritten - before.BytesWritten) - (after.FileBytes - before.FileBytes)
	if got := fails.Load(); got != 1 || after.Compactions != before.Compactions {
		t.Errorf("500 commits after the damage: got %d failed automatic compactions and %d done, want 1 and 0",
			got, after.Compactions-before.Compactions)
	}
	if thrown > int64(len(data)) {
		t.Errorf("500 commits after the damage wrote %d bytes that are not in the log, want at most one compaction's %d", thrown, len(data))
	}

	clock.Add(int64(time.Hour))
	overwrite(2) // the writer compacts after answering a batch: the second is answered after it
	if got := fails.Load(); got != 2 {
		t.Errorf("a commit an hour later: got %d failed automatic compactions in all, want 2 (tried again once)", got)
	}
}
