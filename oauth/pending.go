package oauth

import (
	"errors"
	"sync"
	"time"
)

// Bounds of the pending authorizations.
const (
	// StateTTL is how long an authorization may take between the authorize
	// route and the provider's redirect to the callback route (5 minutes,
	// as docs/security.md, "Connecting services", says).
	StateTTL = 5 * time.Minute
	// MaxPerSession is how many authorizations one session may have in
	// flight; starting another drops the oldest. Ten covers a user who
	// opens every integration in its own tab.
	MaxPerSession = 10
	// MaxPerUser is how many one user may have in flight over all their
	// sessions (which are capped too); starting another drops their oldest.
	MaxPerUser = 20
	// MaxPending bounds all authorizations in flight (about 300 bytes
	// each, so 3 MB at most). When it is reached, the user holding the
	// most gives up their oldest to one holding fewer, so no one user can
	// fill it for the others; only when all hold as many are new ones
	// refused rather than memory grown.
	MaxPending = 10_000
	// sweepEvery is how often a new authorization triggers a sweep of the
	// expired ones, besides a full table.
	sweepEvery = time.Minute
)

// errFull is returned by put when MaxPending authorizations are in flight.
var errFull = errors.New("oauth: too many authorizations in flight")

// pending is an authorization started at the authorize route and still unfinished:
// everything the callback needs, found by the state the provider hands
// back, since the callback arrives without the session cookie.
type pending struct {
	state     string
	userID    string
	sessionID string
	domain    string
	verifier  string   // PKCE code verifier; never leaves the server but to the token endpoint
	binding   [32]byte // SHA-256 of the svc_oauth cookie value issued with it
	expires   time.Time
}

// pendingSet holds the authorizations in flight, in memory only: they
// live five minutes, so writing them to the SD card would cost a write per
// click for nothing a restart could not redo (after a restart the user
// clicks "connect" again).
type pendingSet struct {
	mu        sync.Mutex
	byState   map[string]*pending
	bySession map[string][]*pending // oldest first
	byUser    map[string][]*pending // oldest first
	bindings  map[[32]byte]int      // live authorizations per browser binding
	lastSweep time.Time
	max       int
}

func newPendingSet(max int) *pendingSet {
	return &pendingSet{
		byState:   make(map[string]*pending),
		bySession: make(map[string][]*pending),
		byUser:    make(map[string][]*pending),
		bindings:  make(map[[32]byte]int),
		max:       max,
	}
}

// put adds p, dropping the oldest authorization of its session beyond
// MaxPerSession and of its user beyond MaxPerUser. When the set is full of
// live authorizations, the oldest of the user holding the most makes room
// if that user holds more than p's; otherwise put refuses with errFull.
func (s *pendingSet) put(p *pending, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byState) >= s.max || now.Sub(s.lastSweep) >= sweepEvery || now.Before(s.lastSweep) {
		s.sweep(now)
	}
	if list := s.bySession[p.sessionID]; len(list) >= MaxPerSession {
		s.remove(list[0])
	}
	if list := s.byUser[p.userID]; len(list) >= MaxPerUser {
		s.remove(list[0])
	}
	if len(s.byState) >= s.max {
		var top []*pending
		for _, list := range s.byUser {
			if len(list) > len(top) {
				top = list
			}
		}
		if len(top) <= len(s.byUser[p.userID])+1 {
			return errFull
		}
		s.remove(top[0])
	}
	s.byState[p.state] = p
	s.bySession[p.sessionID] = append(s.bySession[p.sessionID], p)
	s.byUser[p.userID] = append(s.byUser[p.userID], p)
	s.bindings[p.binding]++
	return nil
}

// take removes and returns the authorization of state, expired or not:
// a state is used once, whatever the outcome of the callback.
func (s *pendingSet) take(state string) (*pending, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.byState[state]
	if ok {
		s.remove(p)
	}
	return p, ok
}

// bound reports whether a live authorization of sessionID is bound to the
// browser binding hash: the browser holds an svc_oauth cookie that this
// server issued to this session, which a new authorization may share.
func (s *pendingSet) bound(sessionID string, hash [32]byte, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.bySession[sessionID] {
		if p.binding == hash && now.Before(p.expires) {
			return true
		}
	}
	return false
}

// inUse reports whether any authorization still in flight is bound to the
// browser binding hash, so that its cookie must be kept.
func (s *pendingSet) inUse(hash [32]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bindings[hash] > 0
}

// len returns how many authorizations are held, expired ones included.
func (s *pendingSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byState)
}

// sweep drops the expired authorizations. The caller holds mu.
func (s *pendingSet) sweep(now time.Time) {
	s.lastSweep = now
	for _, p := range s.byState {
		if !now.Before(p.expires) {
			s.remove(p)
		}
	}
}

// remove drops p from every index. The caller holds mu.
func (s *pendingSet) remove(p *pending) {
	delete(s.byState, p.state)
	dropFrom(s.bySession, p.sessionID, p)
	dropFrom(s.byUser, p.userID, p)
	if s.bindings[p.binding]--; s.bindings[p.binding] <= 0 {
		delete(s.bindings, p.binding)
	}
}

// dropFrom removes p from the list of key in m.
func dropFrom(m map[string][]*pending, key string, p *pending) {
	list := m[key]
	for i, q := range list {
		if q == p {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(m, key)
	} else {
		m[key] = list
	}
}
