package search

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// A search reads its parts one after the other, each into the page. On
// a machine with a core to spare, while no other search runs, helpers
// take parts from the same queue into pages of their own, merged at the
// end: a person waiting for one answer gets the cores nobody else uses
// (docs/search.md#errors-and-bounds). The page is the same either way,
// as it holds the best documents by an order that ties never decide
// (score, date, then id), and the total is a sum. A helper takes no
// further part once another search has begun, so that search gets its
// core back within one part's work, as the fair shares promise.

// partHelpersMin is the postings a search's words must have, over the
// user's whole index, before a helper is worth starting: about 5 ms of
// work on the machines the service is built for. Below it, waking a
// goroutine, sharing the cores' caches and merging pages cost more
// than they save: with it at 20,000, a query of one common word over
// 60,000 mails took 1.5 ms rather than 1.1 over HTTP (each asked 200
// times in a row, on two cores).
const partHelpersMin = 200_000

// maxPartHelpers bounds the helpers of one search.
const maxPartHelpers = 3

// partQuery is what every goroutine of a search reads: its parts, its
// plan and the words proximity pairs, the ranker's figures, the record
// it keeps (empty: any) and its budget.
type partQuery struct {
	parts    []*part
	root     *plan
	near     []*plan
	r        *ranker
	recordID string
	work     *budget
	next     atomic.Int32 // the next part to take
	// floor is the highest score that limit+1 documents of one page
	// have reached (math.Float64bits; 0 until then): every page's
	// limit+1-th is a bound under the answer's, so each goroutine
	// prunes (prune.go) by the best any of them found, as a search
	// alone prunes a part by the parts before.
	floor atomic.Uint64
}

// raiseFloor records that pg holds limit+1 documents scoring at least
// its last one's score.
func (q *partQuery) raiseFloor(pg *pager) {
	if len(pg.top) < pg.limit+1 {
		return
	}
	s := pg.top[pg.limit].k.score
	for {
		old := q.floor.Load()
		if old != 0 && math.Float64frombits(old) >= s || q.floor.CompareAndSwap(old, math.Float64bits(s)) {
			return
		}
	}
}

// lowerBound returns floor, -Inf until a page reached one.
func (q *partQuery) lowerBound() float64 {
	if v := q.floor.Load(); v != 0 {
		return math.Float64frombits(v)
	}
	return math.Inf(-1)
}

// partHelpers returns how many helpers a search of plan pl over parts
// starts: none when it is not the only search running, when there are
// no spare cores or parts, or when its words are rare (partHelpersMin).
func (ix *Index) partHelpers(parts []*part, pl *planner) int {
	if ix.helpers != 0 {
		return max(ix.helpers, 0) // tests: -1 is none
	}
	if len(parts) < 2 || ix.searches.Load() > 1 {
		return 0
	}
	postings := 0
	for _, df := range pl.dfs {
		postings += df
	}
	least := partHelpersMin
	if ix.minHelped != 0 {
		least = ix.minHelped
	}
	if postings < least {
		return 0
	}
	return min(runtime.GOMAXPROCS(0)-1, len(parts)-1, maxPartHelpers)
}

// evalParts evaluates q over its parts into pg, with helpers more
// goroutines, and reports whether a part was found damaged. A part
// found damaged is marked bad and left out of the page; once the budget
// fails, every goroutine stops at its next postings list and what the
// parts found is not used (the caller answers the failure).
func (ix *Index) evalParts(q *partQuery, pg *pager, helpers int) (damaged bool) {
	if helpers <= 0 {
		return ix.runParts(q, pg, false)
	}
	pages := make([]*pager, helpers)
	found := make([]bool, helpers)
	panics := make([]any, helpers)
	var wg sync.WaitGroup
	// The helpers read the parts under the caller's read lock: they are
	// waited for whatever becomes of the caller. A helper's panic is the
	// caller's, as a panic on a request's goroutine is (httpx answers
	// 500), not the end of the process.
	defer wg.Wait()
	for h := range helpers {
		pages[h] = pg.empty()
		wg.Go(func() {
			defer func() { panics[h] = recover() }()
			found[h] = ix.runParts(q, pages[h], true)
		})
	}
	damaged = ix.runParts(q, pg, false)
	wg.Wait()
	for h := range helpers {
		if panics[h] != nil {
			panic(panics[h])
		}
		pg.merge(pages[h])
		damaged = damaged || found[h]
	}
	return damaged
}

// runParts takes parts from q's queue and adds each one's matches to
// pg, until the queue is empty or the budget fails; a helper also stops
// when another search has begun.
func (ix *Index) runParts(q *partQuery, pg *pager, helper bool) (damaged bool) {
	sc, _ := ix.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer func() {
		sc.blocks.release()
		ix.scratch.Put(sc)
	}()
	for {
		if helper && ix.searches.Load() > 1 {
			return damaged
		}
		i := int(q.next.Add(1)) - 1
		if i >= len(q.parts) || q.work.failed() != nil {
			return damaged
		}
		p := q.parts[i]
		if p.bad.Load() {
			damaged = true
			continue
		}
		ev := &evaluator{p: p, i: i, r: q.r, sc: sc, work: q.work}
		if !ix.noPrune {
			if ev.prune = prunable(q.root, pg, q.recordID, p, q.near != nil); ev.prune != nil {
				ev.prune.floor = max(ev.prune.floor, q.lowerBound())
			}
		}
		s := ev.eval(q.root)
		ev.proximity(q.near, s)
		if q.work.failed() != nil {
			// Spent or stopped: the part is not damaged, whatever
			// ev.err says of a read cut short.
			ev.release(s)
			return damaged
		}
		if ev.err != nil {
			p.bad.Store(true)
			damaged = true
			continue
		}
		pg.add(p, s, q.recordID)
		ev.release(s)
		if ev.prune != nil {
			q.raiseFloor(pg)
		}
	}
}
