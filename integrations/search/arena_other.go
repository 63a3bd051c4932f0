//go:build !unix

package search

// mapArena returns n bytes for the cache's arena; without mmap, from the
// heap.
func mapArena(n int) []byte { return make([]byte, n) }

func unmapArena([]byte) {}
