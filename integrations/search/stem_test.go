package search

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"testing"
)

// The Snowball project's published vocabulary for the English stemmer,
// as Debian's snowball-data package installs it.
const (
	snowballVoc    = "/usr/share/snowball/data/english/voc.txt"
	snowballOutput = "/usr/share/snowball/data/english/output.txt"
)

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent: install the Snowball vocabulary with `apt-get install snowball-data`", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestStemSnowballVocabulary(t *testing.T) {
	voc := readLines(t, snowballVoc)
	out := readLines(t, snowballOutput)
	if len(voc) != len(out) || len(voc) < 29000 {
		t.Fatalf("got %d words and %d stems, want the same number, at least 29000", len(voc), len(out))
	}
	bad := 0
	for i, w := range voc {
		if got := Stem(w); got != out[i] {
			bad++
			if bad <= 20 {
				t.Errorf("Stem(%q) = %q, want %q", w, got, out[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d words stemmed differently", bad, len(voc))
	}
}

func TestStemTable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"reports", "report"}, {"reporting", "report"}, {"reported", "report"},
		{"running", "run"}, {"runs", "run"}, {"quarterly", "quarter"},
		{"generously", "generous"}, {"communication", "communic"},
		{"happiness", "happi"}, {"hopeful", "hope"}, {"skies", "sky"},
		{"dying", "die"}, {"news", "news"}, {"cries", "cri"}, {"ties", "tie"},
		{"agreed", "agre"}, {"feed", "feed"}, {"hoping", "hope"},
		{"consignment", "consign"}, {"yelling", "yell"}, {"sayings", "say"},
		{"by", "by"}, {"a", "a"}, {"'tis", "tis"}, {"dog's", "dog"},
		{"inning", "inning"}, {"succeeded", "succeed"}, {"national", "nation"},
		{"", ""}, {"'", "'"}, {"'''", "'"}, {"'s'", "s"}, {"yyy", "yyy"},
	}
	for _, tt := range tests {
		if got := Stem(tt.in); got != tt.want {
			t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzStem(f *testing.F) {
	for _, s := range []string{"reports", "'s'", "yyy", "generalization", "''''"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		if got := Stem(w); len(got) > len(w)+1 {
			t.Fatalf("Stem(%q) = %q, longer than the word and a letter", w, got)
		}
	})
}
