package search

import (
	"hash/maphash"
	"sync"
)

// A segment remembers its last lookups of whole terms. Finding a term
// walks its dictionary block from the start, entry by entry: a few
// microseconds, which a query of many words pays for each word in each
// part, and the "did you mean" of GET /v1/search again for each word.
// People search for the same words again and again, and a segment never
// changes, so what a lookup found (or did not) stays true while the
// segment is open.

// lookupSlots is the number of lookups a segment remembers, about 72
// bytes each: a list of forty words in the seven languages of a
// person's mail looks up some 280 terms in each segment, which 256 slots
// could not hold (a tenth of that query's time went to lookups again).
const lookupSlots = 1024

// lookupMemo is a segment's remembered lookups, each term in the slot
// its hash picks, the newer in a slot replacing the older. Its slots are
// made at the first lookup it remembers: a segment nobody searches (most
// of a service's, whose people are not searching) costs nothing, where
// making them as every segment opened cost 0.7 MB of RSS at 100,000
// items (BenchmarkItemsCold).
type lookupMemo struct {
	mu    sync.Mutex
	seed  maphash.Seed
	slots *[lookupSlots]lookupSlot
}

type lookupSlot struct {
	term  string
	e     dictEntry
	found bool
	used  bool
}

func newLookupMemo() *lookupMemo { return &lookupMemo{seed: maphash.MakeSeed()} }

func (m *lookupMemo) slot(term string) *lookupSlot {
	return &m.slots[maphash.String(m.seed, term)%lookupSlots]
}

// get returns what the last lookup of term found, if it is remembered.
func (m *lookupMemo) get(term string) (e dictEntry, found, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.slots == nil {
		return dictEntry{}, false, false
	}
	s := m.slot(term)
	if !s.used || s.term != term {
		return dictEntry{}, false, false
	}
	return s.e, s.found, true
}

// put remembers what a lookup of term found.
func (m *lookupMemo) put(term string, e dictEntry, found bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.slots == nil {
		m.slots = new([lookupSlots]lookupSlot)
	}
	*m.slot(term) = lookupSlot{term: term, e: e, found: found, used: true}
}
