package search

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// evaluator runs a plan over one part.
type evaluator struct {
	sc     *scratch
	p      *part
	i      int
	r      *ranker
	docBuf []byte
	posBuf []byte
	it     postingIter
	err    error    // the part is damaged
	work   *budget  // the query's postings left, and its context
	prune  *pruning // set when the Or at the root may be pruned (prune.go)
	pruned int      // postings orPruned did not score, which tests count
	// merged counts the entries union wrote: merging an Or's sets
	// pairwise is quadratic in its children, which tests bound.
	merged int
	// docsOnly is set while an exclusion is evaluated: only its
	// documents count, so its terms and phrases are not scored.
	docsOnly bool
}

// excluded returns the documents p (a Not's child) matches, unscored
// where the evaluation allows: "money -free" scored every item with
// "free" only to drop them.
func (ev *evaluator) excluded(p *plan) set {
	was := ev.docsOnly
	ev.docsOnly = true
	s := ev.eval(p)
	ev.docsOnly = was
	return s
}

func (ev *evaluator) eval(p *plan) set {
	switch p.op {
	case opAnd:
		return ev.and(p)
	case opOr:
		if ev.prune != nil && p == ev.prune.root {
			return ev.orPruned(p)
		}
		if len(p.kids) >= denseOr {
			return ev.orDense(p)
		}
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
	case opAtLeast:
		return ev.atLeast(p)
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
	if !ev.work.spend(n) {
		return out
	}
	var excl set
	if p.op == opNot {
		excl = ev.excluded(p.kids[0])
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
		return c.kindAt(d) == p.value
	case opInteg:
		return c.integAt(d) == p.value
	case opDate:
		at := c.dates.at(d)
		return at >= p.after && at < p.before
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
		out = ev.subtract(out, ev.excluded(k.kids[0]))
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

// postings reads a term's postings after charging them to the query's
// budget: false when the part is damaged or the query must stop.
func (ev *evaluator) postings(ref termRef, withPos bool) (docs, pos []byte, ok bool) {
	if !ev.work.spend(int(ref.df)) {
		return nil, nil, false
	}
	docs, pos, err := ev.p.postings(ref, &ev.docBuf, &ev.posBuf, &ev.sc.blocks, withPos)
	if err != nil {
		ev.err = err
		return nil, nil, false
	}
	return docs, pos, true
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
	case opOr, opAtLeast:
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
	if in.scores == nil && !ev.docsOnly { // a set of filters: every score zero so far
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
		if in.scores != nil {
			in.scores[keep] = in.scores[j] + ev.r.score(w.idf, &it.tf, &c.lens[d], f)
		}
		keep++
	}
	if it.err != nil {
		ev.err = it.err
	}
	in.docs = in.docs[:keep]
	if in.scores != nil {
		in.scores = in.scores[:keep]
	}
	return in
}

func (ev *evaluator) termSet(w weighted, f Field) set {
	docs, _, ok := ev.postings(w.ref, false)
	if !ok {
		return set{}
	}
	c := ev.p.cols()
	out := ev.newSet(!ev.docsOnly)
	out.docs = slices.Grow(out.docs, int(w.ref.df))
	if out.scores != nil {
		out.scores = slices.Grow(out.scores, int(w.ref.df))
	}
	it := &ev.it
	it.reset(docs, nil)
	for {
		g, ok := it.nextOne()
		if !ok {
			break
		}
		d := it.doc
		if int(d) >= len(c.lens) {
			ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
			return set{}
		}
		if !it.inField(g, f) {
			continue
		}
		out.docs = append(out.docs, d)
		switch {
		case out.scores == nil:
		case g >= 0:
			out.scores = append(out.scores, ev.r.scoreOne(w.idf, g, &c.lens[d]))
		default:
			out.scores = append(out.scores, ev.r.score(w.idf, &it.tf, &c.lens[d], f))
		}
	}
	if it.err != nil {
		ev.err = it.err
		return set{}
	}
	return out
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
	acc := ev.sc.dense(c.len())
	hit := ev.sc.hits(c.len())
	for _, w := range refs {
		if !ev.addPostings(w, p.field, acc, hit) {
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

func (ev *evaluator) phrase(p *plan) set {
	refs := p.phrase[ev.i]
	if refs == nil {
		return set{}
	}
	c := ev.p.cols()
	its := make([]postingIter, len(refs))
	for j, ref := range refs {
		if !ev.work.spend(int(ref.df)) {
			return set{}
		}
		// Each word has buffers of its own for streams that span blocks.
		var docBuf, posBuf []byte
		docs, pos, err := ev.p.postings(ref, &docBuf, &posBuf, &ev.sc.blocks, true)
		if err != nil {
			ev.err = err
			return set{}
		}
		its[j].reset(docs, pos)
		if !its[j].next() {
			return set{}
		}
	}
	out := ev.newSet(!ev.docsOnly)
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
		if inSequence(its, p.field, &cur, &next) {
			if int(d) >= len(c.lens) {
				ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
				return set{}
			}
			out.docs = append(out.docs, d)
			if out.scores != nil {
				var s float64
				for j := range its {
					s += ev.r.score(p.idfs[j], &its[j].tf, &c.lens[d], p.field)
				}
				out.scores = append(out.scores, s)
			}
		}
		if !its[0].next() {
			return out
		}
	}
}

// inSequence reports whether the words of its, all on the same document,
// follow each other in one of its fields (field, unless FieldAny). cur
// and next are buffers it reuses from one document to the next.
func inSequence(its []postingIter, field Field, cur, next *[]uint32) bool {
	for f := range numFields {
		if field != FieldAny && Field(f) != field {
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
		*cur = its[0].positions((*cur)[:0], Field(f))
		for j := 1; j < len(its) && len(*cur) > 0; j++ {
			*next = its[j].positions((*next)[:0], Field(f))
			*cur = follow(*cur, *next, uint32(j))
		}
		if len(*cur) > 0 {
			return true
		}
	}
	return false
}
