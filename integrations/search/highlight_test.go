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
