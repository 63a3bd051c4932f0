package search

import (
	"context"
	"slices"
	"testing"
)

// pruneIndex indexes the corpus's first 3,000 mails, from two records,
// in several segments and the buffer, with some deleted.
func pruneIndex(t *testing.T, noPrune bool) *Index {
	t.Helper()
	docs := corpusMails(t)
	docs = slices.Clone(docs[:min(3000, len(docs))])
	for i := range docs {
		if i%3 == 0 {
			docs[i].RecordID = "rec-2"
		}
	}
	ix := openTest(t, t.TempDir(), func(c *Config) { c.MergeFactor = 100 })
	ix.noPrune = noPrune
	for i := 0; i < len(docs); i += 700 {
		if err := ix.Add(userA, docs[i:min(i+700, len(docs))]...); err != nil {
			t.Fatal(err)
		}
		if i+700 < len(docs) {
			ix.Flush()
		}
	}
	for i := 0; i < len(docs); i += 89 {
		ix.Delete(userA, docs[i].ID)
	}
	return ix
}

// TestPruneSameTopK: a long Or pruned (prune.go) answers as scoring
// every posting does: the same hits in the same order with the same
// scores, the same total and the same cursor, whose next pages are the
// same too, at every limit, for one record or all.
func TestPruneSameTopK(t *testing.T) {
	pruned, full := pruneIndex(t, false), pruneIndex(t, true)
	var wide, fields []Node
	for i, w := range wideWords {
		wide = append(wide, qterm(w))
		if i%4 == 0 {
			fields = append(fields, qfield(FieldTitle, w))
		} else {
			fields = append(fields, qterm(w))
		}
	}
	queries := map[string]Node{"40 words": Or{Children: wide}, "40 stemmed": Or{Children: pairedWide()},
		"fields": Or{Children: fields}, "five": Or{Children: wide[30:35]}}
	for name, q := range queries {
		for _, limit := range []int{1, 7, 20, 100} {
			for _, rec := range []string{"", "rec-2"} {
				req := Request{Query: q, Limit: limit, RecordID: rec}
				for page := 0; page < 3; page++ {
					a, b := search(t, pruned, userA, req), search(t, full, userA, req)
					if len(a.Hits) == 0 || a.Total != b.Total || a.TotalIsLowerBound != b.TotalIsLowerBound ||
						a.NextCursor != b.NextCursor || !slices.Equal(scored(a), scored(b)) {
						t.Fatalf("%s limit %d record %q page %d: pruned %d hits of %d, full %d of %d; pruned %v, full %v",
							name, limit, rec, page, len(a.Hits), a.Total, len(b.Hits), b.Total, scored(a)[:1], scored(b)[:1])
					}
					if a.NextCursor == "" {
						break
					}
					req.Cursor = a.NextCursor
				}
			}
		}
	}
}

// TestPrunePrunes: the 40-word Or at limit 20 leaves most of its
// common words' postings unscored, and the same Or sorted by date, with
// an id filter or with a phrase among its words is not pruned at all.
func TestPrunePrunes(t *testing.T) {
	ix := pruneIndex(t, false)
	var kids []Node
	for _, w := range wideWords {
		kids = append(kids, qterm(w))
	}
	q := Or{Children: kids}
	all := prunedPostings(t, ix, q, Request{Query: q, Limit: 20})
	if all < 2_000 {
		t.Errorf("%d postings left unscored, want 2,000 or more", all)
	}
	for name, req := range map[string]Request{
		"by date":  {Query: q, Limit: 20, Sort: SortDate},
		"ids":      {Query: q, Limit: 20, NinIDs: []string{"m00001"}},
		"a phrase": {Query: Or{Children: append([]Node{Phrase{Field: FieldAny, Terms: []string{qword("click"), qword("here")}}}, kids...)}, Limit: 20},
	} {
		if n := prunedPostings(t, ix, req.Query, req); n != 0 {
			t.Errorf("%s: %d postings left unscored, want 0", name, n)
		}
	}
}

// prunedPostings runs req (of query q, without a cursor) over userA's
// parts as Index.search does, and returns the postings its evaluators
// left unscored and the documents left without proximity.
func prunedPostings(t *testing.T, ix *Index, q Node, req Request) int {
	t.Helper()
	u, _ := ix.getUser(userA, false)
	u.mu.RLock()
	defer u.mu.RUnlock()
	parts := searchable(u)
	r := newRanker(parts)
	root, err := newPlanner(parts, &r, q).build(q, 0)
	if err != nil {
		t.Fatal(err)
	}
	sortByte := byte('r')
	if req.Sort == SortDate {
		sortByte = 'd'
	}
	pg := newPager(req, req.Limit, sortByte, nil)
	sc := &scratch{}
	defer sc.blocks.release()
	pruned := 0
	var near []*plan
	if sortByte == 'r' {
		near = proximityTerms(root)
	}
	for i, p := range parts {
		ev := &evaluator{p: p, i: i, r: &r, sc: sc, work: newBudget(context.Background(), DefaultMaxPostings)}
		ev.prune = prunable(root, pg, req.RecordID, p, near != nil)
		s := ev.eval(root)
		ev.proximity(near, s)
		if ev.err != nil || ev.work.err != nil {
			t.Fatal(ev.err, ev.work.err)
		}
		pg.add(p, s, req.RecordID)
		ev.release(s)
		pruned += ev.pruned
	}
	return pruned
}

// TestProximityPruneSameTopK: a query with proximity gives a document
// that cannot reach the page no proximity score (proximityBelow), and
// answers as scoring every document does: the same hits, scores, total
// and cursors, at every limit, for one record or all.
func TestProximityPruneSameTopK(t *testing.T) {
	pruned, full := pruneIndex(t, false), pruneIndex(t, true)
	and := func(ws ...string) Node {
		var kids []Node
		for _, w := range ws {
			kids = append(kids, qterm(w))
		}
		return And{Children: kids}
	}
	queries := map[string]Node{
		"linux OR windows": Or{Children: []Node{qterm("linux"), qterm("windows")}},
		"mailing list":     and("mailing", "list"),
		"free software":    and("free", "software", "download"),
		"or of and":        Or{Children: []Node{and("click", "here"), qterm("remove"), qterm("list")}},
	}
	for name, q := range queries {
		for _, limit := range []int{1, 20, 100} {
			for _, rec := range []string{"", "rec-2"} {
				req := Request{Query: q, Limit: limit, RecordID: rec, Relax: true}
				for page := 0; page < 3; page++ {
					a, b := search(t, pruned, userA, req), search(t, full, userA, req)
					if len(a.Hits) == 0 || a.Total != b.Total || a.NextCursor != b.NextCursor || !slices.Equal(scored(a), scored(b)) {
						t.Fatalf("%s limit %d record %q page %d: pruned %d hits of %d, full %d of %d",
							name, limit, rec, page, len(a.Hits), a.Total, len(b.Hits), b.Total)
					}
					if a.NextCursor == "" {
						break
					}
					req.Cursor = a.NextCursor
				}
			}
		}
		// An And of words finds too few items in this small index for
		// any to fall that far behind the page.
		if _, isAnd := q.(And); !isAnd {
			if n := prunedPostings(t, pruned, q, Request{Query: q, Limit: 20}); n == 0 {
				t.Errorf("%s: every document scored for proximity", name)
			}
		}
	}
}
