package search

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
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

// yieldEvery is how many postings a query reads between two yields of
// its goroutine: about a millisecond's work.
const yieldEvery = 1 << 15

// budget is one query's share of work: the postings it may still read
// and the context whose end stops it. The evaluators of every part share
// it; once spent or stopped, err holds why and every evaluator returns
// at its next postings list.
//
// Every yieldEvery postings it also yields the processor (yield,
// runtime.Gosched): Go preempts a running goroutine only after 10 ms,
// so a heavy query holding a core kept a light query that woke behind
// it waiting for that long, many times over on two cores; yielding
// lets the light one run within about a millisecond (docs/search.md,
// fair shares).
//
// The goroutines that share a search's parts (parallel.go) share its
// budget too: mu guards it.
type budget struct {
	ctx   context.Context
	mu    sync.Mutex
	left  int
	err   error
	since int    // postings read since the last yield
	yield func() // runtime.Gosched; tests count the calls
}

func newBudget(ctx context.Context, postings int) *budget {
	return &budget{ctx: ctx, left: postings, yield: runtime.Gosched}
}

// spend charges n postings (or documents walked) before they are read,
// and checks the context: false when the query must stop.
func (b *budget) spend(n int) bool {
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return false
	}
	if b.left -= n; b.left < 0 {
		b.err = ErrTooBroad
		b.mu.Unlock()
		return false
	}
	if err := b.ctx.Err(); err != nil {
		b.err = fmt.Errorf("%w: %w", ErrStopped, err)
		b.mu.Unlock()
		return false
	}
	b.since += n
	yield := b.since >= yieldEvery
	if yield {
		b.since = 0
	}
	b.mu.Unlock()
	if yield {
		b.yield()
	}
	return true
}

// failed returns why the query must stop: nil while it may go on.
func (b *budget) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
