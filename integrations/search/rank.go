package search

import "math"

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
	for g := range numFields {
		if tf[g] == 0 || f != FieldAny && Field(g) != f {
			continue
		}
		norm := 1 - bm25B + bm25B*float64(lens[g])*r.invAvg[g]
		t += fieldWeight[g] * float64(tf[g]) / norm
	}
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

func quantize(s float64) float64 { return math.Round(s/scoreQuantum) * scoreQuantum }
