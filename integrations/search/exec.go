package search

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
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

// set is a sorted list of matching documents of one part, with scores
// (nil when every score is zero).
type set struct {
	docs   []uint32
	scores []float64
}

// scratch holds slices for sets, kept between queries so a query does not
// allocate its sets anew.
type scratch struct {
	docs   [][]uint32
	scores [][]float64
}

func (ev *evaluator) newSet(scores bool) set {
	var s set
	if n := len(ev.sc.docs); n > 0 {
		s.docs = ev.sc.docs[n-1][:0]
		ev.sc.docs = ev.sc.docs[:n-1]
	}
	if !scores {
		return s
	}
	if n := len(ev.sc.scores); n > 0 {
		s.scores = ev.sc.scores[n-1][:0]
		ev.sc.scores = ev.sc.scores[:n-1]
	} else {
		s.scores = []float64{}
	}
	return s
}

// release gives a set's slices back; the set is not used after.
func (ev *evaluator) release(s set) {
	if s.docs != nil {
		ev.sc.docs = append(ev.sc.docs, s.docs)
	}
	if s.scores != nil {
		ev.sc.scores = append(ev.sc.scores, s.scores)
	}
}

// evaluator runs a plan over one part.
type evaluator struct {
	sc     *scratch
	p      *part
	i      int
	r      *ranker
	docBuf []byte
	posBuf []byte
	it     postingIter
	err    error
}

func (ev *evaluator) eval(p *plan) set {
	switch p.op {
	case opAnd:
		return ev.and(p)
	case opOr:
		var out set
		for j, k := range p.kids {
			s := ev.eval(k)
			if j == 0 {
				out = s
			} else {
				out = ev.union(out, s)
			}
		}
		return out
	case opNot:
		return ev.filter(p)
	case opTerm:
		return ev.term(p)
	case opPhrase:
		return ev.phrase(p)
	default:
		return ev.filter(p)
	}
}

// filter evaluates a node that does not score against every document.
func (ev *evaluator) filter(p *plan) set {
	n := ev.p.docs()
	out := ev.newSet(false)
	var excl set
	if p.op == opNot {
		excl = ev.eval(p.kids[0])
		defer ev.release(excl)
	}
	j := 0
	for d := range uint32(n) {
		if p.op == opNot {
			for j < len(excl.docs) && excl.docs[j] < d {
				j++
			}
			if j < len(excl.docs) && excl.docs[j] == d {
				continue
			}
		} else if !ev.accept(p, d) {
			continue
		}
		out.docs = append(out.docs, d)
	}
	return out
}

func isFilter(p *plan) bool { return p.op == opKind || p.op == opInteg || p.op == opDate }

// accept tests a filter node on one document's columns.
func (ev *evaluator) accept(p *plan, d uint32) bool {
	c := ev.p.cols()
	switch p.op {
	case opKind:
		return c.kinds[c.kind[d]] == p.value
	case opInteg:
		return c.integs[c.integ[d]] == p.value
	case opDate:
		return c.dates[d] >= p.after && c.dates[d] < p.before
	}
	return true
}

func (ev *evaluator) and(p *plan) set {
	var out set
	have := false
	var filters, nots []*plan
	// The rarest first: a single term after it only walks its postings
	// to the documents still in, scoring just those.
	kids := slices.Clone(p.kids)
	slices.SortStableFunc(kids, func(a, b *plan) int { return cmp.Compare(ev.cost(a), ev.cost(b)) })
	for _, k := range kids {
		switch {
		case isFilter(k):
			filters = append(filters, k)
		case k.op == opNot:
			nots = append(nots, k)
		case have && k.op == opTerm && len(k.refs[ev.i]) == 1:
			out = ev.termAnd(out, k.refs[ev.i][0], k.field)
			if len(out.docs) == 0 {
				return out
			}
		default:
			s := ev.eval(k)
			if !have {
				out, have = s, true
			} else {
				out = ev.intersect(out, s)
			}
			if len(out.docs) == 0 {
				return out
			}
		}
	}
	if !have {
		out = ev.filter(&plan{op: opAll})
	}
	for _, k := range nots {
		out = ev.subtract(out, ev.eval(k.kids[0]))
	}
	if len(filters) > 0 {
		keep := 0
		for j, d := range out.docs {
			ok := true
			for _, f := range filters {
				if !ev.accept(f, d) {
					ok = false
					break
				}
			}
			if ok {
				out.docs[keep] = d
				if out.scores != nil {
					out.scores[keep] = out.scores[j]
				}
				keep++
			}
		}
		out.docs = out.docs[:keep]
		if out.scores != nil {
			out.scores = out.scores[:keep]
		}
	}
	return out
}

