package search

import (
	"unicode"
	"unicode/utf8"
)

// Language detection reads the start of a document (detectBytes of its
// title and text) and counts, per language, the words that are among
// its commonest (stopwords) and the letter triples typical of it
// (trigrams). Cyrillic text is Russian and Greek text Greek; Latin text
// is the language with the most stopwords, when it has enough of them and
// clearly more than English; anything else is English, the language
// documents were stemmed in before languages were detected.

// detectBytes is how much of a document detection reads.
const detectBytes = 2048

// minStopwords is the fewest stopwords a language other than English
// needs to be chosen.
const minStopwords = 2

// langStopwords are each language's commonest short words, lower-case.
var langStopwords = [numLangs]string{
	LangEnglish: "the and of to in is you that it for with this are on be have not your from was at by or will we an as if can our my has " +
		"a i no so me do he she they all but one more about up out just there what when would been get use new now here",
	LangGerman:     "der die das und ist nicht ich sie es ein eine zu den mit auf für von dem des sich auch wir ihr bei noch nach wie aber oder haben wird sind im uns einen mir bitte sehr",
	LangFrench:     "le la les et est un une des du de que qui pas pour dans sur avec ce il elle nous vous je ne au aux mais sont été votre cette mon merci",
	LangSpanish:    "el la los las y es un una de del que en por para con no se su lo como más pero al sus está son muy te mi nos gracias",
	LangItalian:    "il lo la gli le e è un una di del della che in per con non si sono ma anche come questo nel alla al ho mi ti grazie",
	LangDutch:      "de het een en van is dat niet ik je zijn op te met voor er maar ook wat bij nog aan hij we naar kan heb",
	LangPortuguese: "o a os as e é um uma de do da que em para não se por mais mas como no na foi são você obrigado",
	LangSwedish:    "och att det som en ett är på av för med inte jag till den har de om var vi men kan du hej",
}

// langTrigrams are letter triples frequent in one Latin language and rare
// in the others; each found adds a little to the language's count.
var langTrigrams = [numLangs]string{
	LangEnglish:    "the ing and ion tio ent hat tha ere his",
	LangGerman:     "sch ich ein che und der die cht ung gen eit ßen ück äch",
	LangFrench:     "ent les que ait ous eur ion tio ées été ère ais",
	LangSpanish:    "ión aci que ent ado los las ñor ien stá",
	LangItalian:    "che zio ell gli ato ion per are ere tto",
	LangDutch:      "een aar oor ijk van ijn het sch cht oek",
	LangPortuguese: "ção ões ado nte que ara ens uma não",
	LangSwedish:    "och att för rna ing ade ten ska lle",
}

// detector holds the tables detection reads, built once.
type detector struct {
	stop    map[string]langSet
	maxStop int                // the longest stopword, in bytes
	tri     map[uint64]langSet // three runes, 21 bits each
}

func triKey(a, b, c rune) uint64 { return uint64(a)<<42 | uint64(b)<<21 | uint64(c) }

var langTables = newDetector()

func newDetector() *detector {
	d := &detector{stop: map[string]langSet{}, tri: map[uint64]langSet{}}
	for l := range numLangs {
		for _, w := range splitSpaces(langStopwords[l]) {
			d.stop[w] |= 1 << l
			d.maxStop = max(d.maxStop, len(w))
		}
		for _, t := range splitSpaces(langTrigrams[l]) {
			r := []rune(t)
			d.tri[triKey(r[0], r[1], r[2])] |= 1 << l
		}
	}
	return d
}

func splitSpaces(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ' ' {
			i++
		}
		if i > 0 {
			out = append(out, s[:i])
		}
		s = s[min(i+1, len(s)):]
	}
	return out
}

// DetectLang returns the language of a text (English when it is none of
// the others).
func DetectLang(text string) Lang {
	if len(text) > detectBytes {
		text = text[:detectBytes]
	}
	return langTables.detect(text)
}

// detectDoc returns the language of a document from its title and text.
func detectDoc(d *Doc) Lang {
	text := d.Text
	if len(text) > detectBytes {
		text = text[:detectBytes]
	}
	return langTables.detect(d.Title, text)
}

// tally is what detection counts: letters per script, and per language
// its stopwords and its score (4 a stopword, 1 a trigram).
type tally struct {
	scripts [4]int
	stops   [numLangs]int
	score   [numLangs]int
}

func (t *tally) add(set langSet, points int) {
	for l := range numLangs {
		if set.has(l) {
			t.score[l] += points
			if points == 4 {
				t.stops[l]++
			}
		}
	}
}

func (d *detector) detect(texts ...string) Lang {
	var t tally
	for _, text := range texts {
		d.words(text, &t)
	}
	switch {
	case t.scripts[scriptCyrillic] > t.scripts[scriptLatin] && t.scripts[scriptCyrillic] >= t.scripts[scriptGreek]:
		return LangRussian
	case t.scripts[scriptGreek] > t.scripts[scriptLatin]:
		return LangGreek
	}
	some := false
	for l := LangGerman; l < numLangs; l++ {
		some = some || t.stops[l] >= minStopwords
	}
	if !some {
		return LangEnglish // most mail: the trigrams could not change it
	}
	for _, text := range texts {
		d.trigrams(text, &t)
	}
	best := LangEnglish
	for l := LangGerman; l < numLangs; l++ {
		if l.script() == scriptLatin && t.score[l] > t.score[best] {
			best = l
		}
	}
	if best == LangEnglish || t.stops[best] < minStopwords || 4*t.score[best] < 5*t.score[LangEnglish] {
		return LangEnglish
	}
	return best
}

// words counts the scripts of text's letters and its stopwords. A word
// after '.', '/' or '@' is a host's or a path's, and is not counted.
func (d *detector) words(text string, t *tally) {
	var word [64]byte
	n, inURL := 0, false
	for _, r := range text {
		ascii := r < utf8.RuneSelf
		if ascii && 'a' <= r|0x20 && r|0x20 <= 'z' {
			if !inURL && n < len(word) {
				word[n] = byte(r | 0x20)
				n++
				t.scripts[scriptLatin]++
			}
			continue
		}
		if ascii || !unicode.IsLetter(r) {
			if n > 0 && n <= d.maxStop {
				t.add(d.stop[string(word[:n])], 4)
			}
			n, inURL = 0, r == '.' || r == '/' || r == '@'
			continue
		}
		if inURL {
			continue
		}
		r = unicode.ToLower(r)
		t.scripts[runeScript(r)]++
		if n+utf8.RuneLen(r) <= len(word) {
			n += utf8.EncodeRune(word[n:], r)
		} else {
			n = len(word) + 1
		}
	}
	if n > 0 && n <= d.maxStop {
		t.add(d.stop[string(word[:n])], 4)
	}
}

// trigrams counts text's letter triples typical of a language.
func (d *detector) trigrams(text string, t *tally) {
	var tri [3]rune
	for _, r := range text {
		if !unicode.IsLetter(r) {
			tri = [3]rune{}
			continue
		}
		tri = [3]rune{tri[1], tri[2], unicode.ToLower(r)}
		if tri[0] != 0 {
			t.add(d.tri[triKey(tri[0], tri[1], tri[2])], 1)
		}
	}
}
