package search

// French stemming, the Snowball French stemmer: "continuellement" and
// "continuelle" are both "continuel". It takes a lower-case word with its
// accents.

const frenchVowels grouping = "aeiouyâàëéêèïîôûù"

var (
	frenchStandard = newSuffixes("ance", "iqUe", "isme", "able", "iste", "eux",
		"ances", "iqUes", "ismes", "ables", "istes",
		"atrice", "ateur", "ation", "atrices", "ateurs", "ations",
		"logie", "logies", "usion", "ution", "usions", "utions", "ence", "ences",
		"ement", "ements", "ité", "ités", "if", "ive", "ifs", "ives",
		"eaux", "aux", "euse", "euses", "issement", "issements",
		"amment", "emment", "ment", "ments")
	frenchEment = newSuffixes("iv", "eus", "abl", "iqU", "ièr", "Ièr")
	frenchIte   = newSuffixes("abil", "ic", "iv")
	frenchIVerb = newSuffixes("îmes", "ît", "îtes", "i", "ie", "ies", "ir", "ira", "irai",
		"iraIent", "irais", "irait", "iras", "irent", "irez", "iriez",
		"irions", "irons", "iront", "is", "issaIent", "issais", "issait",
		"issant", "issante", "issantes", "issants", "isse", "issent", "isses",
		"issez", "issiez", "issions", "issons", "it")
	frenchVerb = newSuffixes("ions",
		"é", "ée", "ées", "és", "èrent", "er", "era", "erai",
		"eraIent", "erais", "erait", "eras", "erez", "eriez", "erions",
		"erons", "eront", "ez", "iez",
		"âmes", "ât", "âtes", "a", "ai", "aIent", "ais", "ait", "ant",
		"ante", "antes", "ants", "as", "asse", "assent", "asses", "assiez",
		"assions")
	frenchResidual = newSuffixes("ion", "ier", "ière", "Ier", "Ière", "e")
	frenchDouble   = newSuffixes("enn", "onn", "ett", "ell", "eill")
)

type frenchWord struct {
	*snow
	pV, p1, p2 int
}

func (f *frenchWord) rv() bool { return f.c >= f.pV }
func (f *frenchWord) r1() bool { return f.c >= f.p1 }
func (f *frenchWord) r2() bool { return f.c >= f.p2 }

// stemFrench returns the Snowball French stem of a lower-case word.
func stemFrench(word string) string {
	f := &frenchWord{snow: newSnow(word)}
	frenchPrelude(f.snow)
	f.frenchRegions()
	f.backwards()
	if f.standard() || f.restart() && f.iVerb() || f.restart() && f.verb() {
		f.restart()
		if f.ketB("Y") {
			f.from("i")
		} else if f.restart(); f.ketB("ç") {
			f.from("c")
		}
	} else {
		f.restart()
		f.residual()
	}
	f.restart()
	if f.among(frenchDouble) != "" {
		f.restart()
		f.ket = f.c
		f.c--
		f.bra = f.c
		f.del()
	}
	f.restart()
	if f.outB(frenchVowels) {
		for f.outB(frenchVowels) {
		}
		if f.ketB("é") || f.ketB("è") {
			f.from("e")
		}
	}
	return frenchPostlude(f.w)
}

// restart puts the cursor back at the end with no limit, as Snowball
// does between the rules of a backward stem, and returns true.
func (s *snow) restart() bool {
	s.c, s.l, s.lb = len(s.w), len(s.w), 0
	return true
}

// frenchPrelude marks u, i and y that are consonants (U, I, Y) and
// replaces ë and ï by He and Hi.
func frenchPrelude(s *snow) {
	s.c, s.l = 0, len(s.w)
	for s.c < s.l {
		c := s.c
		if frenchPreludeAt(s) {
			s.c = c // Snowball's goto: the search goes on where the change was found
		} else {
			s.c++
		}
	}
}

// frenchPreludeAt applies the first change that fits at the cursor,
// leaving the cursor after it, or reports false.
func frenchPreludeAt(s *snow) bool {
	c := s.c
	if s.in(frenchVowels) {
		s.bra = s.c
		if s.eq("u") {
			s.ket = s.c
			if s.in(frenchVowels) {
				s.from("U")
				return true
			}
		}
		s.c = s.bra
		if s.eq("i") {
			s.ket = s.c
			if s.in(frenchVowels) {
				s.from("I")
				return true
			}
		}
		s.c = s.bra
		if s.eq("y") {
			s.ket = s.c
			s.from("Y")
			return true
		}
	}
	for _, ch := range [...][2]string{{"ë", "He"}, {"ï", "Hi"}} {
		s.c = c
		s.bra = c
		if s.eq(ch[0]) {
			s.ket = s.c
			s.from(ch[1])
			return true
		}
	}
	s.c, s.bra = c, c
	if s.eq("y") {
		s.ket = s.c
		if s.in(frenchVowels) {
			s.from("Y")
			return true
		}
	}
	s.c = c
	if s.eq("q") {
		s.bra = s.c
		if s.eq("u") {
			s.ket = s.c
			s.from("U")
			return true
		}
	}
	s.c = c
	return false
}

func (f *frenchWord) frenchRegions() {
	w := f.w
	n := len(w)
	f.pV = n
	switch {
	case n >= 3 && frenchVowels.has(w[0]) && frenchVowels.has(w[1]):
		f.pV = 3
	case n >= 3 && (string(w[:3]) == "par" || string(w[:3]) == "col" || string(w[:3]) == "tap"):
		f.pV = 3
	default:
		for i := 1; i < n; i++ {
			if frenchVowels.has(w[i]) {
				f.pV = i + 1
				break
			}
		}
	}
	f.p1, f.p2 = f.regions(frenchVowels)
}

