package search

import (
	"fmt"
	"strings"
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

// TestProximityNotForLists: a query of more than maxProximityTerms words
// is a list, not a sentence: it scores exactly as without proximity,
// while a short one does not.
func TestProximityNotForLists(t *testing.T) {
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	words := []string{"wind", "tunnel", "heated", "model", "aircraft", "speed", "high", "quiet", "tested", "today", "wing", "flap", "rudder"}
	docs := []Doc{{ID: "a", Kind: "email", Text: "the wind tunnel tested a heated model of a high speed aircraft, quiet today, wing flap rudder", Date: date}}
	for i := range 6 {
		docs = append(docs, Doc{ID: fmt.Sprint("f", i), Kind: "email", Text: "nothing of that kind at all", Date: date})
	}
	ix := openTest(t, t.TempDir())
	ix.Add(userA, docs...)
	score := func(q string, prox bool) float64 {
		ix.noProximity = !prox
		n, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		res := search(t, ix, userA, Request{Query: n})
		if len(res.Hits) != 1 {
			t.Fatalf("%s: %d hits", q, len(res.Hits))
		}
		return res.Hits[0].Score
	}
	long := strings.Join(words, " OR ")
	if with, without := score(long, true), score(long, false); with != without {
		t.Errorf("%d words: %v with proximity, %v without; want the same", len(words), with, without)
	}
	short := strings.Join(words[:5], " ")
	if with, without := score(short, true), score(short, false); with <= without {
		t.Errorf("5 words: %v with proximity, %v without; want more with", with, without)
	}
}

// TestProximityLangAlternatives: the terms one word stands for in the
// user's languages (expandLangs) are one word to proximity. "Häuser" is
// hauser in English and haus in German; an item holding both side by
// side gains nothing from a query of that one word, as a one-word query
// gains nothing anywhere, while two words of the query side by side
// still do.
func TestProximityLangAlternatives(t *testing.T) {
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	docs := []Doc{
		{ID: "both", Kind: "email", Text: "the hauser haus list was sent on monday with the wind report", Date: date},
		{ID: "german", Kind: "email", Title: langMails[0].title, Text: langMails[0].text, Date: date},
	}
	for i := range 8 {
		docs = append(docs, Doc{ID: fmt.Sprint("filler", i), Kind: "email", Text: "nothing of that kind at all today", Date: date})
	}
	ix := openTest(t, t.TempDir())
	if err := ix.Add(userA, docs...); err != nil {
		t.Fatal(err)
	}
	score := func(q string, prox bool) float64 {
		t.Helper()
		ix.noProximity = !prox
		n, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		res := search(t, ix, userA, Request{Query: n})
		for _, h := range res.Hits {
			if h.ID == "both" {
				return h.Score
			}
		}
		t.Fatalf("%s: item both not found in %v", q, hitScores(res))
		return 0
	}
	if with, without := score("Häuser", true), score("Häuser", false); with != without {
		t.Errorf("Häuser: %v with proximity, %v without; want the same (one word)", with, without)
	}
	if with, without := score("Häuser list", true), score("Häuser list", false); with <= without {
		t.Errorf("Häuser list: %v with proximity, %v without; want more with (two words side by side)", with, without)
	}
}
