package slack_test

import (
	"testing"
	"time"

	"searchsvc/integrations/slack/slacktest"
)

// BenchmarkSyncerSlack10000Messages syncs 20 conversations of 500
// messages each (and 2,000 thread replies) from the fake through the real
// Syncer into a real store (ms/first-sync); the second sync, with nothing
// new, must cost one history call per conversation and no thread read.
func BenchmarkSyncerSlack10000Messages(b *testing.B) {
	opts := slacktest.Generate(20, 500)
	b.ReportAllocs()
	var first, history, replies, lists, items float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := newSyncRig(b, opts)
		b.StartTimer()
		t0 := time.Now()
		r.fx.Sync(r.rec)
		first += float64(time.Since(t0).Microseconds()) / 1e3
		l1, h1, r1, _ := r.calls()
		items = float64(r.fx.Count(r.rec))
		if items != 12000 {
			b.Fatalf("first sync: got %v items, want 12,000", items)
		}
		r.fx.Clock.Advance(time.Hour)
		r.fx.Sync(r.rec)
		l2, h2, r2, _ := r.calls()
		lists += float64(l2 - l1)
		history += float64(h2 - h1)
		replies += float64(r2 - r1)
	}
	n := float64(b.N)
	b.ReportMetric(first/n, "ms/first-sync")
	b.ReportMetric(items, "items")
	b.ReportMetric(lists/n, "lists/second-sync")
	b.ReportMetric(history/n, "history-calls/second-sync")
	b.ReportMetric(replies/n, "replies-calls/second-sync")
}
