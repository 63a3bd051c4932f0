package search

import "strings"

// Spanish stemming, the Snowball Spanish stemmer: "cantaban" and
// "cantar" are both "cant". It takes a lower-case word with its accents
// and returns a stem without acute accents.

const spanishVowels grouping = "aeiouáéíóúü"

var (
	spanishPronoun = newSuffixes("me", "se", "sela", "selo", "selas", "selos", "la", "le", "lo",
		"las", "les", "los", "nos")
	spanishPronounVerb = newSuffixes("iéndo", "ándo", "ár", "ér", "ír", "ando", "iendo", "ar", "er", "ir", "yendo")
	spanishStandard    = newSuffixes("anza", "anzas", "ico", "ica", "icos", "icas", "ismo", "ismos",
		"able", "ables", "ible", "ibles", "ista", "istas", "oso", "osa", "osos", "osas",
		"amiento", "amientos", "imiento", "imientos",
		"adora", "ador", "ación", "adoras", "adores", "aciones", "ante", "antes", "ancia", "ancias",
		"logía", "logías", "ución", "uciones", "encia", "encias", "amente", "mente",
		"idad", "idades", "iva", "ivo", "ivas", "ivos")
	spanishAmente = newSuffixes("iv", "os", "ic", "ad")
	spanishMente  = newSuffixes("ante", "able", "ible")
	spanishIdad   = newSuffixes("abil", "ic", "iv")
	spanishYVerb  = newSuffixes("ya", "ye", "yan", "yen", "yeron", "yendo", "yo", "yó",
		"yas", "yes", "yais", "yamos")
	spanishVerb = newSuffixes("en", "es", "éis", "emos",
		"arían", "arías", "arán", "arás", "aríais", "aría", "aréis", "aríamos", "aremos", "ará", "aré",
		"erían", "erías", "erán", "erás", "eríais", "ería", "eréis", "eríamos", "eremos", "erá", "eré",
		"irían", "irías", "irán", "irás", "iríais", "iría", "iréis", "iríamos", "iremos", "irá", "iré",
		"aba", "ada", "ida", "ía", "ara", "iera", "ad", "ed",
		"id", "ase", "iese", "aste", "iste", "an", "aban", "ían",
		"aran", "ieran", "asen", "iesen", "aron", "ieron", "ado",
		"ido", "ando", "iendo", "ió", "ar", "er", "ir", "as",
		"abas", "adas", "idas", "ías", "aras", "ieras", "ases",
		"ieses", "ís", "áis", "abais", "íais", "arais",
		"ierais", "aseis", "ieseis", "asteis", "isteis", "ados",
		"idos", "amos", "ábamos", "íamos", "imos",
		"áramos", "iéramos", "iésemos", "ásemos")
	spanishResidual = newSuffixes("os", "a", "o", "á", "í", "ó", "e", "é")
	spanishUnaccent = strings.NewReplacer("á", "a", "é", "e", "í", "i", "ó", "o", "ú", "u")
)

// stemSpanish returns the Snowball Spanish stem of a lower-case word.
func stemSpanish(word string) string {
	s := newSnow(word)
	pV := romanceRV(s.w, spanishVowels)
	p1, p2 := s.regions(spanishVowels)
	s.restart()
	spanishPronounRule(s, pV)
	s.restart()
	if !spanishStandardRule(s, p1, p2) {
		s.restart()
		if !spanishYVerbRule(s, pV) {
			s.restart()
			spanishVerbRule(s, pV)
		}
	}
	s.restart()
	switch s.among(spanishResidual) {
	case "os", "a", "o", "á", "í", "ó":
		if s.c >= pV {
			s.del()
		}
	case "e", "é":
		if s.c >= pV {
			s.del()
			if s.ketB("u") && s.before("g") && s.c >= pV {
				s.del()
			}
		}
	}
	return spanishUnaccent.Replace(s.String())
}

// romanceRV returns where the region RV of Spanish, Italian and
// Portuguese starts: after the next vowel following two consonants or
// two vowels at the start, or after the third letter.
func romanceRV(w []rune, v grouping) int {
	n := len(w)
	after := func(from int, vowel bool) int { // past the next (non-)vowel
		for i := from; i < n; i++ {
			if v.has(w[i]) == vowel {
				return i + 1
			}
		}
		return -1
	}
	if n < 2 {
		return n
	}
	var p int
	if v.has(w[0]) {
		if p = -1; !v.has(w[1]) {
			p = after(2, true)
		}
		if p < 0 && v.has(w[1]) {
			p = after(2, false)
		}
	} else {
		if p = -1; !v.has(w[1]) {
			p = after(2, true)
		}
		if p < 0 && v.has(w[1]) && n >= 3 {
			p = 3
		}
	}
	if p < 0 {
		return n
	}
	return p
}

func spanishPronounRule(s *snow, pV int) {
	if s.among(spanishPronoun) == "" {
		return
	}
	ket := s.ket
	verb := s.among(spanishPronounVerb)
	if verb == "" || s.c < pV {
		return
	}
	verbStart := s.c
	s.ket = ket
	switch verb {
	case "iéndo", "ándo", "ár", "ér", "ír":
		s.bra = verbStart
		s.from(spanishUnaccent.Replace(verb))
	case "yendo":
		s.bra = verbStart + 5
		if s.eqB("u") {
			s.del()
		}
	default:
		s.bra = verbStart + len([]rune(verb))
		s.del()
	}
}

func spanishStandardRule(s *snow, p1, p2 int) bool {
	r2 := func() bool { return s.c >= p2 }
	switch s.among(spanishStandard) {
	case "":
		return false
	case "adora", "ador", "ación", "adoras", "adores", "aciones", "ante", "antes", "ancia", "ancias":
		if !r2() {
			return false
		}
		s.del()
		if s.ketB("ic") && r2() {
			s.del()
		}
	case "logía", "logías":
		return r2() && s.fromTrue("log")
	case "ución", "uciones":
		return r2() && s.fromTrue("u")
	case "encia", "encias":
		return r2() && s.fromTrue("ente")
	case "amente":
		if s.c < p1 {
			return false
		}
		s.del()
		if t := s.among(spanishAmente); t != "" && r2() {
			s.del()
			if t == "iv" && s.ketB("at") && r2() {
				s.del()
			}
		}
	case "mente":
		return r2() && s.delTrue() && spanishThenR2(s, spanishMente, p2)
	case "idad", "idades":
		return r2() && s.delTrue() && spanishThenR2(s, spanishIdad, p2)
	case "iva", "ivo", "ivas", "ivos":
		if !r2() {
			return false
		}
		s.del()
		if s.ketB("at") && r2() {
			s.del()
		}
	default:
		return r2() && s.delTrue()
	}
	return true
}

// spanishThenR2 deletes one of the suffixes when it is in R2; it always
// holds.
func spanishThenR2(s *snow, a *suffixes, p2 int) bool {
	if s.among(a) != "" && s.c >= p2 {
		s.del()
	}
	return true
}

func spanishYVerbRule(s *snow, pV int) bool {
	if s.c < pV {
		return false
	}
	s.lb = pV
	t := s.among(spanishYVerb)
	s.lb = 0
	return t != "" && s.eqB("u") && s.delTrue()
}

func spanishVerbRule(s *snow, pV int) {
	if s.c < pV {
		return
	}
	s.lb = pV
	t := s.among(spanishVerb)
	s.lb = 0
	switch t {
	case "":
		return
	case "en", "es", "éis", "emos":
		if s.eqB("u") && s.before("g") {
			s.bra = s.c
		}
	}
	s.del()
}
