package search

import "slices"

// A query word is looked up under its stem in every language the user's
// items are in: those whose marker term (lang.go) a part of the user's
// index holds, and English always.

// langs returns the languages of the part's documents. A segment's never
// change, so they are looked up once.
func (p *part) langs() langSet {
	if p.seg != nil {
		if v := p.langsSeen.Load(); v != 0 {
			return langSet(v)
		}
	}
	set := langSet(1 << LangEnglish)
	for l := LangEnglish + 1; l < numLangs; l++ {
		_, ok, err := p.lookup(langMarker(l))
		if err != nil {
			return set // a damaged part: the search finds and drops it
		}
		if ok {
			set |= 1 << l
		}
	}
	if p.seg != nil {
		p.langsSeen.Store(uint32(set))
	}
	return set
}

// userLangs returns the languages of the documents of parts.
func userLangs(parts []*part) langSet {
	set := langSet(1 << LangEnglish)
	for _, p := range parts {
		set |= p.langs()
	}
	return set
}

// termLookups remembers one search's lookups of whole terms, part by
// part: expandLangs asks whether each stem of each word is in a part,
// then the planner asks each part again for the stems it keeps. A query
// of forty words in seven languages made some two thousand lookups, half
// of them twice.
type termLookups struct {
	parts []*part
	seen  map[string][]lookedUp // by term, one per part
}

type lookedUp struct {
	ref      termRef
	ok, done bool
	err      error
}

func newTermLookups(parts []*part) *termLookups {
	return &termLookups{parts: parts, seen: map[string][]lookedUp{}}
}

// get is parts[i].lookup(term), looked up once.
func (l *termLookups) get(i int, term string) (termRef, bool, error) {
	all := l.seen[term]
	if all == nil {
		all = make([]lookedUp, len(l.parts))
		l.seen[term] = all
	}
	if u := &all[i]; !u.done {
		u.ref, u.ok, u.err = l.parts[i].lookup(term)
		u.done = true
	}
	return all[i].ref, all[i].ok, all[i].err
}

// has returns whether a term is in the dictionary of one of the parts
// (a part that cannot tell counts as having it: the search finds it
// damaged).
func (l *termLookups) has(t string) bool {
	for i := range l.parts {
		if _, ok, err := l.get(i, t); ok || err != nil {
			return true
		}
	}
	return false
}

// expandLangs returns the query with each word (a Term or a Phrase with
// its words as written) made an Or of its terms in the languages of set,
// when they differ from the English one and has says the index holds
// them: a query of English words over mostly English items keeps the
// plain terms that rank fastest. Prefixes and near words match words as
// written, the same in every language, and are left alone.
func expandLangs(n Node, set langSet, has func(string) bool) Node {
	if set == 1<<LangEnglish {
		return n
	}
	switch x := n.(type) {
	case And:
		return And{Children: expandAll(x.Children, set, has)}
	case Or:
		return Or{Children: expandAll(x.Children, set, has)}
	case Not:
		return Not{Child: expandLangs(x.Child, set, has)}
	case AtLeast:
		return AtLeast{Min: x.Min, Children: expandAll(x.Children, set, has)}
	case Term:
		if x.Word == "" || x.Prefix || x.Fuzzy > 0 {
			return x
		}
		alts := []Node{Term{Field: x.Field, Text: x.Text}}
		seen := []string{x.Text}
		for l := LangEnglish + 1; l < numLangs; l++ {
			if !set.has(l) {
				continue
			}
			if t := queryTerm(l, x.Word, foldedWord(x.Word)); !slices.Contains(seen, t) && has(t) {
				seen = append(seen, t)
				alts = append(alts, Term{Field: x.Field, Text: t})
			}
		}
		if len(alts) == 1 {
			return x
		}
		return Or{Children: alts, langs: true}
	case Phrase:
		if len(x.Words) != len(x.Terms) {
			return x
		}
		alts := []Node{Phrase{Field: x.Field, Terms: x.Terms}}
		for l := LangEnglish + 1; l < numLangs; l++ {
			if !set.has(l) {
				continue
			}
			terms := make([]string, len(x.Words))
			for j, w := range x.Words {
				terms[j] = queryTerm(l, w, foldedWord(w))
			}
			if !slices.ContainsFunc(alts, func(a Node) bool { return slices.Equal(a.(Phrase).Terms, terms) }) && all(terms, has) {
				alts = append(alts, Phrase{Field: x.Field, Terms: terms})
			}
		}
		if len(alts) == 1 {
			return x
		}
		return Or{Children: alts}
	}
	return n
}

func expandAll(kids []Node, set langSet, has func(string) bool) []Node {
	out := make([]Node, len(kids))
	for i, k := range kids {
		out[i] = expandLangs(k, set, has)
	}
	return out
}

func all(terms []string, has func(string) bool) bool {
	for _, t := range terms {
		if !has(t) {
			return false
		}
	}
	return true
}

// foldedWord is a word as written folded as the analyzer folds it.
func foldedWord(w string) string { return string(appendFold(nil, w, foldWord)) }
