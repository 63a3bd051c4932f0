package search

// The Snowball stemmers of the languages beside English (stem_*.go) are
// written over this small machine, which has the operations the Snowball
// algorithm descriptions are stated in: a word of runes, a cursor moving
// forwards (the prelude, the regions) or backwards (the suffixes), a
// limit it may not pass, and a slice [bra, ket) that a suffix rule
// deletes or replaces. A failed test leaves the cursor where it was only
// where a rule says so (the callers save and restore it), as in Snowball.

import (
	"strings"
	"unicode/utf8"
)

// grouping is a set of letters, such as a language's vowels.
type grouping string

func (g grouping) has(r rune) bool { return strings.ContainsRune(string(g), r) }

// snow is one word being stemmed.
type snow struct {
	w        []rune
	c        int // the cursor
	l, lb    int // the limits forwards and backwards
	bra, ket int // the slice a rule deletes or replaces
}

func newSnow(word string) *snow {
	s := &snow{w: make([]rune, 0, utf8.RuneCountInString(word)+2)}
	for _, r := range word {
		s.w = append(s.w, r)
	}
	s.l = len(s.w)
	return s
}

func (s *snow) String() string { return string(s.w) }

// Forward moves.

// in advances over one letter of g.
func (s *snow) in(g grouping) bool {
	if s.c < s.l && g.has(s.w[s.c]) {
		s.c++
		return true
	}
	return false
}

// gopast advances past the next letter of g (in) or not of g (!in).
func (s *snow) gopast(g grouping, in bool) bool {
	for s.c < s.l {
		r := s.w[s.c]
		s.c++
		if g.has(r) == in {
			return true
		}
	}
	return false
}

// eq advances over t if the word has it at the cursor.
func (s *snow) eq(t string) bool {
	c := s.c
	for _, r := range t {
		if c >= s.l || s.w[c] != r {
			return false
		}
		c++
	}
	s.c = c
	return true
}

// Backward moves.

// inB moves back over one letter of g.
func (s *snow) inB(g grouping) bool {
	if s.c > s.lb && g.has(s.w[s.c-1]) {
		s.c--
		return true
	}
	return false
}

// outB moves back over one letter not in g.
func (s *snow) outB(g grouping) bool {
	if s.c > s.lb && !g.has(s.w[s.c-1]) {
		s.c--
		return true
	}
	return false
}

// eqB moves back over t if the word has it before the cursor.
func (s *snow) eqB(t string) bool {
	n := utf8.RuneCountInString(t)
	c := s.c - n
	if c < s.lb {
		return false
	}
	i := c
	for _, r := range t {
		if s.w[i] != r {
			return false
		}
		i++
	}
	s.c = c
	return true
}

// ketB marks the slice's end at the cursor and moves back over t,
// marking its start: Snowball's [ 't' ] in a backward rule.
func (s *snow) ketB(t string) bool {
	s.ket = s.c
	if !s.eqB(t) {
		return false
	}
	s.bra = s.c
	return true
}

// among finds the longest of the suffixes before the cursor, moves back
// over it and marks it as the slice; "" when none is there. Snowball's
// [substring] among(...) in a backward rule.
func (s *snow) among(a *suffixes) string {
	s.ket = s.c
	best, bestN := "", -1
	for i, t := range a.r {
		n := len(t)
		if n <= bestN || s.c-n < s.lb {
			continue
		}
		ok := true
		for j := 0; j < n; j++ {
			if s.w[s.c-n+j] != t[j] {
				ok = false
				break
			}
		}
		if ok {
			best, bestN = a.s[i], n
		}
	}
	if bestN < 0 {
		return ""
	}
	s.c -= bestN
	s.bra = s.c
	if best == "" {
		return "\x00" // the empty suffix matched
	}
	return best
}

// find is among without marking a slice: Snowball's among without
// brackets, which leaves the slice a rule marked before it.
func (s *snow) find(a *suffixes) string {
	bra, ket := s.bra, s.ket
	t := s.among(a)
	s.bra, s.ket = bra, ket
	return t
}

// suffixes is an among's list, its strings as runes.
type suffixes struct {
	s []string
	r [][]rune
}

func newSuffixes(list ...string) *suffixes {
	a := &suffixes{s: list}
	for _, t := range list {
		a.r = append(a.r, []rune(t))
	}
	return a
}

// Changes.

// del deletes the slice.
func (s *snow) del() { s.from("") }

// from replaces the slice with t, keeping the cursor and the limit in
// step with the letters after it.
func (s *snow) from(t string) {
	rt := []rune(t)
	adj := len(rt) - (s.ket - s.bra)
	w := make([]rune, 0, len(s.w)+adj)
	w = append(w, s.w[:s.bra]...)
	w = append(w, rt...)
	w = append(w, s.w[s.ket:]...)
	s.w = w
	s.l += adj
	if s.c >= s.ket {
		s.c += adj
	} else if s.c > s.bra {
		s.c = s.bra
	}
	s.ket = s.bra + len(rt)
}

// backwards readies the word for the suffix rules: the cursor at the
// end, no letter before the start.
func (s *snow) backwards() {
	s.lb, s.c = 0, len(s.w)
	s.l = len(s.w)
}

// regions finds Snowball's R1 and R2 on a word: R1 starts after the first
// non-vowel following a vowel, R2 the same way within R1; each is the
// word's end when there is no such letter.
func (s *snow) regions(v grouping) (p1, p2 int) {
	p1, p2 = len(s.w), len(s.w)
	s.c, s.l = 0, len(s.w)
	if !s.gopast(v, true) || !s.gopast(v, false) {
		return
	}
	p1 = s.c
	if !s.gopast(v, true) || !s.gopast(v, false) {
		return
	}
	p2 = s.c
	return
}
