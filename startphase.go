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
// would otherwise take minutes to do page by page.
func settleStart() {
	releaseStartPages()
	debug.FreeOSMemory()
}