func (ev *evaluator) postings(ref termRef, withPos bool) (docs, pos []byte, ok bool) {
	docs, pos, err := ev.p.postings(ref, &ev.docBuf, &ev.posBuf, withPos)
	if err != nil {
		ev.err = err
		return nil, nil, false
	}
	return docs, pos, true
}

func (ev *evaluator) term(p *plan) set {
	refs := p.refs[ev.i]
	c := ev.p.cols()
	if len(refs) == 1 {
		return ev.termSet(refs[0], p.field)
	}
	if len(refs) <= 4 {
		var out set
		for j, w := range refs {
			s := ev.termSet(w, p.field)
			if j == 0 {
				out = s
			} else {
				out = ev.union(out, s)
			}
		}
		return out
	}
	// Many terms (a prefix): accumulate densely.
	acc := make([]float64, c.len())
	hit := make([]bool, c.len())
	for _, w := range refs {
		docs, _, ok := ev.postings(w.ref, false)
		if !ok {
			return set{}
		}
		ev.it.reset(docs, nil)
		for ev.it.next() {
			d := ev.it.doc
			if int(d) >= len(acc) {
				ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
				return set{}
			}
			if p.field != FieldAny && ev.it.tf[p.field] == 0 {
				continue
			}
			hit[d] = true
			acc[d] += ev.r.score(w.idf, &ev.it.tf, &c.lens[d], p.field)
		}
		if ev.it.err != nil {
			ev.err = ev.it.err
			return set{}
		}
	}
	out := ev.newSet(true)
	for d, h := range hit {
		if h {
			out.docs = append(out.docs, uint32(d))
			out.scores = append(out.scores, acc[d])
		}
	}
	return out
}

// cost estimates the postings a node reads in this part.
func (ev *evaluator) cost(p *plan) int {
	switch p.op {
	case opTerm:
		n := 0
		for _, w := range p.refs[ev.i] {
			n += int(w.ref.df)
		}
		return n
	case opPhrase:
		n := 0
		for _, r := range p.phrase[ev.i] {
			n += int(r.df)
		}
		return n
	case opAnd:
		n := math.MaxInt
		for _, k := range p.kids {
			if k.op != opNot && !isFilter(k) {
				n = min(n, ev.cost(k))
			}
		}
		return n
	case opOr:
		n := 0
		for _, k := range p.kids {
			n += ev.cost(k)
		}
		return n
	}
	return math.MaxInt // filters and exclusions go last anyway
}

// termAnd keeps the documents of in that have the term, adding its score.
func (ev *evaluator) termAnd(in set, w weighted, f Field) set {
	docs, _, ok := ev.postings(w.ref, false)
	if !ok {
		return in
	}
	c := ev.p.cols()
	if in.scores == nil { // a set of filters: every score zero so far
		in.scores = ev.newSet(true).scores
		in.scores = append(in.scores, make([]float64, len(in.docs))...)
	}
	it := &ev.it
	it.reset(docs, nil)
	keep := 0
	for j, d := range in.docs {
		if !it.advance(d) {
			break
		}
		if it.doc != d || f != FieldAny && it.tf[f] == 0 {
			continue
		}
		if int(d) >= len(c.lens) {
			ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
			return in
		}
		in.docs[keep] = d
		in.scores[keep] = in.scores[j] + ev.r.score(w.idf, &it.tf, &c.lens[d], f)
		keep++
	}
	if it.err != nil {
		ev.err = it.err
	}
	in.docs = in.docs[:keep]
	in.scores = in.scores[:keep]
	return in
}

func (ev *evaluator) termSet(w weighted, f Field) set {
	docs, _, ok := ev.postings(w.ref, false)
	if !ok {
		return set{}
	}
	c := ev.p.cols()
	out := ev.newSet(true)
	it := &ev.it
	it.reset(docs, nil)
	for it.next() {
		d := it.doc
		if int(d) >= len(c.lens) {
			ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
			return set{}
		}
		if f != FieldAny && it.tf[f] == 0 {
			continue
		}
		out.docs = append(out.docs, d)
		out.scores = append(out.scores, ev.r.score(w.idf, &it.tf, &c.lens[d], f))
	}
	if it.err != nil {
		ev.err = it.err
		return set{}
	}
	return out
}

