package search

import (
	"fmt"
	"math"
)

// An Or of many children (a question pasted whole, a list of words
// joined with OR) is accumulated densely, as a prefix's words are: each
// child's postings add their scores into one array by document, and one
// pass over it makes the set. Merging the children's sets two at a time
// copied the growing set once per child, quadratic in the number of
// words: a 40-word Or over a large index spent most of its time there.
// The scores are the same to the last bit whatever the order of the
// additions (see scoreQuantum), so the ranking does not change.

// denseOr is the number of children from which an Or is accumulated
// densely; fewer are merged as sets, which costs nothing per document
// the query does not match.
const denseOr = 5

// orDense evaluates an opOr plan of many children.
func (ev *evaluator) orDense(p *plan) set {
	n := ev.p.cols().len()
	acc, hit := ev.sc.takeDense(n)
	defer ev.sc.giveDense(acc, hit)
	scored := false
	for _, k := range p.kids {
		if termsOnly(k, 0) {
			// A term, or an Or of terms (a word and its stems in the
			// user's other languages), adds its postings' scores
			// directly, without a set: a document's score is the same
			// sum (see scoreQuantum).
			if !ev.addTerms(k, acc, hit) {
				return set{}
			}
			scored = true
			continue
		}
		s := ev.eval(k)
		for j, d := range s.docs {
			if int(d) >= n {
				ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
				ev.release(s)
				return set{}
			}
			hit[d] = true
			if s.scores != nil {
				acc[d] += s.scores[j]
			}
		}
		scored = scored || s.scores != nil
		ev.release(s)
	}
	out := ev.newSet(scored)
	for d, h := range hit {
		if h {
			out.docs = append(out.docs, uint32(d))
			if scored {
				out.scores = append(out.scores, acc[d])
			}
		}
	}
	return out
}

// termsOnly reports whether p is a term, or an Or of terms and such Ors.
func termsOnly(p *plan, depth int) bool {
	switch {
	case p.op == opTerm:
		return true
	case p.op != opOr || depth > 100:
		return false
	}
	for _, k := range p.kids {
		if !termsOnly(k, depth+1) {
			return false
		}
	}
	return true
}

// addTerms adds the postings of every term of p (termsOnly) to acc and
// hit, as addPostings does; false when the part is damaged or the query
// must stop.
func (ev *evaluator) addTerms(p *plan, acc []float64, hit []bool) bool {
	if p.op == opTerm {
		for _, w := range p.refs[ev.i] {
			if !ev.addPostings(w, p.field, acc, hit) {
				return false
			}
		}
		return true
	}
	for _, k := range p.kids {
		if !ev.addTerms(k, acc, hit) {
			return false
		}
	}
	return true
}

// addPostings adds the score of each document of a term's postings (in
// field f, unless FieldAny) to acc, marking it in hit; false when the
// part is damaged or the query must stop.
func (ev *evaluator) addPostings(w weighted, f Field, acc []float64, hit []bool) bool {
	return ev.addScores(w, f, acc, hit, 0, math.Inf(-1))
}

// addScores is addPostings scoring only the documents whose sum so far
// plus left reaches theta (prune.go); the others are marked unscored.
func (ev *evaluator) addScores(w weighted, f Field, acc []float64, hit []bool, left, theta float64) bool {
	docs, _, ok := ev.postings(w.ref, false)
	if !ok {
		return false
	}
	c := ev.p.cols()
	it := &ev.it
	it.reset(docs, nil)
	for {
		g, ok := it.nextOne()
		if !ok {
			break
		}
		d := it.doc
		if int(d) >= len(acc) {
			ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
			return false
		}
		if !it.inField(g, f) {
			continue
		}
		hit[d] = true
		if acc[d]+left < theta {
			ev.pruned++
			continue
		}
		if g >= 0 { // the common entry, inlined: most of a common word's postings
			acc[d] += ev.r.scoreOne(w.idf, g, &c.lens[d])
		} else {
			acc[d] += ev.r.score(w.idf, &it.tf, &c.lens[d], f)
		}
	}
	if it.err != nil {
		ev.err = it.err
		return false
	}
	return true
}
