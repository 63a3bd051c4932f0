package search

import (
	"context"
	"errors"
	"fmt"
)

// DefaultMaxPostings is Config.MaxPostings's default: the postings one
// query may read, all its terms and parts together. A word in every one
// of a million items is a million postings; reading four million takes
// well under a second on the machines the service is built for, and no
// query a person types to find something needs more (docs/search.md,
// "Errors and bounds").
const DefaultMaxPostings = 4_000_000

// ErrTooBroad is returned for a query that would read more postings than
// the index's MaxPostings: it is refused whole, never answered from part
// of the index, so that a page and the next agree.
var ErrTooBroad = errors.New("search: the query reads too many postings")

// ErrStopped is returned, wrapping the context's error, for a search
// whose context ended (its deadline passed, or its client left) before
// it finished.
var ErrStopped = errors.New("search: stopped")

// budget is one query's share of work: the postings it may still read
// and the context whose end stops it. The evaluators of every part share
// it; once spent or stopped, err holds why and every evaluator returns
// at its next postings list.
type budget struct {
	ctx  context.Context
	left int
	err  error
}

// spend charges n postings (or documents walked) before they are read,
// and checks the context: false when the query must stop.
func (b *budget) spend(n int) bool {
	if b.err != nil {
		return false
	}
	if b.left -= n; b.left < 0 {
		b.err = ErrTooBroad
		return false
	}
	if err := b.ctx.Err(); err != nil {
		b.err = fmt.Errorf("%w: %w", ErrStopped, err)
		return false
	}
	return true
}
