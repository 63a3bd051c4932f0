package search

import (
	"errors"
	"fmt"
	"math"
)

// maxExpansions bounds the words the prefixes of one query expand to,
// all prefixes and all parts together: each (word, part) pair is one
// postings list read. Each prefix gets an equal share in each part
// (maxExpansions over prefixes times parts); a part is walked in
// dictionary order, so what a prefix loses to its share is its last
// words, the same ones in every part.
const maxExpansions = 50_000

// prefixes counts the prefix and fuzzy terms of a query tree, for their
// shares of maxExpansions.
func prefixes(n Node, depth int) int {
	if depth > 100 {
		return 0
	}
	var kids []Node
	switch n := n.(type) {
	case And:
		kids = n.Children
	case *And:
		kids = n.Children
	case Or:
		kids = n.Children
	case *Or:
		kids = n.Children
	case AtLeast:
		kids = n.Children
	case Not:
		kids = []Node{n.Child}
	case *Not:
		kids = []Node{n.Child}
	case Term:
		if n.Prefix || n.Fuzzy > 0 {
			return 1
		}
	case *Term:
		if n.Prefix || n.Fuzzy > 0 {
			return 1
		}
	}
	c := 0
	for _, k := range kids {
		c += prefixes(k, depth+1)
	}
	return c
}

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
	opAtLeast
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
	min    int          // opAtLeast: the children a document must match
	exact  bool         // opTerm: a word as it is, not a prefix nor fuzzy (proximity, rank.go)
	langs  bool         // opOr: one word's terms in the user's languages (expandLangs)
	word   int          // opTerm: the query word it is, for proximity (proximityTerms)
	stop   bool         // opTerm: an exact function word, weighing nothing beside others (rank.go's quietStopwords)
}

type weighted struct {
	ref termRef
	idf float64
}

// ErrBadQuery is returned for a query tree the index cannot run.
var ErrBadQuery = errors.New("search: bad query")

// planner builds a plan; lookups that fail mark the part bad.
//
// Each Term and each word of a Phrase is weighted by its document
// frequency over the whole user index. The frequencies are recorded in
// dfs, in the order the tree is walked: a relevance cursor carries them
// (and the ranker's figures) so that later pages are scored as the first
// was, whatever was added, merged or deleted since. When frozen is set
// (a later page), its frequencies are used instead of the index's.
type planner struct {
	parts  []*part
	r      *ranker
	dfs    []int
	frozen []int
	share  int          // the expansions one prefix may have in one part
	known  *termLookups // the search's lookups so far, when it keeps them
}

func newPlanner(parts []*part, r *ranker, q Node) *planner {
	return &planner{parts: parts, r: r, share: maxExpansions / max(1, prefixes(q, 0)*len(parts))}
}

// weight returns the idf of a query term found in df documents now, or
// the one the cursor recorded for it.
func (pl *planner) weight(df int) (float64, error) {
	i := len(pl.dfs)
	if i >= MaxTerms {
		return 0, fmt.Errorf("%w: more than %d terms", ErrBadQuery, MaxTerms)
	}
	if pl.frozen != nil {
		if i >= len(pl.frozen) {
			return 0, ErrBadCursor
		}
		df = pl.frozen[i]
	}
	pl.dfs = append(pl.dfs, df)
	return idf(min(df, pl.r.n), pl.r.n), nil
}

