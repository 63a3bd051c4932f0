package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode"
)

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

// TestHighlighterShortcuts: a Highlighter's page of snippets, with the
// stems it remembers from one text to the next and the words it skips
// by their first letter, is the page without either, for the corpus's
// mails and queries of words, phrases, prefixes and near words.
func TestHighlighterShortcuts(t *testing.T) {
	docs := corpusMails(t)
	if len(docs) > 600 {
		docs = docs[:600]
	}
	queries := []string{"free", "mailing list", `"click here"`, "unsub*", "linux OR windows", "money -free",
		"Receive FREE money", "remove~ list", "e-mail address", "2002", "don't", "Häuser rechnung"}
	for _, q := range queries {
		n, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		hl := NewHighlighter(n)
		for _, d := range docs {
			text := storedPrefix(d.Text)
			gotF, gotW := hl.Highlight(text)
			plain := newSnippetQuery(n)
			plain.stems, plain.onlyFirsts = nil, false
			hits := plain.find(text)
			var wantF []Fragment
			if len(hits) == 0 {
				wantF = cut(text, 0, nil)
			} else {
				wantF, _ = snippetAround(text, plain, hits)
			}
			_, wantW := Highlight(text, n)
			if fmt.Sprint(gotF) != fmt.Sprint(wantF) || fmt.Sprint(gotW) != fmt.Sprint(wantW) {
				t.Fatalf("%q on %s:\n got %v %v\nwant %v %v", q, d.ID, gotF, gotW, wantF, wantW)
			}
		}
	}
}

// TestCollapse: each run of white space becomes one space, whatever
// the white space, as a rune-by-rune rebuild makes it, appended after
// what the buffer held.
func TestCollapse(t *testing.T) {
	want := func(s string) string {
		var b strings.Builder
		space := false
		for _, r := range s {
			if unicode.IsSpace(r) {
				if !space {
					b.WriteByte(' ')
				}
				space = true
				continue
			}
			space = false
			b.WriteRune(r)
		}
		return b.String()
	}
	cases := []string{"", " ", "  ", "a b", "a  b", "a\nb", "a \n\tb ", "\r\n", "x\u00a0\u00a0y", "é\u2003ü", " lead", "trail\n"}
	pieces := []string{"a", "é", " ", "  ", "\n", "\t", "\u00a0", "\u0085", "\u3000", "word", "ß"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got := string(appendCollapsed([]byte("x "), s)); got != "x "+want(s) {
			t.Fatalf("appendCollapsed(%q) = %q, want %q", s, got, "x "+want(s))
		}
	}
}
