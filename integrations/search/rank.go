package search

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// Ranking is BM25F: a term's frequencies in the fields are weighted,
// each normalised by its field's length against the average, summed, and
// then saturated once with k1, as in BM25. The title weighs most, then
// the sender, then the recipients; the body text is the unit:
//
//	title 3, from 2, to 1.5, text 1;  k1 1.2;  b 0.75 in every field
//
// A query's score is the sum over its matched terms; a prefix adds each
// word it matched, all weighted by the idf of the prefix as a whole (see
// planner.term). Ties go to the newer item, then to the smaller id.
var fieldWeight = [numFields]float64{FieldTitle: 3, FieldFrom: 2, FieldTo: 1.5, FieldText: 1}

const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// idf is BM25's inverse document frequency of a term found in df of n
// documents; always positive.
func idf(df, n int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// ranker holds what scoring needs of the whole user index.
type ranker struct {
	n      int
	invAvg [numFields]float64 // 1 / average field length
}

func newRanker(parts []*part) ranker {
	var r ranker
	// A field's average length is over the documents that have it: most
	// have no recipients or no title, and an average lowered by them
	// would make those fields weigh less, not more.
	var sums, with [numFields]uint64
	for _, p := range parts {
		r.n += p.docs()
		for f, s := range p.lenSums() {
			sums[f] += s
		}
		for f, n := range p.withField() {
			with[f] += n
		}
	}
	for f := range sums {
		if sums[f] > 0 {
			r.invAvg[f] = float64(with[f]) / float64(sums[f])
		}
	}
	return r
}

// score is the BM25F score of a term with weight w (its idf) in a
// document with these field frequencies and lengths; only field f counts
// unless f is FieldAny.
func (r *ranker) score(w float64, tf *[numFields]uint32, lens *fieldLens, f Field) float64 {
	var t float64
	if f == FieldAny {
		for g, n := range tf {
			if n != 0 {
				t += fieldWeight[g] * float64(n) / (1 - bm25B + bm25B*float64(lens[g])*r.invAvg[g])
			}
		}
	} else if f < numFields && tf[f] != 0 {
		t = fieldWeight[f] * float64(tf[f]) / (1 - bm25B + bm25B*float64(lens[f])*r.invAvg[f])
	}
	return quantize(w * t * (bm25K1 + 1) / (bm25K1 + t))
}

// scoreOne is score for one occurrence in field g alone (postingIter's
// common entry), to the last bit: fieldWeight[g]·1 is fieldWeight[g].
func (r *ranker) scoreOne(w float64, g int, lens *fieldLens) float64 {
	t := fieldWeight[g] / (1 - bm25B + bm25B*float64(lens[g])*r.invAvg[g])
	return quantize(w * t * (bm25K1 + 1) / (bm25K1 + t))
}

// scoreQuantum is the grain of a term's score. Scores of terms are
// rounded to it, so adding them is exact whatever the order: the
// evaluator adds a document's terms in an order that depends on its part
// (the rarest first), and a cursor compares a later page's scores with
// the first page's to the last bit. A term scores below 2^6 (an idf of
// at most about 22 times k1+1), and a sum of multiples of 2^-32 is exact
// below 2^21: 2^15 terms of that weight matched in one document.
const scoreQuantum = 1.0 / (1 << 32)

// quantize rounds half to even: RoundToEven is one instruction on amd64
// and arm64 where Round is a call (4% of a common word's query).
func quantize(s float64) float64 { return math.RoundToEven(s/scoreQuantum) * scoreQuantum }

// Proximity (docs/search.md, "Ranking and freshness"): an item in which
// two of the query's words stand close together ranks above one that
// merely holds them. The bonus is from the closest two occurrences of
// two different words in one field, d positions apart (1: next to each
// other), and decays fast with d:
//
//	score += proximityWeight · ln(1 + e^(−d) / proximityAlpha)
//
// 0.40 for two words side by side, 0.19 one word apart, 0.08 two apart,
// nearly nothing beyond; an item with one of the words has none. This
// is the minimum-distance form, which on Cranfield, CISI and MEDLINE
// did as well as or better than scoring every pair of neighbouring
// words (BenchmarkRanking), at a fraction of the work: one pass over
// the item's occurrences, no counts per pair.
//
// Words in more than about a third of the items (idf under
// proximityMinIDF: "the", "of") and function words that weigh nothing
// (rankStopwords) take no part, so "models of heated aircraft" measures
// "models" to "heated". Only the words of the query as typed count (not
// prefixes, fuzzy words or exclusions), and only in a query of at most
// maxProximityTerms of them: a long query reads no positions for it. The
// bonus depends on the document and the query's frozen figures alone (a
// cursor's), so a later page scores a document as the first did.
const (
	maxProximityTerms = 12
	proximityMinIDF   = 1.0
	proximityAlpha    = 0.3
	proximityWeight   = 0.5
)

// rankStopwords are English function words: in a query that has other
// words they weigh nothing (quietStopwords), so that "what are the
// effects of heat on aircraft" ranks by "effects", "heat" and
// "aircraft", not by the rare item that also says "what". They still
// match: an item needs them where the query needs them.
const rankStopwords = "the and of to in is you that it for with this are on be have not your from was at by or will we an as if can our my has " +
	"a i so me do he she they but there what when would been " +
	"how which why who whom where does did were its than their these those into such also other some any only must should could shall being am very"

// rankStops holds the analyzed terms of rankStopwords.
var rankStops = func() map[string]bool {
	m := map[string]bool{}
	Analyze(rankStopwords, func(t Token) { m[strings.Clone(t.Term)] = true })
	return m
}()

// quietStopwords gives the query's function words (rankStopwords) no
// weight when it has at least one other exact word: a query of function
// words alone ("the who") is ranked by them.
func quietStopwords(root *plan) {
	var stops []*plan
	other := false
	var walk func(p *plan)
	walk = func(p *plan) {
		switch p.op {
		case opTerm:
			switch {
			case p.stop:
				stops = append(stops, p)
			case p.exact:
				other = true
			}
		case opAnd, opOr, opAtLeast:
			for _, k := range p.kids {
				walk(k)
			}
		}
	}
	walk(root)
	if !other {
		return
	}
	for _, p := range stops {
		for i := range p.refs {
			for j := range p.refs[i] {
				p.refs[i][j].idf = 0
			}
		}
	}
}

// proximityTerms returns the query's exact words that proximity weighs,
// in the query's order, each with its word (plan.word): the terms of one
// word in the user's languages (expandLangs) are one word, as "free" is
// one word whatever it stems to. None when fewer than two words, or more
// than maxProximityTerms terms: each term's positions are read, and a
// word in three languages is three of them.
func proximityTerms(root *plan) []*plan {
	var terms []*plan
	words := 0
	var walk func(p *plan, word int)
	walk = func(p *plan, word int) {
		switch p.op {
		case opTerm:
			if p.exact && termIDF(p) >= proximityMinIDF {
				if word < 0 {
					p.word, words = words, words+1
				} else {
					p.word = word
				}
				terms = append(terms, p)
			}
		case opOr:
			if p.langs && word < 0 {
				// Its terms share the next word, taken if one counts.
				before := len(terms)
				for _, k := range p.kids {
					walk(k, words)
				}
				if len(terms) > before {
					words++
				}
				return
			}
			for _, k := range p.kids {
				walk(k, word)
			}
		case opAnd, opAtLeast:
			for _, k := range p.kids {
				walk(k, word)
			}
		}
	}
	walk(root, -1)
	if words < 2 || len(terms) > maxProximityTerms {
		// A query of more words than that is a list of words (an OR of
		// forty), not a sentence: their pairs mean nothing, and reading
		// their positions doubled its time (BenchmarkAnswers).
		return nil
	}
	return terms
}

// termIDF is an opTerm plan's weight, the same in every part it has a
// term in.
func termIDF(p *plan) float64 {
	for _, refs := range p.refs {
		if len(refs) > 0 {
			return refs[0].idf
		}
	}
	return 0
}

// proximity adds the proximity scores of the words near to the documents
// of s, the matches of this part.
func (ev *evaluator) proximity(near []*plan, s set) {
	if len(near) < 2 || len(s.docs) == 0 || s.scores == nil || ev.err != nil {
		return
	}
	// Two words at least must be in this part, not two terms of one
	// word, or no item here can gain: no positions are read.
	var here uint64
	for _, p := range near {
		if len(p.refs[ev.i]) == 1 {
			here |= 1 << p.word
		}
	}
	if bits.OnesCount64(here) < 2 {
		return
	}
	// Every word keeps its place in the query, so that a word missing
	// from this part does not make its neighbours neighbours.
	its := make([]postingIter, len(near))
	for j, p := range near {
		if len(p.refs[ev.i]) != 1 {
			continue
		}
		w := p.refs[ev.i][0]
		if !ev.work.spend(int(w.ref.df)) {
			return
		}
		var docBuf, posBuf []byte
		docs, pos, err := ev.p.postings(w.ref, &docBuf, &posBuf, &ev.sc.blocks, true)
		if err != nil {
			ev.err = err
			return
		}
		its[j].reset(docs, pos)
	}
	c := ev.p.cols()
	var occ []uint64 // field<<56 | position<<8 | word
	var pos []uint32
	below := ev.proximityBelow(s)
	for k, d := range s.docs {
		if s.scores[k] < below {
			ev.pruned++
			continue
		}
		// An item with one of the words gains nothing: its positions are
		// not read (most of an OR's items).
		var words uint64
		for j := range its {
			it := &its[j]
			if !it.advance(d) {
				if it.err != nil {
					ev.err = it.err
					return
				}
				continue
			}
			if it.doc == d {
				words |= 1 << near[j].word
			}
		}
		if bits.OnesCount64(words) < 2 {
			continue
		}
		occ, pos = occurrences(its, near, d, occ[:0], pos)
		if int(d) >= len(c.lens) {
			ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
			return
		}
		if len(occ) > 1 {
			s.scores[k] += proximity(occ)
		}
	}
}

// occurrences appends to occ the occurrences in document d of the words
// whose iterators its stand at d (field<<56 | position<<8 | word, the
// word of near's term of the same index); pos is scratch.
func occurrences(its []postingIter, near []*plan, d uint32, occ []uint64, pos []uint32) ([]uint64, []uint32) {
	for j := range its {
		it := &its[j]
		if !it.started || it.doc != d {
			continue
		}
		for f := range numFields {
			if it.tf[f] == 0 {
				continue
			}
			pos = it.positions(pos[:0], Field(f))
			for _, at := range pos {
				occ = append(occ, uint64(f)<<56|uint64(at)<<8|uint64(near[j].word))
			}
		}
	}
	return occ, pos
}

// proximityBelow returns the score under which a document of s needs no
// proximity bonus, as it cannot reach the page (prune.go): under θ, the
// score limit+1 documents the page may show already have, by more than
// the most proximity adds (two words side by side, see proximity). Such a
// document keeps the score it has, below θ and so below limit+1
// documents scored exactly. -Inf when every document needs it.
func (ev *evaluator) proximityBelow(s set) float64 {
	if ev.prune == nil {
		return math.Inf(-1)
	}
	h := ev.kth()
	least := h.least()
	for k, d := range s.docs {
		// A full heap takes only a score above its least (kthScore).
		if s.scores[k] > least || len(h.top) < h.k {
			h.offer(d, s.scores[k])
			least = h.least()
		}
	}
	theta := max(ev.prune.floor, h.done())
	most := proximityWeight*math.Log1p(math.Exp(-1)/proximityAlpha)*(1+1e-9) + scoreQuantum
	return theta - most
}

// proximity is the proximity bonus of one document from the occurrences
// of the query's words in it (field<<56 | position<<8 | word, any order).
// The closest two occurrences of different words are neighbours once
// sorted: any occurrence between them is nearer to one of the two, and
// of a word other than that one's.
func proximity(occ []uint64) float64 {
	slices.Sort(occ)
	best := uint64(math.MaxUint64)
	for k := 1; k < len(occ); k++ {
		a, b := occ[k-1], occ[k]
		if a>>56 != b>>56 || a&0xff == b&0xff {
			continue
		}
		// 0 is a joined word and its first part ("e-mail", "e"): one word.
		if d := (b>>8)&0xffffffff - (a>>8)&0xffffffff; d > 0 {
			best = min(best, d)
		}
	}
	if best > 64 {
		return 0
	}
	return quantize(proximityWeight * math.Log1p(math.Exp(-float64(best))/proximityAlpha))
}
