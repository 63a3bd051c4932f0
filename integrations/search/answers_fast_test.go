package search

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// TestSkipStoredCopiesNothing: walking past the stored records before a
// hit's own in its block splits the block and copies nothing.
func TestSkipStoredCopiesNothing(t *testing.T) {
	a := appendStored(nil, &Doc{Title: "a title", From: "ann@example.org", Text: strings.Repeat("text ", 300), Thread: "t1"})
	b := appendStored(nil, &Doc{Title: "another", From: "bob@example.org", Text: "short"})
	block := append(append(append([]byte{}, a...), b...), noStored...)
	rec, rest, err := skipStored(block)
	if err != nil || !bytes.Equal(rec, a) || !bytes.Equal(rest, block[len(a):]) {
		t.Fatalf("skipStored: rec %d bytes, rest %d bytes, %v; want %d, %d, nil", len(rec), len(rest), err, len(a), len(block)-len(a))
	}
	allocs := testing.AllocsPerRun(100, func() {
		for b := block; len(b) > 0; {
			_, b, _ = skipStored(b)
		}
	})
	if allocs != 0 {
		t.Errorf("skipStored allocates %.0f times a block, want 0", allocs)
	}
}

// pairedWide is the 40-word Or with each word an Or of two, as a query is
// once its words have stems in the user's other languages
// (expandLangs): a word, or it and the next word of wideWords.
func pairedWide() []Node {
	var kids []Node
	for i, w := range wideWords {
		if i%2 == 0 {
			kids = append(kids, Or{Children: []Node{qterm(w), qterm(wideWords[(i+1)%len(wideWords)])}})
		} else {
			kids = append(kids, qterm(w))
		}
	}
	return kids
}

// TestOrDenseOfOrs: an Or of many words, each an Or of a word's stems,
// ranks as the same Or merged pairwise does, and merges no sets: each
// stem's postings add to the one array.
func TestOrDenseOfOrs(t *testing.T) {
	ix := corpusIndex(t, 2000)
	kids := pairedWide()
	dense := Request{Query: Or{Children: kids}, Limit: 100}
	merged := dense
	merged.Query = nested(kids)
	for page := 0; page < 3; page++ {
		a, b := search(t, ix, userA, dense), search(t, ix, userA, merged)
		if len(a.Hits) == 0 || a.Total != b.Total || a.NextCursor != b.NextCursor || !slices.Equal(scored(a), scored(b)) {
			t.Fatalf("page %d: dense %d hits of %d, merged %d of %d", page, len(a.Hits), a.Total, len(b.Hits), b.Total)
		}
		if a.NextCursor == "" {
			break
		}
		dense.Cursor, merged.Cursor = a.NextCursor, b.NextCursor
	}
	if n := mergedEntries(t, ix, Or{Children: kids}); n != 0 {
		t.Errorf("%d set entries merged, want 0", n)
	}
}

// mergedEntries evaluates q over userA's parts and returns the set
// entries its evaluators merged pairwise (evaluator.merged).
func mergedEntries(t *testing.T, ix *Index, q Node) int {
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
	sc := &scratch{}
	defer sc.blocks.release()
	merged := 0
	for i, p := range parts {
		ev := &evaluator{p: p, i: i, r: &r, sc: sc, work: newBudget(context.Background(), DefaultMaxPostings)}
		s := ev.eval(root)
		if ev.err != nil || ev.work.err != nil {
			t.Fatal(ev.err, ev.work.err)
		}
		ev.release(s)
		merged += ev.merged
	}
	return merged
}

// TestHighlighterAsHighlight: a Highlighter marks each of many texts, one
// after another, as Highlight marks it alone, and reads its query once:
// a 40-word query's page of results allocates less for its snippets.
func TestHighlighterAsHighlight(t *testing.T) {
	docs := corpusMails(t)[:200]
	var wide []Node
	for _, w := range wideWords {
		wide = append(wide, qterm(w))
	}
	queries := []Node{
		Or{Children: wide},
		And{Children: []Node{qterm("free"), qprefix("soft"), Term{Field: FieldAny, Text: qword("downlaod"), Fuzzy: 1}}},
		Or{Children: []Node{Phrase{Field: FieldAny, Terms: []string{qword("click"), qword("here")}}, qfield(FieldTitle, "money"), qterm("remove")}},
	}
	for qi, q := range queries {
		hl := NewHighlighter(q)
		for _, d := range docs {
			text := storedPrefix(d.Text)
			gf, gw := hl.Highlight(text)
			wf, ww := Highlight(text, q)
			if !slices.Equal(gf, wf) || !slices.Equal(gw, ww) {
				t.Fatalf("query %d, %s: Highlighter %v %q, Highlight %v %q", qi, d.ID, gf, gw, wf, ww)
			}
		}
	}
	text := storedPrefix(docs[0].Text)
	hl := NewHighlighter(queries[0])
	once := testing.AllocsPerRun(20, func() { hl.Highlight(text) })
	each := testing.AllocsPerRun(20, func() { Highlight(text, queries[0]) })
	if once >= each {
		t.Errorf("a Highlighter allocates %.0f times a text, Highlight %.0f: want fewer", once, each)
	}
}
