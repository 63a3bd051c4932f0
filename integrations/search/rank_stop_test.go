package search

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestStopwordsWeighNothing: in a query with other words, a function
// word ("what") adds nothing to an item's score, however rare it is in
// the index, though it still matches; a query of function words alone is
// ranked by them.
func TestStopwordsWeighNothing(t *testing.T) {
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	docs := []Doc{
		{ID: "asks", Kind: "email", Text: "what a day", Date: date.Add(time.Hour)},
		{ID: "tunnel", Kind: "email", Text: "the wind tunnel is open", Date: date},
		{ID: "t2", Kind: "email", Text: "a tunnel again", Date: date},
	}
	for i := range 6 {
		docs = append(docs, Doc{ID: fmt.Sprint("f", i), Kind: "email", Text: "nothing of that kind at all", Date: date})
	}
	ix := openTest(t, t.TempDir())
	ix.Add(userA, docs...)
	run := func(q string) Result {
		n, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		return search(t, ix, userA, Request{Query: n})
	}
	res := run("what OR tunnel")
	if len(res.Hits) != 3 || res.Hits[1].Score <= 0 || res.Hits[2].ID != "asks" || res.Hits[2].Score != 0 {
		t.Fatalf("what OR tunnel: got %v; want the two tunnels, then asks scoring 0", hitScores(res))
	}
	res = run("what")
	if len(res.Hits) != 1 || res.Hits[0].ID != "asks" || res.Hits[0].Score <= 0 {
		t.Fatalf("what alone: got %v; want asks scoring more than 0", hitScores(res))
	}
	// The benchmark's baseline weighs it as any word: the rare "what"
	// comes first.
	ix.allWords = true
	res = run("what OR tunnel")
	if len(res.Hits) != 3 || res.Hits[0].ID != "asks" {
		t.Fatalf("every word weighed: got %v; want asks first", hitScores(res))
	}
}

// TestProximityBonus: two of the query's words side by side add
// proximityWeight·ln(1+e^-1/proximityAlpha) to an item's score, one word
// apart ln(1+e^-2/α)·weight, whatever other occurrences lie farther.
func TestProximityBonus(t *testing.T) {
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	docs := []Doc{
		{ID: "next", Kind: "email", Text: "heated model here and there heated", Date: date},
		{ID: "gap", Kind: "email", Text: "heated big model here and there", Date: date},
	}
	for i := range 6 {
		docs = append(docs, Doc{ID: fmt.Sprint("f", i), Kind: "email", Text: "nothing of that kind at all", Date: date})
	}
	ix := openTest(t, t.TempDir())
	ix.Add(userA, docs...)
	scores := func(prox bool) map[string]float64 {
		ix.noProximity = !prox
		n, err := Parse("heated model")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, h := range search(t, ix, userA, Request{Query: n}).Hits {
			out[h.ID] = h.Score
		}
		return out
	}
	with, without := scores(true), scores(false)
	for id, d := range map[string]float64{"next": 1, "gap": 2} {
		want := quantize(proximityWeight * math.Log1p(math.Exp(-d)/proximityAlpha))
		if got := with[id] - without[id]; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: bonus %v, want %v", id, got, want)
		}
	}
}
