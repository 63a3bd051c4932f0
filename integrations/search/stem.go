package search

// English stemming with Porter2, the Snowball English stemmer: "reports"
// and "reporting" are both "report", "running" is "run". It works in place
// on lower-case ASCII; 'Y' marks a y that is a consonant.

// Stem returns the Porter2 stem of a lower-case English word. Words with
// other characters than a-z and the apostrophe are returned as they are
// by Analyze, which stems only a-z words.
func Stem(w string) string {
	return string(stemBytes([]byte(w)))
}

// stemBytes stems b in place and returns the stem, a prefix of b's
// memory (Porter2 never makes a word longer than it was plus one letter,
// and b's capacity is grown by append when it does).
func stemBytes(b []byte) []byte {
	if r, ok := stemException1(b); ok {
		return append(b[:0], r...)
	}
	if len(b) < 3 {
		return b
	}
	s := stemmer{b: b}
	s.prelude()
	s.markRegions()
	s.step1a()
	if !s.exception2() {
		s.step1b()
		s.step1c()
		s.step2()
		s.step3()
		s.step4()
		s.step5()
	}
	for i, c := range s.b {
		if c == 'Y' {
			s.b[i] = 'y'
		}
	}
	return s.b
}

// stemException1 holds the words Porter2 stems by a list.
func stemException1(b []byte) (string, bool) {
	switch string(b) {
	case "skis":
		return "ski", true
	case "skies":
		return "sky", true
	case "dying":
		return "die", true
	case "lying":
		return "lie", true
	case "tying":
		return "tie", true
	case "idly":
		return "idl", true
	case "gently":
		return "gentl", true
	case "ugly":
		return "ugli", true
	case "early":
		return "earli", true
	case "only":
		return "onli", true
	case "singly":
		return "singl", true
	case "sky", "news", "howe", "atlas", "cosmos", "bias", "andes":
		return string(b), true
	}
	return "", false
}

