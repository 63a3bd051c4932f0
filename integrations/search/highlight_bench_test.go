package search

import (
	"testing"
	"time"
)

// BenchmarkHighlight measures what naming the matched words (Highlight,
// which GET /v1/search answers with) costs over the snippet alone
// (Snippet): the ten queries of the search figures over the corpus's
// bodies, each query asked of both in one run, which first alternating, so that a
// shared machine's load falls on both alike. ratio is Highlight's time
// over Snippet's.
func BenchmarkHighlight(b *testing.B) {
	texts := mailTexts(b)
	if len(texts) > 2000 {
		texts = texts[:2000]
	}
	var nodes []Node
	for _, q := range []string{"free", "zoning", "mailing list", "free software download", `"click here"`,
		"unsub*", "from:yahoo", "subject:money", "linux OR windows", "money -free"} {
		n, err := Parse(q)
		if err != nil {
			b.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	var snip, high time.Duration
	words := 0
	b.ResetTimer()
	snippets := func(q Node) time.Duration {
		t0 := time.Now()
		for _, s := range texts {
			Snippet(s, q)
		}
		return time.Since(t0)
	}
	highlights := func(q Node) time.Duration {
		t0 := time.Now()
		for _, s := range texts {
			_, w := Highlight(s, q)
			words += len(w)
		}
		return time.Since(t0)
	}
	round := 0
	for b.Loop() {
		for _, q := range nodes {
			// Which goes first alternates, so neither always meets the
			// caches the other warmed.
			if round++; round%2 == 0 {
				snip += snippets(q)
				high += highlights(q)
			} else {
				high += highlights(q)
				snip += snippets(q)
			}
		}
	}
	calls := float64(b.N * len(nodes) * len(texts))
	b.ReportMetric(float64(snip.Nanoseconds())/calls, "snippet-ns/text")
	b.ReportMetric(float64(high.Nanoseconds())/calls, "highlight-ns/text")
	b.ReportMetric(float64(high)/float64(snip), "ratio")
	b.ReportMetric(float64(words)/calls, "words/text")
}
