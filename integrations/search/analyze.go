package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTokenBytes is the longest word kept, in bytes; longer runs of
// letters are cut to it.
const MaxTokenBytes = 64

// Analyze splits text into tokens and calls emit for each, in order of
// position. Tokens reuse no memory between calls to emit.
func Analyze(text string, emit func(Token)) {
	pos := 0
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		start := i
		for i < len(text) {
			r, n = utf8.DecodeRuneInString(text[i:])
			if !isWordRune(r) {
				break
			}
			i += n
		}
		w := strings.ToLower(text[start:i])
		if len(w) > MaxTokenBytes {
			continue
		}
		emit(Token{Term: w, Word: w, Pos: pos, Start: start, End: i})
		pos++
	}
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
