package search

import "strings"

// Portuguese stemming, the Snowball Portuguese stemmer: "quilométricas"
// and "quilométrico" are both "quilométr". It takes a lower-case word
// with its accents.

const portugueseVowels grouping = "aeiouáéíóúâêô"

var (
	portugueseStandard = newSuffixes("eza", "ezas", "ico", "ica", "icos", "icas", "ismo", "ismos",
		"ável", "ível", "ista", "istas", "oso", "osa", "osos", "osas",
		"amento", "amentos", "imento", "imentos",
		"adora", "ador", "aça~o", "adoras", "adores", "aço~es", "ante", "antes", "ância",
		"logia", "logias", "uça~o", "uço~es", "ência", "ências", "amente", "mente",
		"idade", "idades", "iva", "ivo", "ivas", "ivos", "ira", "iras")
	portugueseAmente = newSuffixes("iv", "os", "ic", "ad")
	portugueseMente  = newSuffixes("ante", "avel", "ível")
	portugueseIdade  = newSuffixes("abil", "ic", "iv")
	portugueseVerb   = newSuffixes("ada", "ida", "ia", "aria", "eria", "iria", "ará", "ara", "erá",
		"era", "irá", "ava", "asse", "esse", "isse", "aste", "este", "iste",
		"ei", "arei", "erei", "irei", "am", "iam", "ariam", "eriam", "iriam",
		"aram", "eram", "iram", "avam", "em", "arem", "erem", "irem", "assem",
		"essem", "issem", "ado", "ido", "ando", "endo", "indo", "ara~o",
		"era~o", "ira~o", "ar", "er", "ir", "as", "adas", "idas", "ias",
		"arias", "erias", "irias", "arás", "aras", "erás", "eras",
		"irás", "avas", "es", "ardes", "erdes", "irdes", "ares", "eres",
		"ires", "asses", "esses", "isses", "astes", "estes", "istes", "is",
		"ais", "eis", "íeis", "aríeis", "eríeis", "iríeis",
		"áreis", "areis", "éreis", "ereis", "íreis", "ireis",
		"ásseis", "ésseis", "ísseis", "áveis", "ados", "idos",
		"ámos", "amos", "íamos", "aríamos", "eríamos",
		"iríamos", "áramos", "éramos", "íramos", "ávamos",
		"emos", "aremos", "eremos", "iremos", "ássemos", "êssemos",
		"íssemos", "imos", "armos", "ermos", "irmos", "eu", "iu", "ou",
		"ira", "iras")
	portugueseResidual = newSuffixes("os", "a", "i", "o", "á", "í", "ó")
	portugueseForm     = newSuffixes("e", "é", "ê", "ç")
	portugueseIn       = strings.NewReplacer("ã", "a~", "õ", "o~")
	portugueseOut      = strings.NewReplacer("a~", "ã", "o~", "õ")
)

// stemPortuguese returns the Snowball Portuguese stem of a lower-case
// word.
func stemPortuguese(word string) string {
	s := newSnow(portugueseIn.Replace(word))
	pV := romanceRV(s.w, portugueseVowels)
	p1, p2 := s.regions(portugueseVowels)
	s.restart()
	if portugueseStandardRule(s, pV, p1, p2) || s.restart() && portugueseVerbRule(s, pV) {
		s.restart()
		if s.ketB("i") && s.before("c") && s.c >= pV {
			s.del()
		}
	} else {
		s.restart()
		if s.among(portugueseResidual) != "" && s.c >= pV {
			s.del()
		}
	}
	s.restart()
	switch s.among(portugueseForm) {
	case "e", "é", "ê":
		if s.c >= pV {
			s.del()
			c := s.c
			if s.ketB("u") && s.before("g") || func() bool { s.c = c; return s.ketB("i") && s.before("c") }() {
				if s.c >= pV {
					s.del()
				}
			}
		}
	case "ç":
		s.from("c")
	}
	return portugueseOut.Replace(s.String())
}

func portugueseVerbRule(s *snow, pV int) bool {
	if s.c < pV {
		return false
	}
	s.lb = pV
	if s.among(portugueseVerb) == "" {
		return false
	}
	s.del()
	return true
}

func portugueseStandardRule(s *snow, pV, p1, p2 int) bool {
	r2 := func() bool { return s.c >= p2 }
	switch s.among(portugueseStandard) {
	case "":
		return false
	case "logia", "logias":
		return r2() && s.fromTrue("log")
	case "uça~o", "uço~es":
		return r2() && s.fromTrue("u")
	case "ência", "ências":
		return r2() && s.fromTrue("ente")
	case "amente":
		if s.c < p1 {
			return false
		}
		s.del()
		if t := s.among(portugueseAmente); t != "" && r2() {
			s.del()
			if t == "iv" && s.ketB("at") && r2() {
				s.del()
			}
		}
	case "mente":
		return r2() && s.delTrue() && spanishThenR2(s, portugueseMente, p2)
	case "idade", "idades":
		return r2() && s.delTrue() && spanishThenR2(s, portugueseIdade, p2)
	case "iva", "ivo", "ivas", "ivos":
		if !r2() {
			return false
		}
		s.del()
		if s.ketB("at") && r2() {
			s.del()
		}
	case "ira", "iras":
		return s.c >= pV && s.eqB("e") && s.fromTrue("ir")
	default:
		return r2() && s.delTrue()
	}
	return true
}
