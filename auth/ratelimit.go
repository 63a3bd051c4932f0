package auth

import (
	"net/netip"
	"sync"
	"time"

	"searchsvc/httpx"
)

// defaultMaxTracked caps the keys a limiter remembers in its table, and
// as many more in its overflow ring. At the default 5 attempts that is at
// most 20,000 × 5 × 8 bytes of timestamps (plus map overhead, about 3 MiB
// in all).
const defaultMaxTracked = 10_000

// minSweepInterval spaces the full scans a limiter makes when it is full,
// so that a flood of new addresses cannot make every request scan 10,000
// entries.
const minSweepInterval = time.Second

// limiter allows at most limitOf(key) attempts per key in any sliding
// window: it keeps the times of the last attempts of each key. An attempt
// may count against several keys at once (an IPv6 address's /64, /56 and
// /48); it is allowed only if every one is under its limit.
//
// Memory is bounded and no flood of keys refuses a key it has never seen:
// keys whose attempts have all left the window are swept once per window;
// when max keys are tracked a new key pushes out a tracked key that is
// under its limit (a sample of them); and when every key probed is at its
// limit, the newcomer goes into an overflow ring of max more keys, where
// it is counted like any other, and the oldest key of the ring makes room.
// A newcomer is therefore never refused for want of room; a key at its
// limit in the table stays there until its attempts leave the window, and
// one in the ring stays until max newer keys have come after it, so
// cycling through addresses to reset one costs max other addresses.
type limiter[K comparable] struct {
	mu      sync.Mutex
	limit   int
	limitOf func(K) int // nil: limit for every key
	window  int64       // ns
	max     int
	keys    map[K]*attempts
	inTable int // keys not in the ring, at most max
	ring    []K // overflow keys, oldest at next once it has wrapped
	next    int
	wrapped bool

	nextSweep   int64 // ns: when the periodic sweep is due
	lastSweep   int64 // ns: when any sweep last ran
	earliestOut int64 // ns: the earliest a tracked key could leave (a lower bound)
}

// attempts holds a key's attempt times in ns, oldest first, at most its
// limit.
type attempts struct {
	t        []int64
	overflow bool // tracked in the ring, not the table
}

func newLimiter[K comparable](limit int, window time.Duration, max int) *limiter[K] {
	return &limiter[K]{limit: limit, window: int64(window), max: max, keys: make(map[K]*attempts), ring: make([]K, max)}
}

func (l *limiter[K]) limitFor(k K) int {
	if l.limitOf == nil {
		return l.limit
	}
	return l.limitOf(k)
}

// allow counts an attempt by every key at now. When any key is at its
// limit the attempt is counted against none, and allow returns false and
// how long until one would be accepted.
func (l *limiter[K]) allow(now time.Time, keys ...K) (bool, time.Duration) {
	n := now.UnixNano()
	cutoff := n - l.window
	l.mu.Lock()
	defer l.mu.Unlock()
	if n >= l.nextSweep {
		l.sweep(n, cutoff)
		l.nextSweep = n + l.window
	}
	var wait int64
	for _, k := range keys {
		a := l.keys[k]
		if a == nil {
			continue
		}
		a.forget(cutoff)
		if lim := l.limitFor(k); len(a.t) >= lim {
			wait = max(wait, a.t[len(a.t)-lim]-cutoff)
		}
	}
	if wait > 0 {
		return false, time.Duration(wait)
	}
	for _, k := range keys {
		a := l.keys[k]
		if a == nil {
			a = l.track(k, n, cutoff)
		}
		if lim := l.limitFor(k); len(a.t) >= lim {
			a.t = a.t[:copy(a.t, a.t[len(a.t)-lim+1:])]
		}
		a.t = append(a.t, n)
	}
	return true, 0
}

// note counts an attempt by key at now even when key is at its limit (the
// oldest counted one makes room), so that a key stays full for as long as
// attempts keep coming.
func (l *limiter[K]) note(key K, now time.Time) {
	n := now.UnixNano()
	cutoff := n - l.window
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.keys[key]
	if a == nil {
		a = l.track(key, n, cutoff)
	}
	a.forget(cutoff)
	if lim := l.limitFor(key); len(a.t) >= lim {
		a.t = a.t[:copy(a.t, a.t[len(a.t)-lim+1:])]
	}
	a.t = append(a.t, n)
}

