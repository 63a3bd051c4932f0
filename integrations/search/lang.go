package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Languages: each document's language is detected when it is indexed
// (lang_detect.go), its words are stemmed with that language's stemmer,
// and the document carries a marker term naming the language. A query
// word is then looked up under its stem in every language the user's
// items are in (expandLangs), so "Häuser" finds a German mail that says
// "Haus" and "reports" still finds an English one that says "report".

// Lang is a language the index stems.
type Lang uint8

// The languages, English first: English is also the language of a
// document nothing else was detected in, as before languages were
// detected.
const (
	LangEnglish Lang = iota
	LangGerman
	LangFrench
	LangSpanish
	LangItalian
	LangDutch
	LangPortuguese
	LangSwedish
	LangRussian
	LangGreek
	numLangs
)

// langCodes are the languages' ISO 639-1 codes, in Lang order.
var langCodes = [numLangs]string{"en", "de", "fr", "es", "it", "nl", "pt", "sv", "ru", "el"}

// String returns the language's ISO 639-1 code.
func (l Lang) String() string {
	if l < numLangs {
		return langCodes[l]
	}
	return "?"
}

// langSet is a set of languages, a bit per Lang.
type langSet uint16

func (s langSet) has(l Lang) bool { return s&(1<<l) != 0 }

// langStemmers are the stemmers of the languages beside English, which
// Analyze stems as it always has (stem.go). A language without one here
// is detected but not stemmed.
var langStemmers = [numLangs]func(string) string{
	LangGerman:     stemGerman,
	LangFrench:     stemFrench,
	LangSpanish:    stemSpanish,
	LangItalian:    stemItalian,
	LangDutch:      stemDutch,
	LangPortuguese: stemPortuguese,
	LangSwedish:    stemSwedish,
	LangRussian:    stemRussian,
	LangGreek:      stemGreek,
}

// langMark starts the dictionary key of a language's marker term, which
// every document of that language has once: a word (wordMark) no query
// can type, so it is never a stem, a prefix's or a near word's match.
const langMark = wordMark + "\x02"

func langMarker(l Lang) string { return langMark + langCodes[l] }

// script is the alphabet a language is written in.
type script uint8

const (
	scriptOther script = iota
	scriptLatin
	scriptCyrillic
	scriptGreek
)

func (l Lang) script() script {
	switch l {
	case LangRussian:
		return scriptCyrillic
	case LangGreek:
		return scriptGreek
	}
	return scriptLatin
}

func runeScript(r rune) script {
	switch {
	case r < 0x250:
		if unicode.IsLetter(r) {
			return scriptLatin
		}
	case r >= 0x370 && r < 0x400 || r >= 0x1F00 && r < 0x2000:
		return scriptGreek
	case r >= 0x400 && r < 0x530:
		return scriptCyrillic
	}
	return scriptOther
}

// stemsIn reports whether a word as written (its letters, maybe joined
// by apostrophes and hyphens) is stemmed by lang's stemmer: a word of
// lang's alphabet, with no digit.
func stemsIn(lang Lang, written string) bool {
	if lang == LangEnglish || langStemmers[lang] == nil {
		return false
	}
	want := lang.script()
	for _, r := range written {
		if r < utf8.RuneSelf && !('a' <= r|0x20 && r|0x20 <= 'z') {
			if '0' <= r && r <= '9' {
				return false
			}
			continue
		}
		if unicode.IsMark(r) || !unicode.IsLetter(r) {
			continue
		}
		if runeScript(r) != want {
			return false
		}
	}
	return true
}

// langStem returns the term of a word as written in lang, which stemsIn
// accepts: its letters lower-cased (accents kept, as the stemmer wants
// them), stemmed, then folded as every term is.
func langStem(lang Lang, written string, buf []byte) string {
	var b strings.Builder
	b.Grow(len(written))
	for _, r := range written {
		if unicode.IsLetter(r) || unicode.IsMark(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	stem := langStemmers[lang](b.String())
	return string(appendFold(buf[:0], stem, foldWord))
}

// queryTerm returns the term a query word (as written, and folded as the
// analyzer does) is looked up under in the documents of lang.
func queryTerm(lang Lang, written, folded string) string {
	if stemsIn(lang, written) {
		return langStem(lang, written, nil)
	}
	var a analyzer
	return a.stem(folded)
}
