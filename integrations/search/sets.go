package search

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
	acc    []float64 // a prefix's dense scores, by document
	hit    []bool
	// orAcc and orHit are dense scores and flags for Ors accumulated
	// densely (orDense), one pair per Or being evaluated: they nest.
	orAcc  [][]float64
	orHit  [][]bool
	kth    []float64 // orPruned's heap of the best scores
	blocks blockScratch
}

// dense returns n zero scores.
func (sc *scratch) dense(n int) []float64 {
	if cap(sc.acc) < n {
		sc.acc = make([]float64, n)
	}
	sc.acc = sc.acc[:n]
	clear(sc.acc)
	return sc.acc
}

// hits returns n false flags.
func (sc *scratch) hits(n int) []bool {
	if cap(sc.hit) < n {
		sc.hit = make([]bool, n)
	}
	sc.hit = sc.hit[:n]
	clear(sc.hit)
	return sc.hit
}

// takeDense returns n zero scores and n false flags for an Or; giveDense
// gives them back.
func (sc *scratch) takeDense(n int) ([]float64, []bool) {
	var acc []float64
	var hit []bool
	if k := len(sc.orAcc); k > 0 {
		acc, hit = sc.orAcc[k-1], sc.orHit[k-1]
		sc.orAcc, sc.orHit = sc.orAcc[:k-1], sc.orHit[:k-1]
	}
	if cap(acc) < n {
		acc, hit = make([]float64, n), make([]bool, n)
	}
	acc, hit = acc[:n], hit[:n]
	clear(acc)
	clear(hit)
	return acc, hit
}

func (sc *scratch) giveDense(acc []float64, hit []bool) {
	sc.orAcc = append(sc.orAcc, acc)
	sc.orHit = append(sc.orHit, hit)
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
	ev.merged += len(out.docs)
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