func (pl *planner) lookup(i int, term string) (termRef, bool) {
	p := pl.parts[i]
	if p.bad.Load() {
		return termRef{}, false
	}
	var ref termRef
	var ok bool
	var err error
	if pl.known != nil {
		ref, ok, err = pl.known.get(i, term)
	} else {
		ref, ok, err = p.lookup(term)
	}
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
		return pl.or(n, depth)
	case *Or:
		return pl.or(*n, depth)
	case AtLeast:
		if n.Min < 1 || n.Min > len(n.Children) {
			return nil, fmt.Errorf("%w: at least %d of %d", ErrBadQuery, n.Min, len(n.Children))
		}
		p, err := pl.kids(opAtLeast, n.Children, depth)
		if p != nil {
			p.min = n.Min
		}
		return p, err
	case Not:
		return pl.kids(opNot, []Node{n.Child}, depth)
	case *Not:
		return pl.kids(opNot, []Node{n.Child}, depth)
	case Term:
		return pl.checkedTerm(n)
	case *Term:
		return pl.checkedTerm(*n)
	case Phrase:
		return pl.phrase(n)
	case *Phrase:
		return pl.phrase(*n)
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

// or plans an Or; one of a word's terms in the user's languages is
// marked so.
func (pl *planner) or(n Or, depth int) (*plan, error) {
	p, err := pl.kids(opOr, n.Children, depth)
	if p != nil {
		p.langs = n.langs
	}
	return p, err
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
	return pl.term(t)
}

// term looks a term up in every part. A prefix (or a fuzzy term) is
// weighted as one term found in the documents of all its words (their
// frequencies summed, at most every document): each word it matched in a
// document adds to the score with that one weight.
func (pl *planner) term(t Term) (*plan, error) {
	p := &plan{op: opTerm, field: t.Field, refs: make([][]weighted, len(pl.parts)), exact: !t.Prefix && t.Fuzzy == 0 && !marked(t.Text)}
	p.stop = p.exact && rankStops[t.Text]
	var ed editor
	for i, part := range pl.parts {
		if part.bad.Load() {
			continue
		}
		if t.Fuzzy > 0 && !t.Prefix {
			for _, mark := range []string{"", wordMark} {
				if len(p.refs[i]) >= pl.share {
					break
				}
				err := part.near(&ed, mark, t.Text, min(t.Fuzzy, 2), func(ref termRef, _ int) bool {
					p.refs[i] = append(p.refs[i], weighted{ref: ref})
					return len(p.refs[i]) < pl.share
				})
				if err != nil {
					part.bad.Store(true)
					p.refs[i] = nil
					break
				}
			}
			continue
		}
		if !t.Prefix {
			if ref, ok := pl.lookup(i, t.Text); ok {
				p.refs[i] = append(p.refs[i], weighted{ref: ref})
			}
			continue
		}
		for _, pre := range []string{t.Text, wordMark + t.Text} {
			if len(p.refs[i]) >= pl.share {
				break
			}
			err := part.prefix(pre, pl.share-len(p.refs[i]), func(ref termRef) {
				p.refs[i] = append(p.refs[i], weighted{ref: ref})
			})
			if err != nil {
				part.bad.Store(true)
				p.refs[i] = nil
				break
			}
		}
	}
	var df uint64
	for i := range p.refs {
		for _, w := range p.refs[i] {
			df += uint64(w.ref.df)
		}
	}
	w, err := pl.weight(int(min(df, math.MaxInt32)))
	if err != nil {
		return nil, err
	}
	for i := range p.refs {
		for j := range p.refs[i] {
			p.refs[i][j].idf = w
		}
	}
	return p, nil
}

func (pl *planner) phrase(ph Phrase) (*plan, error) {
	if len(ph.Terms) == 1 {
		return pl.term(Term{Field: ph.Field, Text: ph.Terms[0]})
	}
	if len(ph.Terms) == 0 {
		return nil, fmt.Errorf("%w: empty phrase", ErrBadQuery)
	}
	p := &plan{op: opPhrase, field: ph.Field, phrase: make([][]termRef, len(pl.parts)), idfs: make([]float64, len(ph.Terms))}
	dfs := make([]uint64, len(ph.Terms))
	for i := range pl.parts {
		refs := make([]termRef, len(ph.Terms))
		for j, t := range ph.Terms {
			ref, ok := pl.lookup(i, t)
			if ok {
				dfs[j] += uint64(ref.df)
			}
			if !ok && refs != nil {
				refs = nil
			}
			if refs != nil {
				refs[j] = ref
			}
		}
		p.phrase[i] = refs
	}
	for j := range ph.Terms {
		w, err := pl.weight(int(min(dfs[j], math.MaxInt32)))
		if err != nil {
			return nil, err
		}
		p.idfs[j] = w
	}
	p.words = ph.Terms
	return p, nil
}

// marked reports whether a term is one of the index's marked terms
// (postings.go: links, names, folders, the attachment and language
// marks), which have no positions: proximity must not read any.
func marked(term string) bool { return term != "" && term[0] < 0x20 }
