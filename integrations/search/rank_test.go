package search

import (
	"fmt"
	"testing"
	"time"
)

// TestProximity: of items holding the same query words as often, in
// texts of the same length, the one where they stand together ranks
// first, for every-word, either-word and most-words queries, and whether
// the items are in one part or several; an item with one word of the
// query gains nothing.
func TestProximity(t *testing.T) {
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	doc := func(id, text string) Doc {
		return Doc{ID: id, RecordID: "rec-1", Integration: "imap", Kind: "email", Text: text, Date: date}
	}
	// The far item is the newer: by BM25F alone it would come first.
	far := doc("far", "the heated model went to the wind tunnel while the speed of the aircraft was high today")
	far.Date = date.Add(time.Hour)
	near := doc("near", "the wind tunnel today tested a heated model of a high speed aircraft while it was quiet")
	// Fillers make the query's words rare enough to pair (proximityMinIDF).
	var fillers []Doc
	for i := range 6 {
		fillers = append(fillers, doc(fmt.Sprint("filler", i), "nothing of that kind at all"))
	}
	for _, split := range []bool{false, true} {
		ix := openTest(t, t.TempDir())
		if split {
			ix.Add(userA, append(fillers, far)...)
			ix.Flush()
			ix.Add(userA, near)
		} else {
			ix.Add(userA, append(fillers, far, near)...)
		}
		for _, q := range []string{"high speed aircraft", "high OR speed OR aircraft", "high speed aircraft wing"} {
			t.Run(fmt.Sprintf("%s/split=%v", q, split), func(t *testing.T) {
				n, err := Parse(q)
				if err != nil {
					t.Fatal(err)
				}
				res, err := ix.Search(userA, Request{Query: n, Relax: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Hits) != 2 || res.Hits[0].ID != "near" || res.Hits[1].ID != "far" || res.Hits[0].Score <= res.Hits[1].Score {
					t.Fatalf("got %v, want near then far, near scoring more", hitScores(res))
				}
			})
		}
	}
	// One word: no neighbour, no gain; ties go to the newer.
	ix := openTest(t, t.TempDir())
	ix.Add(userA, append(fillers, far, near)...)
	res, err := ix.Search(userA, Request{Query: Term{Field: FieldAny, Text: qword("aircraft")}})
	if err != nil || len(res.Hits) != 2 || res.Hits[0].ID != "far" || res.Hits[0].Score != res.Hits[1].Score {
		t.Fatalf("one word: got %v, %v; want far then near, equal scores", hitScores(res), err)
	}
}

func hitScores(res Result) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, fmt.Sprintf("%s:%.4f", h.ID, h.Score))
	}
	return out
}
