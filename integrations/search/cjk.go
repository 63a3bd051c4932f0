package search

import (
	"unicode"
	"unicode/utf8"
)

// Chinese and Japanese are written without spaces and Korean words carry
// particles, so a CJK run is indexed as overlapping bigrams: "東京都" is
// 東京 at one position and 京都 at the next. A query run becomes the
// phrase of its bigrams, which finds the run wherever it occurs.

// isCJK reports whether r is Han, Hiragana, Katakana or Hangul, or one
// of the marks that belong inside such a run (the prolonged sound mark
// ー, the iteration mark 々).
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return r == 0x30FC || r == 0x3005 ||
		unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// cjk emits the bigrams of the CJK run at i and returns its end.
func (a *analyzer) cjk(i int) int {
	text := a.text
	_, n := utf8.DecodeRuneInString(text[i:])
	prev, prevEnd := i, i+n
	i = prevEnd
	pairs := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isCJK(r) {
			break
		}
		s := text[prev : i+n]
		a.emitToken(s, s, prev, i+n)
		a.pos++
		pairs++
		prev, prevEnd = i, i+n
		i += n
	}
	if pairs == 0 {
		s := text[prev:prevEnd]
		a.emitToken(s, s, prev, prevEnd)
		a.pos++
	}
	return i
}
