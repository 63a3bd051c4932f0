package main

import (
	"log/slog"
	"runtime/debug"
	rtmetrics "runtime/metrics"
)

// limitFor returns the memory limit the runtime keeps once the stores
// are open and the runtime holds live bytes: MEMORY_LIMIT_MIB
// (configured), or when that is more than three quarters of it, live
// plus a quarter of it. With the collector off below the limit (GC_PERCENT=off),
// a heap that the stores alone fill to the limit would make every
// allocation start a collection, up to half the CPU (docs/operations.md,
// "Memory"): a million items hold more than the default limit.
func limitFor(configured, live int64) int64 {
	if configured <= 0 || live <= configured/4*3 {
		return configured
	}
	return live + configured/4
}

// fitMemoryLimit raises the runtime's memory limit to limitFor what the
// runtime holds now, just after a collection that returned its free pages
// (FreeOSMemory), with a warning naming the value to configure; it does
// nothing without MEMORY_LIMIT_MIB (GOMEMLIMIT alone).
func fitMemoryLimit(c *config, log *slog.Logger) {
	if c.MemoryLimit <= 0 {
		return
	}
	held := runtimeHeld()
	if l := limitFor(c.MemoryLimit, held); l != c.MemoryLimit {
		debug.SetMemoryLimit(l)
		log.Warn("the stores hold most of MEMORY_LIMIT_MIB: the limit is raised until the next start; set MEMORY_LIMIT_MIB to at least the value given",
			"held_mib", held>>20, "memory_limit_mib", (l+1<<20-1)>>20)
	}
}

// runtimeHeld is the memory the runtime's limit counts: all it mapped,
// less the heap pages it gave back.
func runtimeHeld() int64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 || s[1].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
