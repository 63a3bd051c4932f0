package main

import "runtime/debug"

// settleStart ends one phase of serve's start before the next begins: the
// web app's files, the replay of both logs, the search index and the
// packages built on the stores, then the routes. Each phase leaves garbage
// (the replay several times what the stores keep: it decodes every record
// of both logs) and runs code of its own once, spread over the binary,
// which the kernel maps 64 KiB around each page touched. Kept until the
// service listens, the start's peak RSS (VmHWM) was what the service holds
// plus the garbage and the code of every phase: at 100,000 items, 29 MB
// against 18 once settled (BenchmarkItemsCold). Settled, each phase adds
// only its own to what the phases before it keep.
//
// The code pages go first (releaseStartPages), so that the collection
// runs beside the code of no phase; then the collection returns the free
// heap to the system at once (debug.FreeOSMemory), which the scavenger
// would otherwise take minutes to do page by page. The collection itself
// maps pages of the binary again: its own code, and the tables it reads
// for every frame of every goroutine's stack (stack maps, in the
// function table) and every kind of object it marks (type descriptors),
// about 2.5 MB at 100,000 items. They go once more after it, so that
// they do not add to the next phase's peak, as they did when only the
// code of the phase before went (the phase after the routes, then the
// highest, began with them).
func settleStart() {
	settle(releaseStartPages, debug.FreeOSMemory)
}

// settle is settleStart with its steps given: release drops the binary's
// pages, collect collects and gives the free heap back.
func settle(release, collect func()) {
	release()
	collect()
	release()
}
