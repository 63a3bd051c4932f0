package search

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		k    int
		want int
	}{
		{"report", "report", 2, 0},
		{"reprot", "report", 2, 1}, // a swap is one edit
		{"rport", "report", 2, 1},
		{"repoort", "report", 2, 1},
		{"repirt", "report", 2, 1},
		{"numbres", "number", 2, 2},
		{"kitten", "sitting", 2, 3}, // more than k: k+1
		{"a", "abcd", 2, 3},
		{"café", "cafe", 2, 1}, // letters, not bytes
		{"ab", "ba", 1, 1},
		{"", "ab", 2, 2},
	}
	var ed editor
	for _, tc := range tests {
		ed.set(tc.a)
		if got := ed.distance([]byte(tc.b), tc.k); got != tc.want {
			t.Errorf("distance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.k, got, tc.want)
		}
	}
}

func TestParseFuzzy(t *testing.T) {
	tests := []struct {
		q    string
		want Node
	}{
		{"reprot~", Term{Field: FieldAny, Text: "reprot", Fuzzy: 1}},
		{"Quartrely~", Term{Field: FieldAny, Text: "quartrely", Fuzzy: 2}}, // 9 letters
		{"meetings~", Term{Field: FieldAny, Text: "meetings", Fuzzy: 2}},   // the word's letters, not its stem's
		{"subject:bugdet~", Term{Field: FieldTitle, Text: "bugdet", Fuzzy: 1}},
		{"-bugdet~", And{Children: []Node{Not{Child: Term{Field: FieldAny, Text: "bugdet", Fuzzy: 1}}}}},
		{"e-mail~", Or{Children: []Node{Term{Field: FieldAny, Text: "email"}, Phrase{Field: FieldAny, Terms: []string{"e", "mail"}, Words: []string{"e", "mail"}}}}},
	}
	for _, tc := range tests {
		got, err := Parse(tc.q)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.q, err)
			continue
		}
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.q, got, tc.want)
		}
	}
}

// fuzzyModes builds an index of docs in each of the shapes a search
// reads: the in-memory buffer, segments, and one merged segment.
func fuzzyModes(t *testing.T, docs map[string][]Doc, check func(t *testing.T, ix *Index)) {
	for _, mode := range []string{"buffered", "segments", "merged"} {
		t.Run(mode, func(t *testing.T) {
			factor := 2
			if mode == "segments" {
				factor = 100
			}
			ix := openTest(t, t.TempDir(), func(c *Config) { c.MergeFactor = factor })
			for user, ds := range docs {
				for _, d := range ds {
					if err := ix.Add(user, d); err != nil {
						t.Fatal(err)
					}
					if mode != "buffered" {
						if err := ix.Flush(); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if mode == "merged" {
				mergeAll(t, ix)
			}
			check(t, ix)
		})
	}
}

// mergeAll merges each user's segments into one, as waitMerged does for
// an index of one user.
func mergeAll(t *testing.T, ix *Index) {
	t.Helper()
	for _, u := range ix.userList() {
		for {
			u.mu.Lock()
			for u.merging && !u.gone {
				u.mergeDone.Wait()
			}
			u.mu.Unlock()
			in := ix.pickMerge(u)
			if len(in) == 0 {
				break
			}
			if err := ix.merge(u, in); err != nil {
				t.Fatalf("merge: %v", err)
			}
		}
	}
	if got, want := ix.Stats().Segments, len(ix.userList()); got != want {
		t.Fatalf("segments: got %d, want %d", got, want)
	}
}

func TestFuzzyQueries(t *testing.T) {
	tests := []struct {
		q    string
		want []string
	}{
		{"reprot~", []string{"d1", "d2", "d5"}},
		{"rport~", []string{"d1", "d2", "d5"}},
		{"quartrely~", []string{"d1", "d2", "d5"}},
		{"qaurtelry~", []string{"d1", "d2", "d5"}}, // two edits in a word of 8 letters or more
		{"bugdet~", []string{"d3", "d4"}},
		{"bugdet~ -recipt~", []string{"d3"}},
		{"subject:bugdet~", []string{"d4"}},
		{"repo~", []string{}},   // two edits from report: a short word has one
		{"xeport~", []string{}}, // the first letter is kept
		{"reprot", []string{}},  // without ~ the word as typed
		{"qaurtelry~ AND numbres~", []string{"d1", "d2"}},
	}
	fuzzyModes(t, map[string][]Doc{userA: handDocs()}, func(t *testing.T, ix *Index) {
		for _, tc := range tests {
			q, err := Parse(tc.q)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.q, err)
			}
			res := search(t, ix, userA, Request{Query: q})
			if got := sorted(hitIDs(res)); !slices.Equal(got, tc.want) || res.Total != len(tc.want) {
				t.Errorf("%q: got %v (total %d), want %v", tc.q, got, res.Total, tc.want)
			}
		}
	})
}

func TestFuzzyHighlight(t *testing.T) {
	q, err := Parse("reprot~")
	if err != nil {
		t.Fatal(err)
	}
	_, matched := Highlight("The quarterly reports, and a repast.", q)
	if !slices.Equal(matched, []string{"reports"}) {
		t.Errorf("matched %q, want [reports]", matched)
	}
}

func TestSuggest(t *testing.T) {
	resort := func(id, text string) Doc {
		return Doc{ID: id, RecordID: "r1", Integration: "gmail", Kind: "email", Text: text, Date: day("2026-11-01")}
	}
	docs := map[string][]Doc{
		userA: append(handDocs(), resort("d6", "A resort by the sea."), resort("d7", "free software"),
			resort("d8", "Monte Carlo"), resort("d9", "money"), resort("d10", "more money")),
		userB: {
			resort("b1", "The resort is full."), resort("b2", "Another resort."),
			resort("b3", "resort fees"), resort("b4", "A report."),
		},
	}
	tests := []struct {
		user, q, want string
	}{
		{userA, "quarterly reprot", "quarterly report"},
		{userA, "Quartely numbres", "quarterly numbers"}, // the word as the items have it
		{userA, "rexort", "report"},                      // one edit from report (3 items) and resort (1)
		{userB, "rexort", "resort"},                      // another user's index, other words
		{userA, "quarterly report", ""},                  // every word found
		{userA, `"reprot" -bugdet numbres subject:invoise`, `"reprot" -bugdet numbers subject:invoice`},
		{userA, "zzzzzz", ""}, // nothing near
		{userA, "rep", ""},    // found as typed? no: nothing within one edit starting with r
		{userA, "reprot~ numbres", "reprot~ numbers"},
		{userA, `unclosed "quote`, ""},                         // does not parse
		{"0b9f7a2e-3333-4c6e-9a57-000000000003", "reprot", ""}, // no index at all
	}
	fuzzyModes(t, docs, func(t *testing.T, ix *Index) {
		for _, tc := range tests {
			got, err := ix.Suggest(tc.user, tc.q)
			if err != nil {
				t.Fatalf("Suggest(%q): %v", tc.q, err)
			}
			if got != tc.want {
				t.Errorf("Suggest(%s, %q) = %q, want %q", tc.user[len(tc.user)-1:], tc.q, got, tc.want)
			}
		}
	})
}

// A field's word is placed where it starts, for an error as for a
// suggestion.
func TestParseFieldWordPosition(t *testing.T) {
	_, err := Parse("budget subject:a*")
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Pos != 15 || qe.Msg != "a prefix needs at least 2 characters before *" {
		t.Errorf("Parse: %v, want a prefix error at 15", err)
	}
}
