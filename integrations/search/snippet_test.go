package search

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func fragString(fs []Fragment) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Match {
			b.WriteString("[" + f.Text + "]")
		} else {
			b.WriteString(f.Text)
		}
	}
	return b.String()
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("filler words here and there. ", 30)
	cases := []struct {
		name string
		text string
		q    Node
		want string
	}{
		{"short text, one match", "Here are the numbers for the quarterly report.", qterm("quarterly"),
			"Here are the numbers for the [quarterly] report."},
		{"stem matches other forms", "She reported two reports.", qterm("report"),
			"She [reported] two [reports]."},
		{"phrase words", "the quarterly report is late", qphrase(FieldAny, "quarterly", "report"),
			"the [quarterly] [report] is late"},
		{"prefix", "Quartz and quarters", qprefix("quart"), "[Quartz] and [quarters]"},
		{"excluded words are not marked", "draft of the budget", And{Children: []Node{qterm("budget"), Not{Child: qterm("draft")}}},
			"draft of the [budget]"},
		{"title-only fields are not marked", "budget talk", qfield(FieldTitle, "budget"), "budget talk"},
		{"white space collapses", "one\n\n  two\tthree", qterm("two"), "one [two] three"},
		{"nothing matches: the start", "Hello there, nothing to see.", qterm("zebra"), "Hello there, nothing to see."},
		{"empty text", "", qterm("zebra"), ""},
	}
	parsed := []struct{ name, text, q, want string }{
		{"a phrase's words only where the phrase is", "Out of the box: I am out of office, most of it.", `"out of office"`,
			"Out of the box: I am [out] [of] [office], most of it."},
		{"a hyphenated word, not its lone part", "Send an e-mail, or email, to e at home.", "e-mail",
			"Send an [e-mail], or [email], to e at home."},
		{"overlapping bigrams mark their whole run", "ようこそ東京都へ。京都も。", "東京都", "ようこそ[東京都]へ。京都も。"},
		{"a word and a phrase of it", "report the quarterly report", `report "quarterly report"`, "[report] the [quarterly] [report]"},
	}
	for _, tc := range parsed {
		q, err := Parse(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			text string
			q    Node
			want string
		}{tc.name, tc.text, q, tc.want})
	}
	for _, tc := range cases {
		if got := fragString(Snippet(tc.text, tc.q)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}

	// A match deep in a long text: cut on both sides, at most about
	// SnippetChars characters, the match inside.
	text := long + "the secret zebra crossing " + long
	got := Snippet(text, qterm("zebra"))
	s := fragString(got)
	if !strings.HasPrefix(s, ellipsis) || !strings.HasSuffix(s, ellipsis) || !strings.Contains(s, "[zebra]") {
		t.Errorf("long text: got %q", s)
	}
	if n := utf8.RuneCountInString(s) - 2; n > SnippetChars+2 {
		t.Errorf("long text: %d characters, want at most %d", n, SnippetChars)
	}
	// The best passage has the most different words, not the first match.
	text = "zebra " + long + "a zebra and a lion " + long
	s = fragString(Snippet(text, And{Children: []Node{qterm("zebra"), qterm("lion")}}))
	if !strings.Contains(s, "[zebra] and a [lion]") {
		t.Errorf("best passage: got %q", s)
	}
	// No match: the start, cut with an ellipsis.
	s = fragString(Snippet(long, qterm("zebra")))
	if !strings.HasPrefix(s, "filler") || !strings.HasSuffix(s, ellipsis) {
		t.Errorf("start of a long text: got %q", s)
	}
}

// TestSnippetUTF8 cuts texts of multi-byte characters at every length:
// every fragment stays valid UTF-8.
func TestSnippetUTF8(t *testing.T) {
	base := strings.Repeat("日本語のテキスト é ü 😀 ", 40)
	for n := 0; n < len(base); n += 7 {
		text := base[:n]
		for _, q := range []Node{qterm("zebra"), qterm("ü"), qprefix("テキ")} {
			for _, f := range Snippet(text, q) {
				if !utf8.ValidString(f.Text) && utf8.ValidString(text) {
					t.Fatalf("length %d: fragment %q is not UTF-8", n, f.Text)
				}
			}
		}
	}
}

func FuzzSnippet(f *testing.F) {
	f.Add("the quarterly report", "quarterly")
	f.Add("日本語のテキスト", "テキ")
	f.Fuzz(func(t *testing.T, text, q string) {
		node, err := Parse(q)
		if err != nil {
			return
		}
		for _, fr := range Snippet(text, node) {
			if utf8.ValidString(text) && !utf8.ValidString(fr.Text) {
				t.Fatalf("fragment %q is not UTF-8", fr.Text)
			}
		}
	})
}

// hostileText is the worst case of the old best-window search: a match
// every two bytes over the whole scanned length.
var hostileText = strings.Repeat("a ", snippetScan/2)

// TestSnippetWorkIsBounded counts the best-window search's steps on a
// text that matches everywhere: at most two per hit kept, and at most
// maxSnippetHits hits kept, whatever the length of the text.
func TestSnippetWorkIsBounded(t *testing.T) {
	for _, q := range []string{"a", "a b", `"a a"`, "a*"} {
		if q == "a*" {
			q = "aa*"
		}
		node, err := Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{hostileText, strings.Repeat("aa ", snippetScan/3), hostileText + hostileText} {
			fs, steps := snippet(text, node)
			if steps > 2*maxSnippetHits {
				t.Errorf("%q over %d bytes: %d steps, want at most %d", q, len(text), steps, 2*maxSnippetHits)
			}
			if len(fs) == 0 {
				t.Errorf("%q: no fragments", q)
			}
		}
	}
}

// BenchmarkSnippetHostile is one snippet of 256 KiB of "a " for the query
// a (a match every two bytes).
func BenchmarkSnippetHostile(b *testing.B) {
	q, _ := Parse("a")
	b.ReportAllocs()
	for b.Loop() {
		Snippet(hostileText, q)
	}
	b.ReportMetric(float64(len(hostileText)), "text-bytes")
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
