package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestHighlight checks the words Highlight gives an item page to mark:
// each as the text writes it, once, in the order met, and the same
// snippet as Snippet's.
func TestHighlight(t *testing.T) {
	cases := []struct {
		name string
		text string
		q    Node
		want []string
	}{
		{"stems: every form as written", "She reported two Reports and one report.", qterm("report"),
			[]string{"reported", "Reports", "report"}},
		{"phrase words where the phrase is", "the quarterly report is late; quarterly figures", qphrase(FieldAny, "quarterly", "report"),
			[]string{"quarterly", "report"}},
		{"prefix", "Quartz and quarters", qprefix("quart"), []string{"Quartz", "quarters"}},
		{"excluded words are not given", "draft of the budget", And{Children: []Node{qterm("budget"), Not{Child: qterm("draft")}}},
			[]string{"budget"}},
		{"title-only fields are not given", "budget talk", qfield(FieldTitle, "budget"), []string{}},
		{"markup stays text", `Quokka <img src=x onerror="x()"> is not HTML`, qterm("quokka"), []string{"Quokka"}},
		{"nothing matches", "Hello there.", qterm("zebra"), []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs, words := Highlight(tc.text, tc.q)
			if !slices.Equal(words, tc.want) {
				t.Errorf("words: got %q, want %q", words, tc.want)
			}
			if got, want := fragString(fs), fragString(Snippet(tc.text, tc.q)); got != want {
				t.Errorf("snippet: got %q, want Snippet's %q", got, want)
			}
		})
	}
}

// TestHighlightBounded checks that at most MaxMatched words come back and
// none longer than maxMatchedBytes.
func TestHighlightBounded(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "word%03d ", i)
	}
	b.WriteString("word" + strings.Repeat("x", 100))
	_, words := Highlight(b.String(), qprefix("word"))
	if len(words) != MaxMatched || words[0] != "word000" || words[MaxMatched-1] != fmt.Sprintf("word%03d", MaxMatched-1) {
		t.Errorf("got %d words %q, want the first %d", len(words), words, MaxMatched)
	}
	_, words = Highlight("word"+strings.Repeat("x", 100)+" wordy", qprefix("word"))
	if !slices.Equal(words, []string{"wordy"}) {
		t.Errorf("a long match: got %q, want only wordy", words)
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
