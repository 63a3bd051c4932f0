package search

// Swedish stemming, the Snowball Swedish stemmer: "klokheten" and
// "klokhet" are both "klok". It takes a lower-case word with å, ä and ö.

const swedishVowels grouping = "aeiouyäåö"

var (
	swedishMain = newSuffixes("a", "arna", "erna", "heterna", "orna", "ad", "e", "ade", "ande", "arne",
		"are", "aste", "en", "anden", "aren", "heten", "ern", "ar", "er", "heter",
		"or", "as", "arnas", "ernas", "ornas", "es", "ades", "andes", "ens", "arens",
		"hetens", "erns", "at", "andet", "het", "ast", "s")
	swedishPair  = newSuffixes("dd", "gd", "nn", "dt", "gt", "kt", "tt")
	swedishOther = newSuffixes("lig", "ig", "els", "löst", "fullt")
)

// stemSwedish returns the Snowball Swedish stem of a lower-case word.
func stemSwedish(word string) string {
	s := newSnow(word)
	p1 := len(s.w)
	if len(s.w) >= 3 {
		p1, _ = s.regions(swedishVowels)
		p1 = max(p1, 3)
	}
	s.restart()
	s.lb = p1
	t := s.among(swedishMain)
	s.lb = 0
	if t == "s" {
		if s.inB("bcdfghjklmnoprtvy") {
			s.del()
		}
	} else if t != "" {
		s.del()
	}
	s.restart()
	s.lb = p1
	if s.find(swedishPair) != "" {
		s.c = len(s.w)
		s.ket = s.c
		s.c--
		s.bra = s.c
		s.del()
	}
	s.restart()
	s.lb = p1
	switch s.among(swedishOther) {
	case "lig", "ig", "els":
		s.del()
	case "löst":
		s.from("lös")
	case "fullt":
		s.from("full")
	}
	return s.String()
}
