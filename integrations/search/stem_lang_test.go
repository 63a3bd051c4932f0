package search

import (
	"os"
	"testing"
)

// checkVocabulary stems every word of a language's published Snowball
// vocabulary (Debian's snowball-data) and compares it with the published
// stem, word for word.
func checkVocabulary(t *testing.T, lang string, stem func(string) string) {
	t.Helper()
	dir := "/usr/share/snowball/data/" + lang + "/"
	if _, err := os.Stat(dir + "voc.txt"); err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("%s is absent in CI: .ci/run installs snowball-data", dir)
	}
	voc := readLines(t, dir+"voc.txt")
	out := readLines(t, dir+"output.txt")
	if len(voc) != len(out) || len(voc) < 20000 {
		t.Fatalf("got %d words and %d stems, want the same number, at least 20000", len(voc), len(out))
	}
	bad := 0
	for i, w := range voc {
		if got := stem(w); got != out[i] {
			bad++
			if bad <= 20 {
				t.Errorf("%s: stem(%q) = %q, want %q", lang, w, got, out[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d words stemmed differently", lang, bad, len(voc))
	}
}

func TestStemGermanVocabulary(t *testing.T)     { checkVocabulary(t, "german", stemGerman) }
func TestStemFrenchVocabulary(t *testing.T)     { checkVocabulary(t, "french", stemFrench) }
func TestStemSpanishVocabulary(t *testing.T)    { checkVocabulary(t, "spanish", stemSpanish) }
func TestStemRussianVocabulary(t *testing.T)    { checkVocabulary(t, "russian", stemRussian) }
func TestStemItalianVocabulary(t *testing.T)    { checkVocabulary(t, "italian", stemItalian) }
func TestStemPortugueseVocabulary(t *testing.T) { checkVocabulary(t, "portuguese", stemPortuguese) }
func TestStemSwedishVocabulary(t *testing.T)    { checkVocabulary(t, "swedish", stemSwedish) }
func TestStemDutchVocabulary(t *testing.T)      { checkVocabulary(t, "dutch", stemDutch) }
func TestStemGreekVocabulary(t *testing.T)      { checkVocabulary(t, "greek", stemGreek) }

// TestStemLangShortWords runs every stemmer over every word of up to four
// letters from its alphabet's trickier letters: none panics, and none
// makes a word more than four bytes longer (ß is ss).
func TestStemLangShortWords(t *testing.T) {
	alphabets := map[Lang]string{
		LangGerman: "aeuyäßnsti", LangFrench: "aeiuyëïéqsnt", LangSpanish: "aeiouáéyngs",
		LangItalian: "aeiuóqhcsno", LangDutch: "aeiyjègnsd", LangPortuguese: "aeiãõçcgsu",
		LangSwedish: "aeölstdng", LangRussian: "аеиояйнвсь", LangGreek: "αειουσςϊΆκν",
	}
	for l, alpha := range alphabets {
		letters := []rune(alpha)
		var walk func(w []rune)
		walk = func(w []rune) {
			if got := langStemmers[l](string(w)); len(got) > len(string(w))+4 {
				t.Errorf("%v: stem(%q) = %q", l, string(w), got)
			}
			if len(w) == 4 {
				return
			}
			for _, r := range letters {
				walk(append(w, r))
			}
		}
		walk(nil)
	}
}
