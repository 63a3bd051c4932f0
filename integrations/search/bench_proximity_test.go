package search

import (
	"runtime"
	"testing"
	"time"
)

// proximityQueries are questions and phrases typed as sentences, each
// OR'ed as a natural-language search relaxes them, over the shared
// corpus: the queries whose cost proximity adds to.
var proximityQueries = []string{
	"free software download",
	"how do i unsubscribe from this mailing list",
	"what is the price of the software",
	"click here to be removed",
	"linux kernel security update",
	"make money fast working from home",
	"the best mortgage rates",
	"spam filter for my mail server",
}

// BenchmarkProximityCost reports the CPU a query takes with proximity
// (docs/search.md, "Ranking and freshness") and without it, over the
// shared corpus indexed once, the two runs of each query interleaved so
// that the load of the machine weighs on both alike; proximity-% is what
// proximity adds. The query's words are OR'ed, so every item with one of
// them is scored: the most proximity can cost.
func BenchmarkProximityCost(b *testing.B) {
	docs := corpusMails(b)
	ix, err := Open(Config{Dir: b.TempDir(), Vault: testVault, FlushAfter: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Add(userA, docs...); err != nil {
		b.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		b.Fatal(err)
	}
	var qs []Node
	for _, s := range proximityQueries {
		var or Or
		Analyze(s, func(t Token) { or.Children = append(or.Children, Term{Field: FieldAny, Text: t.Term}) })
		qs = append(qs, or)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu [2]time.Duration
	n := 0
	for range b.N {
		for range 20 {
			for _, q := range qs {
				for i, px := range []bool{true, false} {
					ix.noProximity = !px
					start := threadCPU()
					if _, err := ix.Search(userA, Request{Query: q, Limit: 20}); err != nil {
						b.Fatal(err)
					}
					cpu[i] += threadCPU() - start
				}
				n++
			}
		}
	}
	with, without := float64(cpu[0].Microseconds())/float64(n), float64(cpu[1].Microseconds())/float64(n)
	b.ReportMetric(float64(len(docs)), "items")
	b.ReportMetric(with, "cpu-µs/query")
	b.ReportMetric(without, "cpu-µs/query-without")
	b.ReportMetric(100*(with-without)/without, "proximity-%")
}