func (f *frenchWord) standard() bool {
	switch f.among(frenchStandard) {
	case "":
		return false
	case "ance", "iqUe", "isme", "able", "iste", "eux", "ances", "iqUes", "ismes", "ables", "istes":
		return f.r2() && f.delTrue()
	case "atrice", "ateur", "ation", "atrices", "ateurs", "ations":
		if !f.r2() {
			return false
		}
		f.del()
		if f.ketB("ic") {
			f.delOrFrom(f.r2(), "iqU")
		}
		return true
	case "logie", "logies":
		return f.r2() && f.fromTrue("log")
	case "usion", "ution", "usions", "utions":
		return f.r2() && f.fromTrue("u")
	case "ence", "ences":
		return f.r2() && f.fromTrue("ent")
	case "ement", "ements":
		if !f.rv() {
			return false
		}
		f.del()
		f.ement()
		return true
	case "ité", "ités":
		if !f.r2() {
			return false
		}
		f.del()
		switch f.among(frenchIte) {
		case "abil":
			f.delOrFrom(f.r2(), "abl")
		case "ic":
			f.delOrFrom(f.r2(), "iqU")
		case "iv":
			if f.r2() {
				f.del()
			}
		}
		return true
	case "if", "ive", "ifs", "ives":
		if !f.r2() {
			return false
		}
		f.del()
		if f.ketB("at") && f.r2() {
			f.del()
			if f.ketB("ic") {
				f.delOrFrom(f.r2(), "iqU")
			}
		}
		return true
	case "eaux":
		return f.fromTrue("eau")
	case "aux":
		return f.r1() && f.fromTrue("al")
	case "euse", "euses":
		return f.eus()
	case "issement", "issements":
		return f.r1() && f.outB(frenchVowels) && f.delTrue()
	case "amment":
		if f.rv() {
			f.from("ant")
		}
		return false
	case "emment":
		if f.rv() {
			f.from("ent")
		}
		return false
	default: // ment, ments
		if f.inB(frenchVowels) && f.rv() {
			f.del()
		}
		return false
	}
}

// ement is what follows the removal of -ement.
func (f *frenchWord) ement() {
	switch f.among(frenchEment) {
	case "iv":
		if f.r2() {
			f.del()
			if f.ketB("at") && f.r2() {
				f.del()
			}
		}
	case "eus":
		f.eus()
	case "abl", "iqU":
		if f.r2() {
			f.del()
		}
	case "ièr", "Ièr":
		if f.rv() {
			f.from("i")
		}
	}
}

// eus deletes the slice in R2, or makes it eux in R1.
func (f *frenchWord) eus() bool {
	if f.r2() {
		f.del()
		return true
	}
	if f.r1() {
		f.from("eux")
		return true
	}
	return false
}

// delOrFrom deletes the slice when del holds, or replaces it with t.
func (s *snow) delOrFrom(del bool, t string) {
	if del {
		s.del()
	} else {
		s.from(t)
	}
}

func (s *snow) delTrue() bool { s.del(); return true }

func (s *snow) fromTrue(t string) bool { s.from(t); return true }

func (f *frenchWord) iVerb() bool {
	if f.c < f.pV {
		return false
	}
	f.lb = f.pV
	if f.among(frenchIVerb) == "" {
		return false
	}
	if f.before("H") || !f.outB(frenchVowels) {
		return false
	}
	f.del()
	return true
}

func (f *frenchWord) verb() bool {
	if f.c < f.pV {
		return false
	}
	f.lb = f.pV
	switch f.among(frenchVerb) {
	case "":
		return false
	case "ions":
		return f.r2() && f.delTrue()
	case "é", "ée", "ées", "és", "èrent", "er", "era", "erai",
		"eraIent", "erais", "erait", "eras", "erez", "eriez", "erions",
		"erons", "eront", "ez", "iez":
		return f.delTrue()
	default:
		f.del()
		if f.ketB("e") {
			f.del()
		}
		return true
	}
}

func (f *frenchWord) residual() {
	if f.ketB("s") {
		c := f.c
		if f.eqB("Hi") || func() bool { f.c = c; return f.outB("aiouès") }() {
			f.c = c
			f.del()
		} else {
			f.c = c + 1
		}
	} else {
		f.restart()
	}
	if f.c < f.pV {
		return
	}
	f.lb = f.pV
	switch f.among(frenchResidual) {
	case "ion":
		if f.r2() {
			c := f.c
			if f.eqB("s") || func() bool { f.c = c; return f.eqB("t") }() {
				f.del()
			}
		}
	case "ier", "ière", "Ier", "Ière":
		f.from("i")
	case "e":
		f.del()
	}
}

// frenchPostlude undoes the prelude's marks.
func frenchPostlude(w []rune) string {
	out := make([]rune, 0, len(w))
	for i := 0; i < len(w); i++ {
		switch r := w[i]; r {
		case 'I', 'U', 'Y':
			out = append(out, r-'A'+'a')
		case 'H':
			if i+1 < len(w) && w[i+1] == 'e' {
				out = append(out, 'ë')
				i++
			} else if i+1 < len(w) && w[i+1] == 'i' {
				out = append(out, 'ï')
				i++
			}
		default:
			out = append(out, r)
		}
	}
	return string(out)
}
