package search

import (
	"context"
	"fmt"
)

// Natural-language queries (docs/search.md, "Questions and long
// queries"): a question typed as a sentence rarely has every one of its
// words in one item. When every-word matching finds fewer than
// RelaxBelow items, a search with Request.Relax matches most of the
// words instead, ranked as ever, so that the items with the most and the
// rarest of them come first.

// RelaxBelow is the every-word total under which a search with
// Request.Relax matches most of the words.
const RelaxBelow = 5

// AtLeast matches items matched by at least Min of its children, and
// scores an item with the sum of the children it matched.
type AtLeast struct {
	Min      int
	Children []Node
}

func (AtLeast) node() {}

// Relax returns the query matching most of the words of n: n is an And
// of at least 3 words or phrases (exclusions and kind:, integration:,
// after:, before: stay required), and the relaxed query matches more
// than half of them. ok is false for any other query, for which every
// word is already "most".
func Relax(n Node) (Node, bool) {
	and, ok := n.(And)
	if !ok {
		return nil, false
	}
	var words, rest []Node
	for _, k := range and.Children {
		switch k.(type) {
		case Not, Kind, Integration, DateRange:
			rest = append(rest, k)
		default:
			words = append(words, k)
		}
	}
	if len(words) < 3 {
		return nil, false
	}
	most := AtLeast{Min: len(words)/2 + 1, Children: words}
	if len(rest) == 0 {
		return most, true
	}
	return And{Children: append([]Node{most}, rest...)}, true
}

// atLeast evaluates an opAtLeast plan: each child once, counting the
// children each document matched.
func (ev *evaluator) atLeast(p *plan) set {
	n := ev.p.docs()
	count := make([]uint16, n)
	score := make([]float64, n)
	for _, k := range p.kids {
		s := ev.eval(k)
		for j, d := range s.docs {
			if int(d) >= n {
				ev.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
				return set{}
			}
			count[d]++
			if s.scores != nil {
				score[d] += s.scores[j]
			}
		}
		ev.release(s)
	}
	out := ev.newSet(true)
	for d, c := range count {
		if int(c) >= p.min {
			out.docs = append(out.docs, uint32(d))
			out.scores = append(out.scores, score[d])
		}
	}
	return out
}

// relaxed answers a search with Request.Relax: every word when that
// finds RelaxBelow items or more, else most of the words, when that finds
// more. A later page decides again, from the every-word total, so that it
// continues the query its first page answered.
func (ix *Index) relaxed(ctx context.Context, userID string, req Request) (Result, error) {
	req.Relax = false
	most, ok := Relax(req.Query)
	if !ok {
		return ix.SearchContext(ctx, userID, req)
	}
	probe := req
	if req.Cursor != "" {
		probe.Cursor, probe.Limit = "", 1 // for its total alone
	}
	strict, err := ix.SearchContext(ctx, userID, probe)
	if err != nil || strict.Total >= RelaxBelow {
		if err == nil && req.Cursor != "" {
			return ix.SearchContext(ctx, userID, req)
		}
		return strict, err
	}
	wide := req
	wide.Query = most
	res, err := ix.SearchContext(ctx, userID, wide)
	switch {
	case err != nil:
		return res, err
	case res.Total > strict.Total:
		res.Relaxed = true
		return res, nil
	case req.Cursor != "":
		return ix.SearchContext(ctx, userID, req)
	}
	return strict, nil
}
