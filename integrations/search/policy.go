package search

import (
	"math"
	"slices"
	"time"
)

// Merging follows a tiered policy built for SD cards: segments are grouped
// in tiers by their number of documents (mergeBase, times MergeFactor per
// tier), and MergeFactor segments of one tier become one segment of the
// next, in one long sequential write. Tiers count documents, not bytes: a
// merge's output compresses better than its inputs, and by bytes it could
// land in its inputs' tier and be merged again and again. No merge makes a
// segment of more than MaxMergeDocs documents, so a document is written
// by its flush and then at most once per tier below that bound, however
// large the index grows: the bytes written stay a bounded multiple of the
// index, where merging on up would rewrite every document once more at
// each tier. Two merges spare a write: a flush that completes a tier is
// that tier's merge (flushPartners), and once indexing is quiet the
// segments a burst left behind become one (quietMerge). A segment with
// more deleted than live documents is rewritten alone. One merge runs at
// a time, streaming: its memory is a few blocks and one term's doc
// stream, whatever the size of the segments.
const mergeBase = 1024

func (ix *Index) merger() {
	defer ix.wg.Done()
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	// A tick looks for merges that became due as indexing went quiet;
	// every write of segments kicks a look of its own. Once a tick has
	// looked at a quiet index and found nothing, the next ones skip until
	// a document is added: picking allocates, and an idle service must
	// not wake the collector (docs/operations.md, "Memory").
	var gate mergeGate
	for {
		tick := false
		select {
		case <-ix.stop:
			return
		case <-ix.mergeKick:
		case <-t.C:
			tick = true
		}
		ix.mu.Lock()
		last, quiet := ix.lastAdd, ix.cfg.Now().Sub(ix.lastAdd) >= ix.cfg.FlushAfter
		ix.mu.Unlock()
		if !gate.due(tick, last, quiet) {
			continue
		}
		for _, u := range ix.userList() {
			for {
				select {
				case <-ix.stop:
					return
				default:
				}
				in := ix.pickMerge(u)
				if len(in) == 0 {
					break
				}
				if err := ix.merge(u, in); err != nil {
					ix.log.Error("search merge failed", "user_id", u.id, "err", err)
					gate.idle = false // the next tick tries again
					break
				}
				gate.idle = false // a merge may make another due
			}
		}
	}
}

// mergeGate is the merger's memory of its last tick: idle once a tick
// looked at a quiet index (and found nothing to merge), as of lastAdd
// looked.
type mergeGate struct {
	looked time.Time
	idle   bool
}

// due reports whether the merger looks for merges now: on every kick, and
// on a tick unless the last tick found the index idle and no document
// was added since (last is the index's lastAdd, quiet whether indexing
// has been quiet for FlushAfter).
func (g *mergeGate) due(tick bool, last time.Time, quiet bool) bool {
	if tick && g.idle && last.Equal(g.looked) {
		return false
	}
	g.idle, g.looked = tick && quiet, last
	return true
}

func (ix *Index) tier(docs int) int {
	if docs < mergeBase {
		return 0
	}
	return 1 + int(math.Log(float64(docs)/mergeBase)/math.Log(float64(ix.cfg.MergeFactor)))
}

// pickMerge returns the segments of u to merge now, if any.
func (ix *Index) pickMerge(u *user) []*part {
	ix.mu.Lock()
	quiet := ix.cfg.Now().Sub(ix.lastAdd) >= ix.cfg.FlushAfter
	ix.mu.Unlock()
	u.mu.RLock()
	defer u.mu.RUnlock()
	if u.gone || u.merging {
		return nil
	}
	tiers := map[int][]*part{}
	var all []*part
	for _, p := range u.parts {
		if p.seg == nil || p.bad.Load() {
			continue
		}
		if p.ndel > p.live() && p.docs() >= 64 {
			return []*part{p}
		}
		t := ix.tier(p.docs())
		tiers[t] = append(tiers[t], p)
		all = append(all, p)
	}
	for t := range 64 {
		ps := tiers[t]
		if len(ps) < ix.cfg.MergeFactor {
			continue
		}
		slices.SortStableFunc(ps, func(a, b *part) int { return a.docs() - b.docs() })
		ps = ps[:ix.cfg.MergeFactor]
		if sumLive(ps) > ix.cfg.MaxMergeDocs {
			break // and every higher tier's merge would pass it too
		}
		return ps
	}
	if quiet {
		return ix.quietMerge(all)
	}
	return nil
}

// quietMerge returns, once indexing is quiet, the smallest segments that
// one merge within MaxMergeDocs takes each to a higher tier than its
// own, if there are two or more: the segments a burst of indexing left
// behind become one, and still no document is rewritten twice in a tier.
func (ix *Index) quietMerge(ps []*part) []*part {
	ps = slices.Clone(ps)
	slices.SortStableFunc(ps, func(a, b *part) int { return a.docs() - b.docs() })
	n, docs := 0, 0
	for n < len(ps) && docs+ps[n].live() <= ix.cfg.MaxMergeDocs {
		docs += ps[n].live()
		n++
	}
	for ; n >= 2; n-- {
		if ix.tier(docs) > ix.tier(ps[n-1].docs()) {
			return ps[:n]
		}
		docs -= ps[n-1].live()
	}
	return nil
}

// flushPartners returns the segments a frozen buffer b is written
// together with, if any: the MergeFactor-1 of its tier that its flush
// would make due for a merge, so that merge is the flush, one write
// instead of two. The caller holds u.mu.
func (ix *Index) flushPartners(u *user, b *part) []*part {
	if u.merging || b.live() == 0 {
		return nil
	}
	t := ix.tier(b.docs())
	var ps []*part
	for _, p := range u.parts {
		if p.seg != nil && !p.bad.Load() && ix.tier(p.docs()) == t {
			ps = append(ps, p)
		}
	}
	if len(ps) < ix.cfg.MergeFactor-1 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b *part) int { return a.docs() - b.docs() })
	ps = ps[:ix.cfg.MergeFactor-1]
	if b.live()+sumLive(ps) > ix.cfg.MaxMergeDocs {
		return nil
	}
	return ps
}

func sumLive(ps []*part) int {
	n := 0
	for _, p := range ps {
		n += p.live()
	}
	return n
}
