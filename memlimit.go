package main

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
)

// limitFor returns the runtime's soft memory limit for what it holds
// after a collection (held: its live heap and its own structures, not
// the garbage): a quarter of MEMORY_LIMIT_MIB (configured) above it. So
// the limit stays under MEMORY_LIMIT_MIB while the service holds less
// than three quarters of it, and a heap the stores fill past that keeps
// the same room above them rather than making every allocation start a
// collection, up to half the CPU (docs/operations.md, "Memory"): a
// million items hold more than the default limit.
//
// The room above what is live is a fixed size, not a share of it (the
// collector's target, GC_PERCENT, is off): a request path that allocates
// pays for a collection every quarter of MEMORY_LIMIT_MIB it allocates,
// however small the live heap, and the process stays within what it
// holds plus that quarter, however large the limit, rather than filling
// to the limit before any collection.
func limitFor(configured, held int64) int64 {
	if configured <= 0 {
		return configured
	}
	return held + configured/4
}

// limitFollower keeps the runtime's memory limit at limitFor what it
// holds after each collection, once the stores are open (serve). It
// learns of a collection by a cleanup (runtime.AddCleanup) on an object
// nothing keeps: the collector finds it unreachable in the next cycle,
// and the cleanup fits the limit and sets another. An idle service,
// which allocates nothing, has no collection to follow and so costs
// nothing.
type limitFollower struct {
	configured int64
	log        *slog.Logger
	mu         sync.Mutex // the fields below
	stopped    bool
	last       int64 // the limit last fitted
	samples    []rtmetrics.Sample
	warned     bool
	// fitted, when set (by tests), is told each limit fit sets.
	fitted func(limit int64)
}

// gcSentinel is what the follower's cleanup watches: large enough not
// to share a block of the tiny allocator with something kept alive.
type gcSentinel [64]byte

func newLimitFollower(configured int64, log *slog.Logger) *limitFollower {
	return &limitFollower{configured: configured, log: log, samples: []rtmetrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}}
}

// follow fits the limit now and after every collection until stop; it
// does nothing without MEMORY_LIMIT_MIB (GOMEMLIMIT alone).
func (f *limitFollower) follow() {
	if f.configured <= 0 {
		return
	}
	f.fit()
	f.arm()
}

func (f *limitFollower) arm() {
	runtime.AddCleanup(new(gcSentinel), func(f *limitFollower) {
		if l, ok := f.fit(); ok {
			f.arm()
			if f.fitted != nil {
				f.fitted(l)
			}
		}
	}, f)
}

// stop ends the following and sets the limit back to MEMORY_LIMIT_MIB,
// or where it was last fitted if that is more: what a run in the same
// process (a test's) holds then is no longer followed, and must not
// find the limit below it.
func (f *limitFollower) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.configured > 0 && !f.stopped {
		debug.SetMemoryLimit(max(f.configured, f.last))
	}
	f.stopped = true
}

// fit sets the limit to limitFor what the runtime holds and returns it,
// unless stopped (ok false); the first time it passes MEMORY_LIMIT_MIB
// it says so, with the value to configure.
func (f *limitFollower) fit() (limit int64, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return 0, false
	}
	held, known := f.held()
	l := f.configured // without the runtime's figures, the limit as configured
	if known {
		l = limitFor(f.configured, held)
	}
	debug.SetMemoryLimit(l)
	f.last = l
	if l > f.configured && !f.warned {
		f.warned = true
		f.log.Warn("the stores hold most of MEMORY_LIMIT_MIB: the limit is raised until the next start; set MEMORY_LIMIT_MIB to at least the value given",
			"held_mib", held>>20, "memory_limit_mib", (l+1<<20-1)>>20)
	}
	return l, true
}

// held is what the runtime's limit counts without the garbage the last
// collection left: the heap it marked live, and the runtime's memory
// outside the heap (stacks, its own structures). The rest of what it
// mapped is the heap's free pages and slots and its dead objects, or
// was given back. known is false when the runtime does not give these
// figures.
func (f *limitFollower) held() (held int64, known bool) {
	rtmetrics.Read(f.samples)
	var v [6]int64
	for i, s := range f.samples {
		if s.Value.Kind() != rtmetrics.KindUint64 {
			return 0, false
		}
		v[i] = int64(s.Value.Uint64())
	}
	total, released, free, unused, objects, live := v[0], v[1], v[2], v[3], v[4], v[5]
	return live + total - released - free - unused - objects, true
}
