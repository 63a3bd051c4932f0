package items

import "testing"

// TestHashSlotCells: a table of 100,000 entries costs at most 4.5 bytes
// an entry (3-byte cells); a slot past 3 bytes widens its cells, and
// every slot in it is found, and removed, as before, through collisions
// (every hash here is one of 64) and removals that move cells back.
func TestHashSlotCells(t *testing.T) {
	var h hashSlot
	h.reset(100_000)
	if per := float64(len(h.narrow)+4*len(h.wide)) / 100_000; per > 4.5 {
		t.Errorf("%.2f bytes an entry, want at most 4.5", per)
	}
	hashAt := func(s uint32) uint64 { return uint64(s % 64) }
	is := func(s uint32) func(uint32) bool { return func(c uint32) bool { return c == s } }
	h.reset(0)
	var slots []uint32
	for i := range uint32(3000) {
		s := i * 5
		if i == 2000 {
			s = narrowMax + 7 // from here the cells are 4 bytes
		}
		h.insert(hashAt(s), s, hashAt)
		slots = append(slots, s)
	}
	if h.wide == nil || h.narrow != nil {
		t.Fatal("a slot past 3 bytes did not widen the cells")
	}
	for i, s := range slots {
		if i%3 == 0 {
			h.remove(hashAt(s), s, hashAt)
		}
	}
	for i, s := range slots {
		got, ok := h.find(hashAt(s), hashAt, is(s))
		if want := i%3 != 0; ok != want || ok && got != s {
			t.Fatalf("find(%d): got %d, %v; want found %v", s, got, ok, want)
		}
	}
	if want := 2000; h.n != want {
		t.Errorf("n: got %d, want %d", h.n, want)
	}
}
