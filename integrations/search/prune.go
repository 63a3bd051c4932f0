package search

import (
	"cmp"
	"math"
	"slices"
)

// Pruning a long Or (docs/search.md#questions-and-long-queries): a list
// of forty words OR'ed matches most of the index, and scoring every one
// of its postings was most of its time. A page needs only the best
// limit+1 documents exactly; every other match needs only to be counted
// (total). So the words are read rarest first, each adding to one
// array of scores (orDense), and before each of the common words the
// search knows θ, a score that at least limit+1 documents already have
// (their partial sums, which only grow). A word's posting is then scored
// only when the document could still reach θ: its sum so far plus the
// most the words left could add (each at most idf·(k1+1), see
// ranker.score). A document that could not is still marked matched,
// with the partial score it has, strictly below θ and so below limit+1
// documents scored exactly: the page, the scores on it, the cursor and
// total are those of scoring everything (TestPruneSameTopK).

// pruning is what an evaluator needs to prune: the documents of the
// page (limit+1, for the next page's cursor), the record the page keeps
// (-1: any), floor, the score of the last of limit+1 documents already
// found in the parts before (or -Inf), and root, the Or at the root of
// the query when it may be pruned (else nil).
type pruning struct {
	root  *plan
	k     int
	rec   int64
	floor float64
}

// prunable returns the pruning of a query for part p, nil when it may
// not be pruned: only a relevance page (pg) without a cursor or id
// filters may be, as their documents are not the best limit+1. Its
// root is set for an Or of many words without proximity (near), which
// would add to the scores after it.
func prunable(root *plan, pg *pager, recordID string, p *part, near bool) *pruning {
	if pg.sortByte != 'r' || pg.after != nil || pg.in != nil || pg.nin != nil {
		return nil
	}
	pr := &pruning{k: pg.limit + 1, rec: -1, floor: math.Inf(-1)}
	if recordID != "" {
		if pr.rec = int64(slices.Index(p.cols().records, recordID)); pr.rec < 0 {
			return nil
		}
	}
	if len(pg.top) == pg.limit+1 {
		pr.floor = pg.top[pg.limit].k.score
	}
	if !near && root.op == opOr && len(root.kids) >= denseOr && termsOnly(root, 0) {
		pr.root = root
	}
	return pr
}

// prunedTerm is one term of a pruned Or, with the most it adds to a
// document's score.
type prunedTerm struct {
	w     weighted
	field Field
	most  float64
}

// maxScore bounds the score of a term of weight w in any document:
// ranker.score saturates below w·(k1+1), and quantize rounds by at most
// half a quantum; the margin covers the rounding of sums of bounds.
func maxScore(w float64) float64 {
	return w*(bm25K1+1)*(1+1e-9) + scoreQuantum
}

// collectTerms appends the terms of p (termsOnly) in this part.
func (ev *evaluator) collectTerms(p *plan, out []prunedTerm) []prunedTerm {
	if p.op == opTerm {
		for _, w := range p.refs[ev.i] {
			out = append(out, prunedTerm{w: w, field: p.field, most: maxScore(w.idf)})
		}
		return out
	}
	for _, k := range p.kids {
		out = ev.collectTerms(k, out)
	}
	return out
}

// orPruned evaluates the Or at the root of a query as orDense does,
// scoring only the postings that may change the page.
func (ev *evaluator) orPruned(p *plan) set {
	n := ev.p.cols().len()
	acc, hit := ev.sc.takeDense(n)
	defer ev.sc.giveDense(acc, hit)
	terms := ev.collectTerms(p, nil)
	// Rarest first: the highest bound first, leaving the common words,
	// with the most postings and the least weight, to be pruned.
	slices.SortStableFunc(terms, func(a, b prunedTerm) int { return cmp.Compare(b.most, a.most) })
	left := 0.0
	for _, t := range terms {
		left += t.most
	}
	theta, found, checks := ev.prune.floor, math.Inf(-1), 0
	for _, t := range terms {
		// θ is worth finding again before a word of many postings, a
		// few times a query (each time is a pass over the part), once
		// the most the words left can add nears it: until then it
		// prunes little.
		if checks < maxThetaChecks && int(t.w.ref.df) >= n/16 && (checks == 0 || left < 3*found) {
			checks++
			found = ev.kthScore(acc, hit)
			theta = max(theta, found)
		}
		if !ev.addPruned(t, acc, hit, left, theta) {
			return set{}
		}
		left -= t.most
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

// maxThetaChecks bounds the passes orPruned makes to find θ.
const maxThetaChecks = 4

// addPruned is addPostings scoring only documents whose sum so far plus
// left, the most the words from this one on can add, reaches theta.
func (ev *evaluator) addPruned(t prunedTerm, acc []float64, hit []bool, left, theta float64) bool {
	return ev.addScores(t.w, t.field, acc, hit, left, theta)
}

// kthScore returns the k-th highest score so far of the documents the
// page may show (live, of the record asked for), -Inf when fewer match.
func (ev *evaluator) kthScore(acc []float64, hit []bool) float64 {
	h := ev.kth()
	d := 0
	for ; d < len(hit) && len(h.top) < h.k; d++ {
		if hit[d] {
			h.offer(uint32(d), acc[d])
		}
	}
	// The heap is full: a document enters only by scoring above its
	// least, and one the words did not match has no score. Most fall
	// below it, so the test is one comparison, here rather than a call
	// away (it was a tenth of the forty-word list's time).
	least := h.least()
	for ; d < len(acc); d++ {
		if acc[d] > least && hit[d] {
			h.offer(uint32(d), acc[d])
			least = h.least()
		}
	}
	return h.done()
}

// kthHeap finds the k-th highest score of the documents offered that
// the page may show: a min-heap of the k highest.
type kthHeap struct {
	ev  *evaluator
	c   *columns
	k   int // ev.prune.k
	top []float64
}

func (ev *evaluator) kth() kthHeap {
	return kthHeap{ev: ev, c: ev.p.cols(), k: ev.prune.k, top: ev.sc.kth[:0]}
}

func (h *kthHeap) offer(d uint32, s float64) {
	k, top := h.k, h.top
	if len(top) == k && s <= top[0] {
		return
	}
	if rec := h.ev.prune.rec; h.ev.p.deleted(d) || rec >= 0 && int64(h.c.recordAt(d)) != rec {
		return
	}
	if len(top) < k {
		top = append(top, s)
		for j := len(top) - 1; j > 0 && top[(j-1)/2] > top[j]; j = (j - 1) / 2 {
			top[j], top[(j-1)/2] = top[(j-1)/2], top[j]
		}
		h.top = top
		return
	}
	top[0] = s
	for j := 0; ; {
		m := j
		if l := 2*j + 1; l < k && top[l] < top[m] {
			m = l
		}
		if r := 2*j + 2; r < k && top[r] < top[m] {
			m = r
		}
		if m == j {
			break
		}
		top[j], top[m] = top[m], top[j]
		j = m
	}
}

// least returns the lowest score in a full heap, -Inf while it is not.
func (h *kthHeap) least() float64 {
	if len(h.top) < h.k {
		return math.Inf(-1)
	}
	return h.top[0]
}

// done returns the k-th highest score, -Inf when fewer were offered.
func (h *kthHeap) done() float64 {
	h.ev.sc.kth = h.top
	if len(h.top) < h.ev.prune.k {
		return math.Inf(-1)
	}
	return h.top[0]
}