type stemmer struct {
	b      []byte
	p1, p2 int // start of the regions R1 and R2
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

func (s *stemmer) prelude() {
	if s.b[0] == '\'' {
		s.b = s.b[1:]
	}
	if len(s.b) > 0 && s.b[0] == 'y' {
		s.b[0] = 'Y'
	}
	for i := 1; i < len(s.b); i++ {
		if s.b[i] == 'y' && isVowel(s.b[i-1]) {
			s.b[i] = 'Y'
		}
	}
}

// markRegions sets R1, the region after the first non-vowel following a
// vowel, and R2, the same region within R1.
func (s *stemmer) markRegions() {
	b := s.b
	s.p1, s.p2 = len(b), len(b)
	p1 := -1
	for _, pre := range [...]string{"gener", "commun", "arsen"} {
		if len(b) >= len(pre) && string(b[:len(pre)]) == pre {
			p1 = len(pre)
			break
		}
	}
	if p1 < 0 {
		p1 = s.afterVC(0)
	}
	s.p1 = p1
	s.p2 = s.afterVC(p1)
}

// afterVC returns the index after the first non-vowel that follows a
// vowel at or after i, or len(b).
func (s *stemmer) afterVC(i int) int {
	b := s.b
	for i < len(b) && !isVowel(b[i]) {
		i++
	}
	for i < len(b) && isVowel(b[i]) {
		i++
	}
	if i < len(b) {
		return i + 1
	}
	return len(b)
}

// ends reports whether b ends with suf, comparing from the end, where
// most suffixes differ.
func (s *stemmer) ends(suf string) bool {
	n := len(s.b) - len(suf)
	if n < 0 {
		return false
	}
	for i := len(suf) - 1; i >= 0; i-- {
		if s.b[n+i] != suf[i] {
			return false
		}
	}
	return true
}

// replace replaces the last n bytes with r.
func (s *stemmer) replace(n int, r string) {
	s.b = append(s.b[:len(s.b)-n], r...)
}

// longest returns the first of sufs (longest first) that b ends with.
// Callers pass only the suffixes ending in b's last letter.
func (s *stemmer) longest(sufs ...string) string {
	for _, x := range sufs {
		if s.ends(x) {
			return x
		}
	}
	return ""
}

func (s *stemmer) last() byte {
	if len(s.b) == 0 {
		return 0
	}
	return s.b[len(s.b)-1]
}

// shortBefore reports whether b[:i] ends in a short syllable: a non-vowel
// other than w, x or Y after a vowel after a non-vowel, or a non-vowel
// after a vowel at the very start.
func (s *stemmer) shortBefore(i int) bool {
	b := s.b
	if i >= 3 && !isVowel(b[i-1]) && b[i-1] != 'w' && b[i-1] != 'x' && b[i-1] != 'Y' &&
		isVowel(b[i-2]) && !isVowel(b[i-3]) {
		return true
	}
	return i == 2 && !isVowel(b[1]) && isVowel(b[0])
}

func hasVowel(b []byte) bool {
	for _, c := range b {
		if isVowel(c) {
			return true
		}
	}
	return false
}

func (s *stemmer) step1a() {
	var x string
	switch s.last() {
	case '\'':
		x = s.longest("'s'", "'")
	case 's':
		x = s.longest("'s")
	}
	s.replace(len(x), "")
	switch s.last() {
	case 's':
		x = s.longest("sses", "ies", "us", "ss", "s")
	case 'd':
		x = s.longest("ied")
	default:
		return
	}
	switch x {
	case "sses":
		s.replace(4, "ss")
	case "ied", "ies":
		if len(s.b) > 4 {
			s.replace(3, "i")
		} else {
			s.replace(3, "ie")
		}
	case "s":
		if len(s.b) >= 3 && hasVowel(s.b[:len(s.b)-2]) {
			s.replace(1, "")
		}
	}
}

func (s *stemmer) exception2() bool {
	switch string(s.b) {
	case "inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed":
		return true
	}
	return false
}

func (s *stemmer) step1b() {
	var x string
	switch s.last() {
	case 'y':
		x = s.longest("eedly", "ingly", "edly")
	case 'd':
		x = s.longest("eed", "ed")
	case 'g':
		x = s.longest("ing")
	}
	switch x {
	case "":
		return
	case "eed", "eedly":
		if len(s.b)-len(x) >= s.p1 {
			s.replace(len(x), "ee")
		}
		return
	}
	if !hasVowel(s.b[:len(s.b)-len(x)]) {
		return
	}
	s.replace(len(x), "")
	switch {
	case s.ends("at"), s.ends("bl"), s.ends("iz"):
		s.replace(0, "e")
	case s.ends("bb"), s.ends("dd"), s.ends("ff"), s.ends("gg"), s.ends("mm"),
		s.ends("nn"), s.ends("pp"), s.ends("rr"), s.ends("tt"):
		s.replace(1, "")
	case len(s.b) <= s.p1 && s.shortBefore(len(s.b)):
		s.replace(0, "e")
	}
}

func (s *stemmer) step1c() {
	n := len(s.b)
	if n > 2 && (s.b[n-1] == 'y' || s.b[n-1] == 'Y') && !isVowel(s.b[n-2]) {
		s.b[n-1] = 'i'
	}
}

func (s *stemmer) step2() {
	var x string
	switch s.last() {
	case 'i':
		x = s.longest("biliti", "lessli", "entli", "ousli", "fulli", "aliti", "iviti",
			"enci", "anci", "abli", "alli", "bli", "ogi", "li")
	case 'l':
		x = s.longest("ational", "tional")
	case 's':
		x = s.longest("fulness", "iveness", "ousness")
	case 'n':
		x = s.longest("ization", "ation")
	case 'm':
		x = s.longest("alism")
	case 'r':
		x = s.longest("izer", "ator")
	}
	if x == "" || len(s.b)-len(x) < s.p1 {
		return
	}
	switch x {
	case "tional":
		s.replace(6, "tion")
	case "enci":
		s.replace(4, "ence")
	case "anci":
		s.replace(4, "ance")
	case "abli":
		s.replace(4, "able")
	case "entli":
		s.replace(5, "ent")
	case "izer", "ization":
		s.replace(len(x), "ize")
	case "ational", "ation", "ator":
		s.replace(len(x), "ate")
	case "alism", "aliti", "alli":
		s.replace(len(x), "al")
	case "fulness":
		s.replace(7, "ful")
	case "ousli", "ousness":
		s.replace(len(x), "ous")
	case "iveness", "iviti":
		s.replace(len(x), "ive")
	case "biliti", "bli":
		s.replace(len(x), "ble")
	case "ogi":
		if n := len(s.b); n > 3 && s.b[n-4] == 'l' {
			s.replace(3, "og")
		}
	case "fulli":
		s.replace(5, "ful")
	case "lessli":
		s.replace(6, "less")
	case "li":
		if n := len(s.b); n > 2 {
			switch s.b[n-3] {
			case 'c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't':
				s.replace(2, "")
			}
		}
	}
}

func (s *stemmer) step3() {
	var x string
	switch s.last() {
	case 'l':
		x = s.longest("ational", "tional", "ical", "ful")
	case 'e':
		x = s.longest("alize", "icate", "ative")
	case 'i':
		x = s.longest("iciti")
	case 's':
		x = s.longest("ness")
	}
	if x == "" || len(s.b)-len(x) < s.p1 {
		return
	}
	switch x {
	case "tional":
		s.replace(6, "tion")
	case "ational":
		s.replace(7, "ate")
	case "alize":
		s.replace(5, "al")
	case "icate", "iciti", "ical":
		s.replace(len(x), "ic")
	case "ful", "ness":
		s.replace(len(x), "")
	case "ative":
		if len(s.b)-5 >= s.p2 {
			s.replace(5, "")
		}
	}
}

func (s *stemmer) step4() {
	var x string
	switch s.last() {
	case 't':
		x = s.longest("ement", "ment", "ant", "ent")
	case 'e':
		x = s.longest("ance", "ence", "able", "ible", "ate", "ive", "ize")
	case 'm':
		x = s.longest("ism")
	case 'i':
		x = s.longest("iti")
	case 's':
		x = s.longest("ous")
	case 'n':
		x = s.longest("ion")
	case 'l':
		x = s.longest("al")
	case 'r':
		x = s.longest("er")
	case 'c':
		x = s.longest("ic")
	}
	if x == "" || len(s.b)-len(x) < s.p2 {
		return
	}
	if x == "ion" {
		if n := len(s.b); n > 3 && (s.b[n-4] == 's' || s.b[n-4] == 't') {
			s.replace(3, "")
		}
		return
	}
	s.replace(len(x), "")
}

func (s *stemmer) step5() {
	n := len(s.b)
	switch s.last() {
	case 'e':
		if n-1 >= s.p2 || (n-1 >= s.p1 && !s.shortBefore(n-1)) {
			s.replace(1, "")
		}
	case 'l':
		if n-1 >= s.p2 && n > 1 && s.b[n-2] == 'l' {
			s.replace(1, "")
		}
	}
}
