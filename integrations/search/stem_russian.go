package search

import "strings"

// Russian stemming, the Snowball Russian stemmer: "книгами" and "книги"
// are both "книг". It takes a lower-case word in Cyrillic.

const russianVowels grouping = "аеиоуыэюя"

var (
	russianGerund     = newSuffixes("в", "вши", "вшись", "ив", "ивши", "ившись", "ыв", "ывши", "ывшись")
	russianReflexive  = newSuffixes("ся", "сь")
	russianAdjective  = newSuffixes("ее", "ие", "ые", "ое", "ими", "ыми", "ей", "ий", "ый", "ой", "ем", "им", "ым", "ом", "его", "ого", "ему", "ому", "их", "ых", "ую", "юю", "ая", "яя", "ою", "ею")
	russianParticiple = newSuffixes("ем", "нн", "вш", "ющ", "щ", "ивш", "ывш", "ующ")
	russianVerb       = newSuffixes("ла", "на", "ете", "йте", "ли", "й", "л", "ем", "н", "ло", "но", "ет", "ют", "ны", "ть", "ешь", "нно",
		"ила", "ыла", "ена", "ейте", "уйте", "ите", "или", "ыли", "ей", "уй", "ил", "ыл", "им", "ым", "ен", "ило", "ыло", "ено", "ят", "ует", "уют", "ит", "ыт", "ены", "ить", "ыть", "ишь", "ую", "ю")
	russianNoun = newSuffixes("а", "ев", "ов", "ие", "ье", "е", "иями", "ями", "ами", "еи", "ии", "и", "ией", "ей", "ой", "ий", "й",
		"иям", "ям", "ием", "ем", "ам", "ом", "о", "у", "ах", "иях", "ях", "ы", "ь", "ию", "ью", "ю", "ия", "ья", "я")
	russianDerivational = newSuffixes("ост", "ость")
	russianTidy         = newSuffixes("ейш", "ейше", "н", "ь")
)

// stemRussian returns the Snowball Russian stem of a lower-case word.
func stemRussian(word string) string {
	if strings.ContainsRune(word, 'ё') {
		word = strings.ReplaceAll(word, "ё", "е")
	}
	s := newSnow(word)
	pV, p2 := len(s.w), len(s.w)
	s.c, s.l = 0, len(s.w)
	if s.gopast(russianVowels, true) {
		pV = s.c
		if s.gopast(russianVowels, false) && s.gopast(russianVowels, true) && s.gopast(russianVowels, false) {
			p2 = s.c
		}
	}
	s.restart()
	s.lb = pV
	if !russianGerundRule(s) {
		s.c = len(s.w)
		if s.among(russianReflexive) != "" {
			s.del()
		} else {
			s.c = len(s.w)
		}
		end := s.c
		if !russianAdjectival(s) {
			s.c = end
			if !russianAOrYa(s, russianVerb, "ла", "на", "ете", "йте", "ли", "й", "л", "ем", "н", "ло", "но", "ет", "ют", "ны", "ть", "ешь", "нно") {
				s.c = end
				if s.among(russianNoun) != "" {
					s.del()
				}
			}
		}
	}
	s.c = len(s.w)
	if s.ketB("и") {
		s.del()
	}
	s.c = len(s.w)
	if s.among(russianDerivational) != "" && s.c >= p2 {
		s.del()
	}
	s.c = len(s.w)
	switch s.among(russianTidy) {
	case "ейш", "ейше":
		s.del()
		if s.ketB("н") && s.eqB("н") {
			s.del()
		}
	case "н":
		if s.eqB("н") {
			s.del()
		}
	case "ь":
		s.del()
	}
	return s.String()
}

func russianGerundRule(s *snow) bool {
	return russianAOrYa(s, russianGerund, "в", "вши", "вшись")
}

// russianAOrYa deletes the longest of the suffixes; those of afterAOrYa
// only when а or я comes before them. It reports whether it deleted.
func russianAOrYa(s *snow, a *suffixes, afterAOrYa ...string) bool {
	t := s.among(a)
	if t == "" {
		return false
	}
	for _, x := range afterAOrYa {
		if t == x {
			if !s.before("а") && !s.before("я") {
				return false
			}
			break
		}
	}
	s.del()
	return true
}

func russianAdjectival(s *snow) bool {
	if s.among(russianAdjective) == "" {
		return false
	}
	s.del()
	end := s.c
	if !russianAOrYa(s, russianParticiple, "ем", "нн", "вш", "ющ", "щ") {
		s.c = end
	}
	return true
}