// full reports whether key is at its limit at now, without counting an
// attempt.
func (l *limiter[K]) full(key K, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.keys[key]
	if a == nil {
		return false
	}
	a.forget(now.UnixNano() - l.window)
	return len(a.t) >= l.limitFor(key)
}

// wait is how long from now until key is under its limit again: 0 when
// it is under it now. It counts no attempt.
func (l *limiter[K]) wait(key K, now time.Time) time.Duration {
	n := now.UnixNano()
	cutoff := n - l.window
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.keys[key]
	if a == nil {
		return 0
	}
	a.forget(cutoff)
	if lim := l.limitFor(key); len(a.t) >= lim {
		return time.Duration(a.t[len(a.t)-lim] - cutoff)
	}
	return 0
}

// reset forgets key's attempts.
func (l *limiter[K]) reset(key K) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.keys[key]; a != nil && !a.overflow {
		delete(l.keys, key)
		l.inTable--
	} else if a != nil {
		a.t = a.t[:0]
	}
}

// forget drops attempts that left the window.
func (a *attempts) forget(cutoff int64) {
	i := 0
	for i < len(a.t) && a.t[i] <= cutoff {
		i++
	}
	if i > 0 {
		a.t = a.t[:copy(a.t, a.t[i:])]
	}
}

// track adds key, making room as the type's comment says.
func (l *limiter[K]) track(key K, n, cutoff int64) *attempts {
	a := &attempts{t: make([]int64, 0, min(l.limitFor(key), 8))} // grows to the limit at most
	if l.inTable >= l.max {
		if n >= l.earliestOut && n-l.lastSweep >= int64(minSweepInterval) {
			l.sweep(n, cutoff)
		}
	}
	if l.inTable >= l.max && !l.evict(cutoff) {
		if l.wrapped {
			old := l.ring[l.next]
			if o := l.keys[old]; o != nil && o.overflow {
				delete(l.keys, old)
			}
		}
		l.ring[l.next] = key
		l.next++
		if l.next == len(l.ring) {
			l.next, l.wrapped = 0, true
		}
		a.overflow = true
	} else {
		l.inTable++
	}
	l.keys[key] = a
	l.earliestOut = min(l.earliestOut, n+l.window)
	return a
}

// evictProbes bounds the keys evict looks at: map order is arbitrary, so
// this is a random sample, and the cost stays constant under a flood.
const evictProbes = 32

// evict makes room in the table for one key by dropping a key of the
// table that is under its limit, among a sample of evictProbes. Keys at their limit are kept:
// evicting them would reset the count of exactly the clients the limit is
// for. It reports whether it found one.
func (l *limiter[K]) evict(cutoff int64) bool {
	probes := 0
	for k, a := range l.keys {
		if probes++; probes > evictProbes {
			return false
		}
		if a.overflow {
			continue
		}
		live := 0
		for _, t := range a.t {
			if t > cutoff {
				live++
			}
		}
		if live < l.limitFor(k) {
			delete(l.keys, k)
			l.inTable--
			return true
		}
	}
	return false
}

// sweep drops keys whose newest attempt left the window and notes when the
// first remaining key will.
func (l *limiter[K]) sweep(n, cutoff int64) {
	l.lastSweep = n
	l.earliestOut = 1<<63 - 1
	for k, a := range l.keys {
		last := int64(-1 << 63)
		if len(a.t) > 0 {
			last = a.t[len(a.t)-1]
		}
		if last <= cutoff {
			delete(l.keys, k)
			if !a.overflow {
				l.inTable--
			}
			continue
		}
		l.earliestOut = min(l.earliestOut, last+l.window)
	}
}

// tracked returns the number of keys held.
func (l *limiter[K]) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// addrLimit is httpx.AddrKeyLimit for a per-address limit of limit.
func addrLimit(limit int) func(netip.Prefix) int {
	return func(p netip.Prefix) int { return httpx.AddrKeyLimit(p, limit) }
}

// newAddrLimiter is a limiter of client addresses with httpx.AddrKeys' keys.
func newAddrLimiter(limit int, window time.Duration, max int) *limiter[netip.Prefix] {
	l := newLimiter[netip.Prefix](limit, window, max)
	l.limitOf = addrLimit(limit)
	return l
}
