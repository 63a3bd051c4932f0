package search

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// wideWords are the 40 words of the 40-word Or of the answers benchmark
// (BenchmarkAnswers in the root package).
var wideWords = strings.Fields(`money free linux windows software download email list click here
	business offer price order people report internet market credit company
	server kernel package debian python network security update version release
	mailing subscribe remove website million income program system user file`)

// corpusIndex indexes the corpus's first n mails in several segments and
// the buffer, with some deleted, as a user's index is after a while.
func corpusIndex(t *testing.T, n int) *Index {
	t.Helper()
	docs := corpusMails(t)
	docs = docs[:min(n, len(docs))]
	ix := openTest(t, t.TempDir(), func(c *Config) { c.MergeFactor = 100 })
	for i := 0; i < len(docs); i += 700 {
		if err := ix.Add(userA, docs[i:min(i+700, len(docs))]...); err != nil {
			t.Fatal(err)
		}
		if i+700 < len(docs) {
			ix.Flush()
		}
	}
	for i := 0; i < len(docs); i += 97 {
		ix.Delete(userA, docs[i].ID)
	}
	return ix
}

// nested is the Or of kids as a chain of Ors of two, which the index
// merges as sets, pairwise: the exhaustive reference of a dense Or, with
// the same terms in the same order.
func nested(kids []Node) Node {
	if len(kids) == 1 {
		return kids[0]
	}
	return Or{Children: []Node{kids[0], nested(kids[1:])}}
}

// TestOrDenseSameRanking: an Or of many children, accumulated densely,
// answers as the same Or merged pairwise does: the same hits with the
// same scores, the same total, page after page through the cursor.
func TestOrDenseSameRanking(t *testing.T) {
	ix := corpusIndex(t, 4000)
	var wide []Node
	for _, w := range wideWords {
		wide = append(wide, qterm(w))
	}
	mixed := []Node{
		qterm("zoning"), qprefix("unsub"), Phrase{Field: FieldAny, Terms: []string{qword("click"), qword("here")}},
		qfield(FieldTitle, "money"), And{Children: []Node{qterm("free"), qterm("software")}},
		qfield(FieldFrom, "yahoo"), Or{Children: []Node{qterm("linux"), qterm("windows")}},
		Term{Field: FieldAny, Text: qword("linux"), Fuzzy: 1},
	}
	cases := map[string][]Node{"40 words": wide, "mixed": mixed, "five": wide[:denseOr]}
	for name, kids := range cases {
		for _, sort := range []string{SortRelevance, SortDate} {
			dense := Request{Query: Or{Children: kids}, Limit: 100, Sort: sort}
			merged := dense
			merged.Query = nested(kids)
			for page := 0; page < 3; page++ {
				a, b := search(t, ix, userA, dense), search(t, ix, userA, merged)
				if len(a.Hits) == 0 {
					t.Fatalf("%s %s page %d: no hits", name, sort, page)
				}
				if a.Total != b.Total || a.NextCursor != b.NextCursor || !slices.Equal(scored(a), scored(b)) {
					t.Fatalf("%s %s page %d: dense %d hits of %d, merged %d of %d; first %v, want %v",
						name, sort, page, len(a.Hits), a.Total, len(b.Hits), b.Total, scored(a)[:3], scored(b)[:3])
				}
				if a.NextCursor == "" {
					break
				}
				dense.Cursor, merged.Cursor = a.NextCursor, b.NextCursor
			}
		}
	}
}

type scoredHit struct {
	id    string
	score float64
}

func scored(res Result) []scoredHit {
	out := make([]scoredHit, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = scoredHit{h.ID, h.Score}
	}
	return out
}

// TestOrDenseMergesNoSets: the 40-word Or reads each word's postings
// once and merges no sets pairwise, which copied the growing set once
// per word.
func TestOrDenseMergesNoSets(t *testing.T) {
	ix := corpusIndex(t, 2000)
	var kids []Node
	for _, w := range wideWords {
		kids = append(kids, qterm(w))
	}
	q := Or{Children: kids}
	u, _ := ix.getUser(userA, false)
	u.mu.RLock()
	defer u.mu.RUnlock()
	parts := searchable(u)
	r := newRanker(parts)
	root, err := newPlanner(parts, &r, q).build(q, 0)
	if err != nil {
		t.Fatal(err)
	}
	sc := &scratch{}
	defer sc.blocks.release()
	found := 0
	for i, p := range parts {
		ev := &evaluator{p: p, i: i, r: &r, sc: sc, work: newBudget(context.Background(), DefaultMaxPostings)}
		s := ev.eval(root)
		if ev.err != nil || ev.work.err != nil {
			t.Fatal(ev.err, ev.work.err)
		}
		found += len(s.docs)
		if ev.merged != 0 {
			t.Errorf("part %d: %d set entries merged for %d found, want 0", i, ev.merged, len(s.docs))
		}
	}
	if found < 500 {
		t.Errorf("found %d documents, want 500 or more", found)
	}
}
