//go:build unix

package search

import "syscall"

// mapArena returns n bytes of memory outside the Go heap: anonymous pages
// that take room only once written. Where the system refuses, the heap
// serves, as on systems without mmap.
func mapArena(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// unmapArena returns an arena's pages; nothing reads them after.
func unmapArena(b []byte) {
	// A heap arena is not mapped: Munmap refuses it, and the collector
	// takes it back.
	syscall.Munmap(b)
}
