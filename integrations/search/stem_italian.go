package search

// Italian stemming, the Snowball Italian stemmer: "abbandonata" and
// "abbandonare" are both "abbandon". It takes a lower-case word with its
// accents; the stem's accents are grave.

const (
	italianVowels grouping = "aeiouàèìòù"
	italianAEIO   grouping = "aeioàèìò"
)

var (
	italianPronoun = newSuffixes("ci", "gli", "la", "le", "li", "lo", "mi", "ne", "si", "ti", "vi",
		"sene", "gliela", "gliele", "glieli", "glielo", "gliene",
		"mela", "mele", "meli", "melo", "mene", "tela", "tele", "teli", "telo", "tene",
		"cela", "cele", "celi", "celo", "cene", "vela", "vele", "veli", "velo", "vene")
	italianPronounVerb = newSuffixes("ando", "endo", "ar", "er", "ir")
	italianStandard    = newSuffixes("anza", "anze", "ico", "ici", "ica", "ice", "iche", "ichi", "ismo",
		"ismi", "abile", "abili", "ibile", "ibili", "ista", "iste", "isti",
		"istà", "istè", "istì", "oso", "osi", "osa", "ose", "mente",
		"atrice", "atrici", "ante", "anti",
		"azione", "azioni", "atore", "atori", "logia", "logie",
		"uzione", "uzioni", "usione", "usioni", "enza", "enze",
		"amento", "amenti", "imento", "imenti", "amente", "ità", "ivo", "ivi", "iva", "ive")
	italianAmente = newSuffixes("iv", "os", "ic", "abil")
	italianIta    = newSuffixes("abil", "ic", "iv")
	italianVerb   = newSuffixes("ammo", "ando", "ano", "are", "arono", "asse", "assero", "assi",
		"assimo", "ata", "ate", "ati", "ato", "ava", "avamo", "avano", "avate",
		"avi", "avo", "emmo", "enda", "ende", "endi", "endo", "erà", "erai",
		"eranno", "ere", "erebbe", "erebbero", "erei", "eremmo", "eremo",
		"ereste", "eresti", "erete", "erò", "erono", "essero", "ete",
		"eva", "evamo", "evano", "evate", "evi", "evo", "Yamo", "iamo", "immo",
		"irà", "irai", "iranno", "ire", "irebbe", "irebbero", "irei",
		"iremmo", "iremo", "ireste", "iresti", "irete", "irò", "irono",
		"isca", "iscano", "isce", "isci", "isco", "iscono", "issero", "ita",
		"ite", "iti", "ito", "iva", "ivamo", "ivano", "ivate", "ivi", "ivo",
		"ono", "uta", "ute", "uti", "uto", "ar", "ir")
)

// stemItalian returns the Snowball Italian stem of a lower-case word.
func stemItalian(word string) string {
	s := newSnow(word)
	w := s.w
	for i, r := range w {
		switch r {
		case 'á':
			w[i] = 'à'
		case 'é':
			w[i] = 'è'
		case 'í':
			w[i] = 'ì'
		case 'ó':
			w[i] = 'ò'
		case 'ú':
			w[i] = 'ù'
		case 'u':
			if i > 0 && w[i-1] == 'q' {
				w[i] = 'U'
			}
		}
	}
	markBetweenVowels(w, italianVowels, 'u', 'i')
	pV := romanceRV(w, italianVowels)
	p1, p2 := s.regions(italianVowels)
	s.restart()
	if s.among(italianPronoun) != "" {
		switch s.find(italianPronounVerb) {
		case "ando", "endo":
			if s.c >= pV {
				s.del()
			}
		case "ar", "er", "ir":
			if s.c >= pV {
				s.from("e")
			}
		}
	}
	s.restart()
	if !italianStandardRule(s, pV, p1, p2) {
		s.restart()
		if s.c >= pV {
			s.lb = pV
			if s.among(italianVerb) != "" {
				s.del()
			}
		}
	}
	s.restart()
	if s.ket = s.c; s.inB(italianAEIO) && s.c >= pV {
		s.bra = s.c
		s.del()
		if s.ketB("i") && s.c >= pV {
			s.del()
		}
	}
	s.restart()
	if s.ketB("h") && s.inB("cg") && s.c >= pV {
		s.del()
	}
	for i, r := range s.w {
		if r == 'I' || r == 'U' {
			s.w[i] = r - 'A' + 'a'
		}
	}
	return s.String()
}

func italianStandardRule(s *snow, pV, p1, p2 int) bool {
	r2 := func() bool { return s.c >= p2 }
	switch s.among(italianStandard) {
	case "":
		return false
	case "azione", "azioni", "atore", "atori":
		if !r2() {
			return false
		}
		s.del()
		if s.ketB("ic") && r2() {
			s.del()
		}
	case "logia", "logie":
		return r2() && s.fromTrue("log")
	case "uzione", "uzioni", "usione", "usioni":
		return r2() && s.fromTrue("u")
	case "enza", "enze":
		return r2() && s.fromTrue("ente")
	case "amento", "amenti", "imento", "imenti":
		return s.c >= pV && s.delTrue()
	case "amente":
		if s.c < p1 {
			return false
		}
		s.del()
		if t := s.among(italianAmente); t != "" && r2() {
			s.del()
			if t == "iv" && s.ketB("at") && r2() {
				s.del()
			}
		}
	case "ità":
		return r2() && s.delTrue() && spanishThenR2(s, italianIta, p2)
	case "ivo", "ivi", "iva", "ive":
		if !r2() {
			return false
		}
		s.del()
		if s.ketB("at") && r2() {
			s.del()
			if s.ketB("ic") && r2() {
				s.del()
			}
		}
	default:
		return r2() && s.delTrue()
	}
	return true
}
