package search

import "strings"

// German stemming, the Snowball German stemmer: "Häuser" and "Hauses"
// are both "haus". It takes a lower-case word with its umlauts and ß and
// returns a stem without them.

const germanVowels grouping = "aeiouyäöü"

var (
	germanStep1 = newSuffixes("em", "ern", "er", "e", "en", "es", "s")
	germanStep2 = newSuffixes("en", "er", "est", "st")
	germanStep3 = newSuffixes("end", "ung", "ig", "ik", "isch", "lich", "heit", "keit")
	germanKeit  = newSuffixes("lich", "ig")
)

// stemGerman returns the Snowball German stem of a lower-case word.
func stemGerman(word string) string {
	if strings.ContainsRune(word, 'ß') {
		word = strings.ReplaceAll(word, "ß", "ss")
	}
	s := newSnow(word)
	markBetweenVowels(s.w, germanVowels, 'u', 'y')
	p1, p2 := len(s.w), len(s.w)
	if len(s.w) >= 3 {
		p1, p2 = s.regions(germanVowels)
		p1 = max(p1, 3)
	}
	s.backwards()
	germanStep1Rule(s, p1)
	s.c = len(s.w)
	germanStep2Rule(s, p1)
	s.c = len(s.w)
	germanStep3Rule(s, p1, p2)
	for i, r := range s.w {
		switch r {
		case 'Y':
			s.w[i] = 'y'
		case 'U', 'ü':
			s.w[i] = 'u'
		case 'ä':
			s.w[i] = 'a'
		case 'ö':
			s.w[i] = 'o'
		}
	}
	return s.String()
}

// markBetweenVowels upper-cases the letters of which (u and y, or i) that
// stand between two vowels, since they are consonants there; the search
// for the next one goes on after the first vowel.
func markBetweenVowels(w []rune, v grouping, which ...rune) {
	for i := 0; i+2 < len(w); {
		if v.has(w[i]) && v.has(w[i+2]) {
			if m := w[i+1]; m == which[0] || len(which) > 1 && m == which[1] {
				w[i+1] = m - 'a' + 'A'

			}
		}
		i++
	}
}

func germanStep1Rule(s *snow, p1 int) {
	switch s.among(germanStep1) {
	case "em", "ern", "er":
		if s.c >= p1 {
			s.del()
		}
	case "e", "en", "es":
		if s.c >= p1 {
			s.del()
			if s.ketB("s") && s.eqB("nis") {
				s.del()
			}
		}
	case "s":
		if s.c >= p1 && s.inB("bdfghklmnrt") {
			s.del()
		}
	}
}

func germanStep2Rule(s *snow, p1 int) {
	switch s.among(germanStep2) {
	case "en", "er", "est":
		if s.c >= p1 {
			s.del()
		}
	case "st":
		if s.c >= p1 && s.inB("bdfghklmnt") && s.c-3 >= s.lb {
			s.del()
		}
	}
}

func germanStep3Rule(s *snow, p1, p2 int) {
	suf := s.among(germanStep3)
	if suf == "" || s.c < p2 {
		return
	}
	switch suf {
	case "end", "ung":
		s.del()
		if s.ketB("ig") && !s.before("e") && s.c >= p2 {
			s.del()
		}
	case "ig", "ik", "isch":
		if !s.before("e") {
			s.del()
		}
	case "lich", "heit":
		s.del()
		c := s.c
		if s.ketB("er") || func() bool { s.c = c; return s.ketB("en") }() {
			if s.c >= p1 {
				s.del()
			}
		}
	case "keit":
		s.del()
		if t := s.among(germanKeit); t != "" && s.c >= p2 {
			s.del()
		}
	}
}

// before reports whether t comes just before the cursor, leaving the
// cursor where it was (Snowball's test in a backward rule).
func (s *snow) before(t string) bool {
	c := s.c
	ok := s.eqB(t)
	s.c = c
	return ok
}
