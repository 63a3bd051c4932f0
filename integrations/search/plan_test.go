package search

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPrefixBudget: the prefixes of one query together expand to at most
// maxExpansions words, counted over every part.
func TestPrefixBudget(t *testing.T) {
	ix := openTest(t, t.TempDir())
	var words []string
	for i := range 3000 {
		words = append(words, fmt.Sprintf("ab%04d", i))
	}
	// Two parts: a segment and the buffer, each with every word.
	ix.Add(userA, Doc{ID: "d1", Kind: "email", Text: strings.Join(words, " ")})
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	ix.Add(userA, Doc{ID: "d2", Kind: "email", Text: strings.Join(words, " ")})
	cases := []struct {
		prefixes int
		want     int
	}{
		{1, 2 * 3000},
		{8, 8 * 2 * 3000},
		{30, 30 * 2 * (maxExpansions / 60)},
		{100, maxExpansions},
	}
	for _, tc := range cases {
		var kids []Node
		for range tc.prefixes {
			kids = append(kids, Term{Field: FieldAny, Text: "ab", Prefix: true})
		}
		u, _ := ix.getUser(userA, false)
		u.mu.RLock()
		r := newRanker(u.parts)
		q := And{Children: kids}
		root, err := newPlanner(u.parts, &r, q).build(q, 0)
		u.mu.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, k := range root.kids {
			for _, refs := range k.refs {
				got += len(refs)
			}
		}
		if got != tc.want {
			t.Errorf("%d prefixes: %d expansions, want %d", tc.prefixes, got, tc.want)
		}
		// The query still answers: the words the budget reached match.
		res := search(t, ix, userA, Request{Query: And{Children: kids}})
		if res.Total != 2 {
			t.Errorf("%d prefixes: total %d, want 2", tc.prefixes, res.Total)
		}
	}
}

// TestQueryTimeUsesClock: the time queries took comes from Config.Now.
func TestQueryTimeUsesClock(t *testing.T) {
	var mu sync.Mutex
	now := day("2026-01-01")
	var took []time.Duration
	ix := openTest(t, t.TempDir(), func(c *Config) {
		c.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Millisecond); return now }
		c.OnQuery = func(d time.Duration) { mu.Lock(); defer mu.Unlock(); took = append(took, d) }
	})
	ix.Add(userA, handDocs()...)
	for range 3 {
		search(t, ix, userA, Request{Query: qterm("budget")})
	}
	// The flusher's ticks read the clock too, and one may fall within a
	// query: each query took whole steps of the clock, at least one.
	mu.Lock()
	took = slices.Clone(took)
	mu.Unlock()
	var sum time.Duration
	for _, d := range took {
		if d < time.Millisecond || d%time.Millisecond != 0 {
			t.Errorf("a query took %v, want whole milliseconds of the test's clock", d)
		}
		sum += d
	}
	if st := ix.Stats(); st.Queries != 3 || len(took) != 3 || st.QueryNanos != int64(sum) {
		t.Errorf("queries %d (%d reported) taking %d ns, want 3 taking %d", st.Queries, len(took), st.QueryNanos, sum)
	}
}
