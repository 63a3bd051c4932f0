package search

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestHelpersSamePage: a search whose parts are shared with helpers
// answers as one goroutine reading them in turn: the same hits with the
// same scores in the same order, the same total and cursor, and the same
// next pages, for words, phrases, exclusions, a long Or, one record, id
// filters and the date order.
func TestHelpersSamePage(t *testing.T) {
	ix := pruneIndex(t, false)
	u, err := ix.getUser(userA, false)
	if err != nil || len(searchable(u)) < 4 {
		t.Fatalf("want an index of 4 parts or more: %v", err)
	}
	var wide []Node
	for _, w := range wideWords {
		wide = append(wide, qterm(w))
	}
	queries := map[string]Node{"40 words": Or{Children: wide}}
	for _, q := range []string{"free", "mailing list", `"click here"`, "money -free", "linux OR windows", "unsub*", "from:yahoo"} {
		n, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		queries[q] = n
	}
	some := []string{}
	for _, h := range search(t, ix, userA, Request{Query: queries["free"], Limit: 100}).Hits[:40] {
		some = append(some, h.ID)
	}
	reqs := map[string]Request{"": {}, "record": {RecordID: "rec-2"}, "in": {InIDs: some}, "nin": {NinIDs: some},
		"date": {Sort: SortDate}, "limit 1": {Limit: 1}, "limit 100": {Limit: 100}}
	for name, q := range queries {
		for rname, base := range reqs {
			req := base
			req.Query = q
			for page := 0; page < 3; page++ {
				ix.helpers = -1
				a := search(t, ix, userA, req)
				ix.helpers = 3
				b := search(t, ix, userA, req)
				if a.Total != b.Total || a.TotalIsLowerBound != b.TotalIsLowerBound || a.NextCursor != b.NextCursor ||
					!slices.Equal(scored(a), scored(b)) {
					t.Fatalf("%s (%s) page %d: alone %d hits of %d, with helpers %d of %d", name, rname, page,
						len(a.Hits), a.Total, len(b.Hits), b.Total)
				}
				if a.NextCursor == "" {
					break
				}
				req.Cursor = a.NextCursor
			}
		}
	}
	// Over its budget, with helpers as alone: refused whole.
	ix.cfg.MaxPostings = 1000
	for _, h := range []int{-1, 3} {
		ix.helpers = h
		if _, err := ix.Search(userA, Request{Query: queries["40 words"]}); !errors.Is(err, ErrTooBroad) {
			t.Errorf("helpers %d: %v, want ErrTooBroad", h, err)
		}
	}
}

// TestHelpersOnlyAlone: a search starts helpers only while it is the
// only one running, with parts to share and words common enough; a
// helper takes no part once another search has begun, leaving them all
// to the search's own goroutine.
func TestHelpersOnlyAlone(t *testing.T) {
	ix := pruneIndex(t, false)
	u, _ := ix.getUser(userA, false)
	parts := searchable(u)
	plan := func(q string) *planner {
		n, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		r := newRanker(parts)
		pl := newPlanner(parts, &r, n)
		if _, err := pl.build(n, 0); err != nil {
			t.Fatal(err)
		}
		return pl
	}
	common, rare := plan(strings.Join(wideWords, " OR ")), plan("zoning")
	// This index is small: the bound is that of the rare word's
	// postings and more.
	ix.minHelped = sum(rare.dfs) + 1
	if sum(common.dfs) < ix.minHelped {
		t.Fatalf("the 40 words have %d postings, zoning %d", sum(common.dfs), sum(rare.dfs))
	}
	ix.searches.Store(1)
	want := min(maxPartHelpers, len(parts)-1)
	if got := ix.partHelpers(parts, common); got != min(want, runtimeCPUs()-1) {
		t.Errorf("alone, common words: %d helpers, want %d", got, min(want, runtimeCPUs()-1))
	}
	if got := ix.partHelpers(parts, rare); got != 0 {
		t.Errorf("a rare word: %d helpers, want 0", got)
	}
	ix.searches.Store(2)
	if got := ix.partHelpers(parts, common); got != 0 {
		t.Errorf("another search running: %d helpers, want 0", got)
	}
	n, _ := Parse("free")
	r := newRanker(parts)
	pl := newPlanner(parts, &r, n)
	root, _ := pl.build(n, 0)
	q := &partQuery{parts: parts, root: root, r: &r, work: newBudget(context.Background(), DefaultMaxPostings)}
	pg := newPager(Request{}, 20, 'r', nil)
	ix.runParts(q, pg, true)
	if pg.total != 0 || q.next.Load() != 0 {
		t.Errorf("a helper beside another search took %d parts, found %d", q.next.Load(), pg.total)
	}
	ix.runParts(q, pg, false)
	if pg.total == 0 || int(q.next.Load()) != len(parts)+1 {
		t.Errorf("the search's own goroutine took %d of %d parts, found %d", q.next.Load()-1, len(parts), pg.total)
	}
	ix.searches.Store(0)
}

func runtimeCPUs() int { return runtime.GOMAXPROCS(0) }

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestHelperPanicIsTheCallers: a part that panics while a helper reads
// it panics the search's own goroutine, after every helper has stopped,
// as a panic on a request's goroutine does (httpx answers 500), rather
// than ending the process.
func TestHelperPanicIsTheCallers(t *testing.T) {
	ix := openTest(t, t.TempDir())
	for range 50 {
		// A part with neither a segment nor a buffer panics when read.
		q := &partQuery{parts: []*part{{}, {}, {}}, root: &plan{op: opTerm, refs: make([][]weighted, 3)},
			r: &ranker{}, work: newBudget(context.Background(), DefaultMaxPostings)}
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("evalParts over parts that panic returned")
				}
			}()
			ix.evalParts(q, newPager(Request{}, 20, 'r', nil), 2)
		}()
	}
}
