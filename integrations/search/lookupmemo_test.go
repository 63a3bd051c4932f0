package search

import (
	"fmt"
	"strings"
	"testing"
)

// TestLookupRemembered: a query asked again finds its words without
// walking the dictionary: it reads its postings and nothing else, as the
// cache's count of reads shows; a word the segment lacks is remembered
// as absent, and a remembered word answers as the first lookup did.
func TestLookupRemembered(t *testing.T) {
	ix := openTest(t, t.TempDir())
	// Proximity (rank.go) reads the positions of pairs of query words:
	// this test counts what finding the words reads.
	ix.noProximity = true
	var words []string
	for i := range 2000 {
		words = append(words, fmt.Sprintf("w%04d", i))
	}
	var docs []Doc
	for i := range 50 {
		docs = append(docs, Doc{ID: fmt.Sprintf("d%02d", i), Kind: "email", Text: strings.Join(words[i*40:i*40+40], " ")})
	}
	ix.Add(userA, docs...)
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	reads := func() uint64 { st := ix.Stats(); return st.CacheHits + st.CacheMisses }
	q := Or{Children: []Node{qterm("w0041"), qterm("w1999"), qterm("nowhere")}}
	first := search(t, ix, userA, Request{Query: q})
	before := reads()
	again := search(t, ix, userA, Request{Query: q})
	// Two postings streams and the stored fields of the two hits; no
	// dictionary block.
	if got := reads() - before; got != 4 {
		t.Errorf("the query again read %d blocks or streams, want 4 (its postings, its hits' stored fields)", got)
	}
	if fmt.Sprint(hitIDs(first), first.Total) != fmt.Sprint(hitIDs(again), again.Total) || again.Total != 2 {
		t.Errorf("again: %v of %d, first %v of %d; want d01 and d49", hitIDs(again), again.Total, hitIDs(first), first.Total)
	}
}

// TestLookupMemoMadeWhenUsed: a segment's remembered lookups take no
// memory until the segment is searched.
func TestLookupMemoMadeWhenUsed(t *testing.T) {
	ix := openTest(t, t.TempDir())
	ix.Add(userA, Doc{ID: "d1", Kind: "email", Text: "harbour plan"})
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	u, err := ix.getUser(userA, false)
	if err != nil {
		t.Fatal(err)
	}
	var seg *segment
	for _, p := range u.parts {
		if p.seg != nil {
			seg = p.seg
		}
	}
	if seg == nil || seg.memo == nil || seg.memo.slots != nil {
		t.Fatalf("an opened segment: memo %v, want one without slots yet", seg)
	}
	search(t, ix, userA, Request{Query: qterm("harbour")})
	if seg.memo.slots == nil {
		t.Error("a searched segment remembers nothing")
	}
}
