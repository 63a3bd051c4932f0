package api

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"searchsvc/httpx"
)

// Each user's share of the search route (docs/search.md, "Errors and
// bounds", fair shares): on two cores, one user running 64 heavy queries
// at once made another user's light query wait up to 1.4 s, 350 times its
// 4 ms when idle, since every query ran at once and the scheduler shared the cores among all of
// them. A user now runs at most SearchesPerUser searches at a time, half
// the cores and at least one, so that the other half stays free for
// everyone else; SearchQueue more wait their turn, in order, for as long
// as their request lasts; any beyond those are refused at once with 429,
// which the web app shows in words, rather than queued without bound.
const (
	// DefaultSearchQueue is how many of one user's searches may wait
	// while SearchesPerUser run.
	DefaultSearchQueue = 4
	// searchRetryAfter is the Retry-After of a refused search.
	searchRetryAfter = time.Second
)

// DefaultSearchesPerUser is how many searches one user runs at once: half
// the CPUs Go uses, and at least one.
func DefaultSearchesPerUser() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// errTooManySearches is the answer to a search over a user's share.
func errTooManySearches() *httpx.Error {
	return &httpx.Error{Status: http.StatusTooManyRequests, Code: "too_many_searches",
		Message: "too many searches at once: wait for one to finish", RetryAfter: searchRetryAfter}
}

// searchGate holds each user to limit searches running and queue waiting.
type searchGate struct {
	limit, queue int
	running      atomic.Int32 // searches holding a slot, every user's

	mu    sync.Mutex
	users map[string]*userSearches
}

// userSearches is one user's searches: a slot in sem for each running;
// refs counts those running or waiting, and the entry goes when none are.
type userSearches struct {
	sem     chan struct{}
	waiting int
	refs    int
}

func newSearchGate(limit, queue int) *searchGate {
	return &searchGate{limit: max(limit, 1), queue: max(queue, 0), users: make(map[string]*userSearches)}
}

// enter waits for one of user's slots and returns the func that gives it
// back. A search over the user's queue is refused at once with
// errTooManySearches, and so is one whose request ends while it waits
// (its client is gone: no 500 to log).
func (g *searchGate) enter(ctx context.Context, user string) (func(), error) {
	g.mu.Lock()
	u := g.users[user]
	if u == nil {
		u = &userSearches{sem: make(chan struct{}, g.limit)}
		g.users[user] = u
	}
	select {
	case u.sem <- struct{}{}:
		u.refs++
		g.mu.Unlock()
		g.running.Add(1)
		return func() { g.leave(user, u) }, nil
	default:
	}
	if u.waiting >= g.queue {
		g.mu.Unlock()
		return nil, errTooManySearches()
	}
	u.waiting++
	u.refs++
	g.mu.Unlock()
	select {
	case u.sem <- struct{}{}:
		g.mu.Lock()
		u.waiting--
		g.mu.Unlock()
		g.running.Add(1)
		return func() { g.leave(user, u) }, nil
	case <-ctx.Done():
		g.mu.Lock()
		u.waiting--
		g.mu.Unlock()
		g.drop(user, u)
		return nil, errTooManySearches()
	}
}

// alone reports whether one search holds a slot: the caller's.
func (g *searchGate) alone() bool { return g.running.Load() == 1 }

// leave gives back a slot of u.
func (g *searchGate) leave(user string, u *userSearches) {
	g.running.Add(-1)
	<-u.sem
	g.drop(user, u)
}

func (g *searchGate) drop(user string, u *userSearches) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if u.refs--; u.refs == 0 {
		delete(g.users, user)
	}
}
