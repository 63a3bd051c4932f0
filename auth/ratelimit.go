package auth

import (
	"net/netip"
	"sync"
	"time"
)

// defaultMaxTracked caps the keys a limiter remembers. At the default 5
// attempts that is at most 10,000 × 5 × 8 bytes of timestamps (plus map
// overhead, about 1 MiB in all).
const defaultMaxTracked = 10_000

// minSweepInterval spaces the full scans a limiter makes when it is full,
// so that a flood of new addresses cannot make every request scan 10,000
// entries.
const minSweepInterval = time.Second

// limiter allows at most limit attempts per key in any sliding window:
// it keeps the times of the last limit attempts of each key. Memory is
// bounded: keys whose attempts have all left the window are swept once per
// window, and when max keys are tracked a new key pushes out a tracked key
// that is under its limit rather than the map growing. Refusing every new
// key instead would let a flood of one-off addresses lock every other
// client out of login; evicting keys at their limit would reset the very
// clients being limited. Only when a sample of keys are all at their limit
// is the newcomer refused.
type limiter[K comparable] struct {
	mu     sync.Mutex
	limit  int
	window int64 // ns
	max    int
	keys   map[K]*attempts

	nextSweep   int64 // ns: when the periodic sweep is due
	lastSweep   int64 // ns: when any sweep last ran
	earliestOut int64 // ns: the earliest a tracked key could leave (a lower bound)
}

// attempts holds a key's attempt times in ns, oldest first, at most limit.
type attempts struct{ t []int64 }

func newLimiter[K comparable](limit int, window time.Duration, max int) *limiter[K] {
	return &limiter[K]{limit: limit, window: int64(window), max: max, keys: make(map[K]*attempts)}
}

// allow counts an attempt by key at now. When the attempt is over the
// limit it is not counted and allow returns false and how long until one
// would be accepted.
func (l *limiter[K]) allow(key K, now time.Time) (bool, time.Duration) {
	n := now.UnixNano()
	cutoff := n - l.window
	l.mu.Lock()
	defer l.mu.Unlock()
	if n >= l.nextSweep {
		l.sweep(n, cutoff)
		l.nextSweep = n + l.window
	}
	a := l.keys[key]
	if a == nil {
		if len(l.keys) >= l.max {
			if n >= l.earliestOut && n-l.lastSweep >= int64(minSweepInterval) {
				l.sweep(n, cutoff)
			}
			if !l.evict(cutoff) {
				// Every key probed is at its limit: those are the ones
				// being limited, so keep them and refuse the newcomer.
				return false, time.Duration(l.window)
			}
		}
		a = &attempts{t: make([]int64, 0, min(l.limit, 8))} // grows to limit at most
		l.keys[key] = a
		l.earliestOut = min(l.earliestOut, n+l.window)
	}
	// Forget attempts that left the window.
	i := 0
	for i < len(a.t) && a.t[i] <= cutoff {
		i++
	}
	if i > 0 {
		a.t = a.t[:copy(a.t, a.t[i:])]
	}
	if len(a.t) >= l.limit {
		return false, time.Duration(a.t[0] - cutoff)
	}
	a.t = append(a.t, n)
	return true, 0
}

// evictProbes bounds the keys evict looks at: map order is arbitrary, so
// this is a random sample, and the cost stays constant under a flood.
const evictProbes = 32

// evict makes room for one key by dropping a tracked key that is under
// its limit, among a sample of evictProbes. Keys at their limit are kept:
// evicting them would reset the count of exactly the clients the limit is
// for. It reports whether it found one.
func (l *limiter[K]) evict(cutoff int64) bool {
	probes := 0
	for k, a := range l.keys {
		if probes++; probes > evictProbes {
			return false
		}
		live := 0
		for _, t := range a.t {
			if t > cutoff {
				live++
			}
		}
		if live < l.limit {
			delete(l.keys, k)
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

// addrKey is the key a client address is limited under: the address
// itself for IPv4, its /64 for IPv6, since one IPv6 client usually holds a
// whole /64 and could otherwise walk through it.
func addrKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return a
}
