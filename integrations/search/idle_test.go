package search

import (
	"sync"
	"testing"
	"time"
)

// TestQuietFlusherAllocatesNothing: once an index with users has written
// everything, the flusher's round (every FlushAfter/4, half a second by
// default) allocates nothing, so an idle service never wakes the
// collector.
func TestQuietFlusherAllocatesNothing(t *testing.T) {
	var mu sync.Mutex
	now := day("2026-01-01")
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ix := openTest(t, t.TempDir(), func(c *Config) { c.FlushAfter = time.Hour; c.Now = clock })
	ix.Add(userA, handDocs()...)
	ix.Add(userB, handDocs()...)
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	ix.flushDue() // writes the buffers: the index is quiet from here on
	if st := ix.Stats(); st.Pending != 0 {
		t.Fatalf("after the flush: %d pending, want 0", st.Pending)
	}
	if n := testing.AllocsPerRun(100, ix.flushDue); n != 0 {
		t.Errorf("a quiet flusher round allocates %.1f times, want 0", n)
	}
}

// TestMergeGate: the merger looks on every kick and on a tick unless the
// last tick found the index quiet and nothing was added since.
func TestMergeGate(t *testing.T) {
	t0, t1 := day("2026-01-01"), day("2026-01-02")
	var g mergeGate
	steps := []struct {
		name        string
		tick, quiet bool
		last        time.Time
		want        bool
	}{
		{"first tick", true, true, t0, true},
		{"a tick with nothing added", true, true, t0, false},
		{"another", true, true, t0, false},
		{"a kick (segments written)", false, true, t0, true},
		{"the tick after a kick", true, true, t0, true},
		{"then idle again", true, true, t0, false},
		{"a tick after an add", true, true, t1, true},
		{"idle", true, true, t1, false},
	}
	for _, s := range steps {
		if got := g.due(s.tick, s.last, s.quiet); got != s.want {
			t.Errorf("%s: due %v, want %v", s.name, got, s.want)
		}
	}
	// A tick while adds are still arriving (not quiet) does not make the
	// gate idle: the next tick looks again.
	g = mergeGate{}
	g.due(true, t0, false)
	if !g.due(true, t0, true) {
		t.Error("a tick after a busy tick: not due, want due")
	}
}