func (ev *evaluator) phrase(p *plan) set {
	refs := p.phrase[ev.i]
	if refs == nil {
		return set{}
	}
	c := ev.p.cols()
	its := make([]postingIter, len(refs))
	for j, ref := range refs {
		// Each word has buffers of its own for streams that span blocks.
		var docBuf, posBuf []byte
		docs, pos, err := ev.p.postings(ref, &docBuf, &posBuf, true)
		if err != nil {
			ev.err = err
			return set{}
		}
		its[j].reset(docs, pos)
		if !its[j].next() {
			return set{}
		}
	}
	out := ev.newSet(true)
	var cur, next []uint32
	for {
		// Line every iterator up on the same document.
		d := its[0].doc
		aligned := true
		for j := range its {
			if !its[j].advance(d) {
				ev.err = errors.Join(ev.err, its[j].err)
				return out
			}
			if its[j].doc != d {
				d = its[j].doc
				aligned = false
			}
		}
		if !aligned {
			if !its[0].advance(d) {
				return out
			}
			continue
		}
		matched := false
		for f := range numFields {
			if p.field != FieldAny && Field(f) != p.field {
				continue
			}
			all := true
			for j := range its {
				if its[j].tf[f] == 0 {
					all = false
					break
				}
			}
			if !all {
				continue
			}
			cur = its[0].positions(cur[:0], Field(f))
			for j := 1; j < len(its) && len(cur) > 0; j++ {
				next = its[j].positions(next[:0], Field(f))
				cur = follow(cur, next, uint32(j))
			}
			if len(cur) > 0 {
				matched = true
				break
			}
		}
		if matched {
			if int(d) >= len(c.lens) {
				ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
				return set{}
			}
			var s float64
			for j := range its {
				s += ev.r.score(p.idfs[j], &its[j].tf, &c.lens[d], p.field)
			}
			out.docs = append(out.docs, d)
			out.scores = append(out.scores, s)
		}
		if !its[0].next() {
			return out
		}
	}
}

// follow keeps the starts in cur whose word j is in next (at start+j).
func follow(cur, next []uint32, j uint32) []uint32 {
	keep := cur[:0]
	k := 0
	for _, s := range cur {
		for k < len(next) && next[k] < s+j {
			k++
		}
		if k < len(next) && next[k] == s+j {
			keep = append(keep, s)
		}
	}
	return keep
}

func scoreAt(s set, i int) float64 {
	if s.scores == nil {
		return 0
	}
	return s.scores[i]
}

func (ev *evaluator) intersect(a, b set) set {
	out := ev.newSet(a.scores != nil || b.scores != nil)
	defer ev.release(a)
	defer ev.release(b)
	withScores := a.scores != nil || b.scores != nil
	i, j := 0, 0
	for i < len(a.docs) && j < len(b.docs) {
		switch {
		case a.docs[i] < b.docs[j]:
			i++
		case a.docs[i] > b.docs[j]:
			j++
		default:
			out.docs = append(out.docs, a.docs[i])
			if withScores {
				out.scores = append(out.scores, scoreAt(a, i)+scoreAt(b, j))
			}
			i++
			j++
		}
	}
	return out
}

func (ev *evaluator) union(a, b set) set {
	out := ev.newSet(a.scores != nil || b.scores != nil)
	defer ev.release(a)
	defer ev.release(b)
	withScores := a.scores != nil || b.scores != nil
	i, j := 0, 0
	for i < len(a.docs) || j < len(b.docs) {
		switch {
		case j == len(b.docs) || i < len(a.docs) && a.docs[i] < b.docs[j]:
			out.docs = append(out.docs, a.docs[i])
			if withScores {
				out.scores = append(out.scores, scoreAt(a, i))
			}
			i++
		case i == len(a.docs) || a.docs[i] > b.docs[j]:
			out.docs = append(out.docs, b.docs[j])
			if withScores {
				out.scores = append(out.scores, scoreAt(b, j))
			}
			j++
		default:
			out.docs = append(out.docs, a.docs[i])
			if withScores {
				out.scores = append(out.scores, scoreAt(a, i)+scoreAt(b, j))
			}
			i++
			j++
		}
	}
	return out
}

func (ev *evaluator) subtract(a, b set) set {
	out := ev.newSet(a.scores != nil)
	defer ev.release(a)
	defer ev.release(b)
	j := 0
	for i, d := range a.docs {
		for j < len(b.docs) && b.docs[j] < d {
			j++
		}
		if j < len(b.docs) && b.docs[j] == d {
			continue
		}
		out.docs = append(out.docs, d)
		if a.scores != nil {
			out.scores = append(out.scores, a.scores[i])
		}
	}
	return out
}
