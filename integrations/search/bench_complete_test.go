package search

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// completePrefixes are what a person has typed when GET
// /v1/search/suggest is asked: a word's first letters, from two (the
// most entries to read) to five, alone or after other words.
var completePrefixes = []string{"fr", "re", "mo", "un", "cl", "mon", "soft", "zon", "linu", "free mo", "click he", "inter"}

// BenchmarkComplete times the completions while typing (GET
// /v1/search/suggest, docs/search.md, "Suggestions while typing") over
// the shared index of benchMails mails: the median and the slowest of
// completePrefixes, each a whole Complete call (senders, titles and
// words), by the clock and by this thread's CPU. The aim is 5 ms at
// 100,000 items.
func BenchmarkComplete(b *testing.B) {
	bb := buildBig(b)
	ix, err := Open(Config{Dir: bb.dir, Vault: testVault})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	for _, q := range completePrefixes {
		got, err := ix.Complete(ctx, userA, q) // and warm the cache
		if testing.Verbose() {
			b.Logf("%q: %q", q, got)
		}
		if err != nil || len(got) == 0 || len(got) > MaxCompletions {
			b.Fatalf("Complete(%q) = %d completions, %v; want 1 to %d", q, len(got), err, MaxCompletions)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := len(completePrefixes)
	wall, cpu := make([]time.Duration, n), make([]time.Duration, n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i, q := range completePrefixes {
			start, cpuStart := time.Now(), threadCPU()
			if _, err := ix.Complete(ctx, userA, q); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(start)
			cpu[i] += threadCPU() - cpuStart
		}
	}
	b.StopTimer()
	ms := func(d []time.Duration) []float64 {
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v) / float64(b.N) / 1e6
		}
		return out
	}
	median, slowest := medianMax(ms(wall))
	b.ReportMetric(median, "suggest-median-ms")
	b.ReportMetric(slowest, "suggest-slowest-ms")
	median, slowest = medianMax(ms(cpu))
	b.ReportMetric(median, "suggest-cpu-median-ms")
	b.ReportMetric(slowest, "suggest-cpu-slowest-ms")
	b.ReportMetric(float64(bb.mails), "mails")
}
