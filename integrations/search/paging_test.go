package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPagingWhileIndexChanges pages through a relevance order while the
// index changes between pages: documents added (which changes every
// statistic BM25F uses), buffers flushed, segments merged, documents
// deleted. Each matching id is on exactly one page, and a deleted one
// never comes after its deletion.
func TestPagingWhileIndexChanges(t *testing.T) {
	quarterly := func(i int) Doc {
		return Doc{ID: fmt.Sprintf("q%02d", i), Kind: "email", Title: fmt.Sprintf("note %d", i),
			Text: strings.Repeat("filler ", i%9) + strings.Repeat("quarterly ", 1+i%4) + fmt.Sprintf("tag%d", i),
			Date: day("2026-01-01").Add(time.Duration(i%5) * time.Hour)}
	}
	unrelated := func(step, i int) Doc {
		return Doc{ID: fmt.Sprintf("u%d-%02d", step, i), Kind: "email", Title: "lunch plans for friday",
			Text: strings.Repeat("something else entirely ", 1+i%6), Date: day("2026-02-01")}
	}
	changes := []struct {
		name   string
		change func(t *testing.T, ix *Index, step int, seen []string) []string // returns ids deleted
	}{
		{"add", func(t *testing.T, ix *Index, step int, _ []string) []string {
			for i := range 40 {
				ix.Add(userA, unrelated(step, i))
			}
			return nil
		}},
		{"add and flush", func(t *testing.T, ix *Index, step int, _ []string) []string {
			for i := range 40 {
				ix.Add(userA, unrelated(step, i))
			}
			if err := ix.Flush(); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{"add, flush and merge", func(t *testing.T, ix *Index, step int, _ []string) []string {
			for i := range 40 {
				ix.Add(userA, unrelated(step, i))
			}
			if err := ix.Flush(); err != nil {
				t.Fatal(err)
			}
			waitMerged(t, ix)
			return nil
		}},
		{"delete unseen and seen", func(t *testing.T, ix *Index, step int, seen []string) []string {
			var gone []string
			for i := range 40 {
				id := quarterly(i).ID
				if !slices.Contains(seen, id) && i%7 == step%7 || i == step {
					gone = append(gone, id)
				}
			}
			gone = append(gone, seen[len(seen)-1]) // the cursor's own document
			ix.Delete(userA, gone...)
			for i := range 40 {
				ix.Add(userA, unrelated(step, i))
			}
			return gone
		}},
	}
	queries := map[string]Node{
		"term":   qterm("quarterly"),
		"prefix": qprefix("quarter"),
		"phrase": Or{Children: []Node{qphrase(FieldText, "quarterly", "quarterly"), qterm("quarterly")}},
	}
	for name, q := range queries {
		for _, tc := range changes {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				ix := openTest(t, t.TempDir(), func(c *Config) { c.MergeFactor = 2 })
				for i := range 40 {
					ix.Add(userA, quarterly(i))
				}
				if err := ix.Flush(); err != nil {
					t.Fatal(err)
				}
				var seen, deleted []string
				cursor := ""
				for step := 0; step < 10; step++ {
					res := search(t, ix, userA, Request{Query: q, Limit: 10, Cursor: cursor})
					for _, id := range hitIDs(res) {
						if slices.Contains(seen, id) {
							t.Errorf("step %d: %s again", step, id)
						}
						if slices.Contains(deleted, id) {
							t.Errorf("step %d: %s found after its deletion", step, id)
						}
						seen = append(seen, id)
					}
					if res.NextCursor == "" {
						break
					}
					cursor = res.NextCursor
					deleted = append(deleted, tc.change(t, ix, step, seen)...)
				}
				for i := range 40 {
					id := quarterly(i).ID
					if !slices.Contains(seen, id) && !slices.Contains(deleted, id) {
						t.Errorf("%s never found", id)
					}
				}
			})
		}
	}
}

// TestCursorOfAnotherQuery: a relevance cursor carries one weight per
// query term, so one handed to a query of another shape is refused.
func TestCursorOfAnotherQuery(t *testing.T) {
	ix := openTest(t, t.TempDir())
	for i := range 30 {
		ix.Add(userA, Doc{ID: fmt.Sprintf("d%02d", i), Kind: "email", Text: "alpha beta"})
	}
	res := search(t, ix, userA, Request{Query: qterm("alpha"), Limit: 10})
	if res.NextCursor == "" {
		t.Fatal("no cursor")
	}
	two := And{Children: []Node{qterm("alpha"), qterm("beta")}}
	if _, err := ix.Search(userA, Request{Query: two, Limit: 10, Cursor: res.NextCursor}); err != ErrBadCursor {
		t.Errorf("got %v, want %v", err, ErrBadCursor)
	}
	if _, err := ix.Search(userA, Request{Query: qterm("alpha"), Limit: 10, Sort: SortDate, Cursor: res.NextCursor}); err != ErrBadCursor {
		t.Errorf("other sort: got %v, want %v", err, ErrBadCursor)
	}
}
