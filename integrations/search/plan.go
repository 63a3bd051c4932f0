package search

import (
	"errors"
	"fmt"
)

// maxExpansions bounds the terms one prefix expands to in one part.
const maxExpansions = 50_000

// Plan operators.
const (
	opAll = iota // every document
	opAnd
	opOr
	opNot
	opTerm
	opPhrase
	opKind
	opInteg
	opDate
)

// plan is a query tree resolved against a user's parts: each term looked
// up in each part and weighted by its idf over the whole user index.
type plan struct {
	op     int
	kids   []*plan
	field  Field
	refs   [][]weighted // opTerm: per part, the matching terms
	phrase [][]termRef  // opPhrase: per part, one per word (df 0: absent)
	idfs   []float64    // opPhrase: per word
	words  []string     // opPhrase
	value  string       // opKind, opInteg
	after  int64        // opDate, Unix ms; inclusive
	before int64        // opDate, Unix ms; exclusive
}

type weighted struct {
	ref termRef
	idf float64
}

// ErrBadQuery is returned for a query tree the index cannot run.
var ErrBadQuery = errors.New("search: bad query")

// planner builds a plan; lookups that fail mark the part bad.
type planner struct {
	parts []*part
	r     *ranker
	df    map[string]int
}

func (pl *planner) lookup(i int, term string) (termRef, bool) {
	p := pl.parts[i]
	if p.bad.Load() {
		return termRef{}, false
	}
	ref, ok, err := p.lookup(term)
	if err != nil {
		p.bad.Store(true)
		return termRef{}, false
	}
	return ref, ok
}

func (pl *planner) build(n Node, depth int) (*plan, error) {
	if depth > 100 {
		return nil, fmt.Errorf("%w: nested too deeply", ErrBadQuery)
	}
	switch n := n.(type) {
	case And:
		return pl.kids(opAnd, n.Children, depth)
	case *And:
		return pl.kids(opAnd, n.Children, depth)
	case Or:
		return pl.kids(opOr, n.Children, depth)
	case *Or:
		return pl.kids(opOr, n.Children, depth)
	case Not:
		return pl.kids(opNot, []Node{n.Child}, depth)
	case *Not:
		return pl.kids(opNot, []Node{n.Child}, depth)
	case Term:
		return pl.checkedTerm(n)
	case *Term:
		return pl.checkedTerm(*n)
	case Phrase:
		return pl.phrase(n), nil
	case *Phrase:
		return pl.phrase(*n), nil
	case Kind:
		return &plan{op: opKind, value: n.Kind}, nil
	case Integration:
		return &plan{op: opInteg, value: n.Integration}, nil
	case DateRange:
		p := &plan{op: opDate, after: -1 << 63, before: 1<<63 - 1}
		if !n.After.IsZero() {
			p.after = n.After.UnixMilli()
		}
		if !n.Before.IsZero() {
			p.before = n.Before.UnixMilli()
		}
		return p, nil
	}
	return nil, fmt.Errorf("%w: unknown node %T", ErrBadQuery, n)
}

func (pl *planner) kids(op int, children []Node, depth int) (*plan, error) {
	if len(children) == 0 || op == opNot && children[0] == nil {
		return nil, fmt.Errorf("%w: empty group", ErrBadQuery)
	}
	p := &plan{op: op}
	for _, c := range children {
		k, err := pl.build(c, depth+1)
		if err != nil {
			return nil, err
		}
		p.kids = append(p.kids, k)
	}
	return p, nil
}

// minPrefix is the shortest prefix run, in bytes: a shorter one would
// walk most of the dictionary.
const minPrefix = 2

func (pl *planner) checkedTerm(t Term) (*plan, error) {
	if t.Text == "" || t.Prefix && len(t.Text) < minPrefix {
		return nil, fmt.Errorf("%w: term too short", ErrBadQuery)
	}
	return pl.term(t), nil
}

func (pl *planner) term(t Term) *plan {
	p := &plan{op: opTerm, field: t.Field, refs: make([][]weighted, len(pl.parts))}
	for i, part := range pl.parts {
		if part.bad.Load() {
			continue
		}
		if !t.Prefix {
			if ref, ok := pl.lookup(i, t.Text); ok {
				p.refs[i] = append(p.refs[i], weighted{ref: ref})
			}
			continue
		}
		for _, pre := range []string{t.Text, wordMark + t.Text} {
			err := part.prefix(pre, func(ref termRef) bool {
				p.refs[i] = append(p.refs[i], weighted{ref: ref})
				return len(p.refs[i]) < maxExpansions
			})
			if err != nil {
				part.bad.Store(true)
				p.refs[i] = nil
				break
			}
		}
	}
	for i := range p.refs {
		for _, w := range p.refs[i] {
			pl.df[w.ref.term] += int(w.ref.df)
		}
	}
	return p
}

func (pl *planner) phrase(ph Phrase) *plan {
	if len(ph.Terms) == 1 {
		return pl.term(Term{Field: ph.Field, Text: ph.Terms[0]})
	}
	p := &plan{op: opPhrase, field: ph.Field, phrase: make([][]termRef, len(pl.parts)), idfs: make([]float64, len(ph.Terms))}
	for i := range pl.parts {
		refs := make([]termRef, len(ph.Terms))
		for j, t := range ph.Terms {
			ref, ok := pl.lookup(i, t)
			if !ok {
				refs = nil
				break
			}
			refs[j] = ref
			pl.df[t] += int(ref.df)
		}
		p.phrase[i] = refs
	}
	p.words = ph.Terms
	return p
}

// finish turns document frequencies into weights, once every part has
// been looked up.
func (pl *planner) finish(p *plan) {
	for _, k := range p.kids {
		pl.finish(k)
	}
	switch p.op {
	case opTerm:
		for i := range p.refs {
			for j := range p.refs[i] {
				w := &p.refs[i][j]
				w.idf = idf(pl.df[w.ref.term], pl.r.n)
			}
		}
	case opPhrase:
		for j, t := range p.words {
			p.idfs[j] = idf(pl.df[t], pl.r.n)
		}
	}
}
