package search

import (
	"fmt"
	"testing"
	"time"
)

// TestExclusionUnscored: an exclusion's documents are found without
// being scored; the page is that of scoring them.
func TestExclusionUnscored(t *testing.T) {
	ix := openTest(t, t.TempDir())
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i, text := range []string{"money for free", "money money", "free money now", "money talks", "nothing"} {
		if err := ix.Add(userA, Doc{ID: fmt.Sprint("d", i), Kind: "email", Text: text, Date: date}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := Parse("money -free")
	if err != nil {
		t.Fatal(err)
	}
	res := search(t, ix, userA, Request{Query: n})
	if got := fmt.Sprint(hitIDs(res)); got != "[d1 d3]" {
		t.Errorf("money -free: %s, want [d1 d3]", got)
	}
	u, err := ix.getUser(userA, false)
	if err != nil {
		t.Fatal(err)
	}
	parts := searchable(u)
	r := newRanker(parts)
	free, err := newPlanner(parts, &r, Term{Field: FieldAny, Text: qword("free")}).build(Term{Field: FieldAny, Text: qword("free")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ev := &evaluator{p: parts[0], r: &r, sc: &scratch{}, work: newBudget(t.Context(), 1000)}
	if s := ev.excluded(free); len(s.docs) != 2 || s.scores != nil {
		t.Errorf("excluded(free) = %v docs, scores %v; want 2 docs, no scores", s.docs, s.scores)
	}
	if s := ev.eval(free); len(s.docs) != 2 || len(s.scores) != 2 {
		t.Errorf("eval(free) = %v docs, scores %v; want 2 docs, 2 scores", s.docs, s.scores)
	}
}
