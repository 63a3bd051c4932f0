package search

import (
	"fmt"
	"slices"
	"testing"
)

func TestRelax(t *testing.T) {
	tests := []struct {
		q    string
		want string // "" when Relax declines
	}{
		{"how do i reset the router", fmt.Sprintf("%#v", AtLeast{Min: 4, Children: []Node{
			qterm("how"), qterm("do"), qterm("i"), qterm("reset"), qterm("the"), qterm("router")}})},
		{"quarterly report", ""},
		{"invoice OR receipt OR bill", ""},
		{"budget", ""},
	}
	for _, tc := range tests {
		n, err := Parse(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Relax(n)
		if s := fmt.Sprintf("%#v", got); ok != (tc.want != "") || ok && s != tc.want {
			t.Errorf("Relax(%q) = %s, %v; want %s", tc.q, s, ok, tc.want)
		}
	}
	// Exclusions and filters stay required.
	n, _ := Parse("lunch plans budget -draft kind:email")
	got, ok := Relax(n)
	and, isAnd := got.(And)
	if !ok || !isAnd || len(and.Children) != 3 {
		t.Fatalf("Relax with filters = %#v", got)
	}
	if m, _ := and.Children[0].(AtLeast); m.Min != 2 || len(m.Children) != 3 {
		t.Errorf("most: %#v", and.Children[0])
	}
	if _, ok := and.Children[1].(Not); !ok {
		t.Errorf("the exclusion: %#v", and.Children[1])
	}
}

func TestSearchRelaxed(t *testing.T) {
	fuzzyModes(t, map[string][]Doc{userA: handDocs()}, func(t *testing.T, ix *Index) {
		q := func(s string) Node {
			n, err := Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		// Every word: d2 alone. Most (3 of 4): d1 and d2.
		four := q("quarterly report numbers lunch")
		res := search(t, ix, userA, Request{Query: four})
		if got := hitIDs(res); !slices.Equal(got, []string{"d2"}) || res.Relaxed {
			t.Fatalf("every word: %v relaxed %v", got, res.Relaxed)
		}
		res = search(t, ix, userA, Request{Query: four, Relax: true})
		if got := sorted(hitIDs(res)); !slices.Equal(got, []string{"d1", "d2"}) || res.Total != 2 || !res.Relaxed {
			t.Fatalf("relaxed: %v total %d relaxed %v", got, res.Total, res.Relaxed)
		}
		// Paged one by one, each on one page, the later page relaxed too.
		first := search(t, ix, userA, Request{Query: four, Relax: true, Limit: 1})
		second := search(t, ix, userA, Request{Query: four, Relax: true, Limit: 1, Cursor: first.NextCursor})
		if got := sorted(append(hitIDs(first), hitIDs(second)...)); !slices.Equal(got, []string{"d1", "d2"}) ||
			!first.Relaxed || !second.Relaxed || first.NextCursor == "" || second.NextCursor != "" {
			t.Fatalf("pages: %v %v, relaxed %v %v", hitIDs(first), hitIDs(second), first.Relaxed, second.Relaxed)
		}
		// Most finds no more than every word: the every-word answer.
		res = search(t, ix, userA, Request{Query: q("quarterly zeppelin airship"), Relax: true})
		if res.Total != 0 || res.Relaxed {
			t.Errorf("nothing more: total %d relaxed %v", res.Total, res.Relaxed)
		}
		// Filters stay: most of the words, in email only.
		res = search(t, ix, userA, Request{Query: q("quarterly report earnings kind:entry"), Relax: true})
		if got := hitIDs(res); !slices.Equal(got, []string{"d5"}) || res.Relaxed {
			t.Errorf("with kind: %v relaxed %v", got, res.Relaxed)
		}
		res = search(t, ix, userA, Request{Query: q("quarterly report earnings kind:email"), Relax: true})
		if got := sorted(hitIDs(res)); !slices.Equal(got, []string{"d1", "d2"}) || !res.Relaxed {
			t.Errorf("with kind:email: %v relaxed %v", got, res.Relaxed)
		}
	})
}
