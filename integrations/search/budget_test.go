package search

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// budgetDocs are 30 documents in two segments (and so two parts): every
// one has "common", and one in ten "rare".
func budgetIndex(t *testing.T, maxPostings int) *Index {
	t.Helper()
	ix := openTest(t, t.TempDir(), func(c *Config) { c.MaxPostings = maxPostings })
	for batch := range 2 {
		var docs []Doc
		for i := range 15 {
			n := batch*15 + i
			text := "common words here"
			if n%10 == 0 {
				text += " rare"
			}
			docs = append(docs, Doc{ID: fmt.Sprintf("doc-%02d", n), Kind: "email", Text: text,
				Date: time.Date(2026, 1, 1, 0, n, 0, 0, time.UTC)})
		}
		if err := ix.Add("u1", docs...); err != nil {
			t.Fatal(err)
		}
		if err := ix.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

// TestSearchWorkBudget: a query that would read more postings than
// MaxPostings, over all its parts together, is ErrTooBroad with no
// hits, and a NOT alone counts the documents it walks; a query within
// the budget is answered whole. The index read every query to its end.
func TestSearchWorkBudget(t *testing.T) {
	ix := budgetIndex(t, 20)
	for _, tc := range []struct {
		name string
		q    Node
		want error
		hits int
	}{
		{"rare: 3 postings", qterm("rare"), nil, 3},
		{"common: 30 postings", qterm("common"), ErrTooBroad, 0},
		{"rare OR common: 33", Or{Children: []Node{qterm("rare"), qterm("common")}}, ErrTooBroad, 0},
		{"prefix com*: 30", qprefix("com"), ErrTooBroad, 0},
		{"NOT rare: 30 documents walked", Not{Child: qterm("rare")}, ErrTooBroad, 0},
		{"phrase common words: 60", qphrase(FieldAny, "common", "words"), ErrTooBroad, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ix.Search("u1", Request{Query: tc.q, Limit: 100})
			if !errors.Is(err, tc.want) || len(res.Hits) != tc.hits {
				t.Fatalf("got %d hits, %v; want %d, %v", len(res.Hits), err, tc.hits, tc.want)
			}
		})
	}
	if bad := ix.NeedsRebuild(); len(bad) != 0 {
		t.Fatalf("a spent budget marked %v for a rebuild", bad)
	}
	// The same query within a larger budget: all 30.
	big := budgetIndex(t, 1000)
	res, err := big.Search("u1", Request{Query: qterm("common"), Limit: 100})
	if err != nil || len(res.Hits) != 30 {
		t.Fatalf("common with a budget of 1,000: %d hits, %v; want 30", len(res.Hits), err)
	}
}

// TestSearchContextStops: a search whose context ended is ErrStopped,
// wrapping the context's error, with no hits; the parts are not taken
// for damaged, and the next search is answered whole. The index ran a
// search to its end whatever its caller's context said.
func TestSearchContextStops(t *testing.T) {
	ix := budgetIndex(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := ix.SearchContext(ctx, "u1", Request{Query: qterm("common"), Limit: 100})
	if !errors.Is(err, ErrStopped) || !errors.Is(err, context.Canceled) || len(res.Hits) != 0 {
		t.Fatalf("a cancelled search: %d hits, %v; want 0, ErrStopped wrapping context.Canceled", len(res.Hits), err)
	}
	if bad := ix.NeedsRebuild(); len(bad) != 0 {
		t.Fatalf("a stopped search marked %v for a rebuild", bad)
	}
	res, err = ix.SearchContext(context.Background(), "u1", Request{Query: qterm("common"), Limit: 100})
	if err != nil || len(res.Hits) != 30 {
		t.Fatalf("the next search: %d hits, %v; want 30", len(res.Hits), err)
	}
}

// TestBudgetYields: a query yields its processor once every yieldEvery
// postings it reads, and not before, so that a query woken behind it
// runs soon; it never yielded.
func TestBudgetYields(t *testing.T) {
	b := newBudget(context.Background(), 10*yieldEvery)
	yields := 0
	b.yield = func() { yields++ }
	for range 3 * yieldEvery / 1000 { // 3 × yieldEvery less a little, by lists of 1,000
		b.spend(1000)
	}
	if yields != 2 {
		t.Fatalf("after %d postings: %d yields, want 2", 3*yieldEvery/1000*1000, yields)
	}
	b.spend(yieldEvery)
	if yields != 3 {
		t.Fatalf("after one more long list: %d yields, want 3", yields)
	}
}
