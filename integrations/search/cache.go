package search

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"
)

// cache keeps opened dictionary blocks and the postings streams queries
// read, within a byte budget. It is shared by every user's segments. Of a
// postings block it keeps only the streams queries read (see
// segment.cachedPostings): a query for a rare word needs a few bytes of a
// block of 64 KiB, and one that reads a term's documents does not need its
// positions, which lie beside them.
//
// The entries live in an arena mapped outside the Go heap (see mapArena),
// filled as a ring, oldest entry out first; in the heap is only the map
// from keys to their places. In the heap an evicted entry's bytes would
// be garbage, filling the room the service's memory limit leaves above
// what is live (a quarter of MEMORY_LIMIT_MIB) and bringing collections
// sooner, and with a collector target (GC_PERCENT) a full cache would
// cost a share of its budget once more. Out of it, an entry's bytes are
// reused as soon as it is evicted, so a
// reader pins the entries it reads (get and put pin, unpin releases) and
// a pinned entry is never evicted or overwritten: when the oldest entry is
// pinned, put keeps nothing and the caller reads its own copy.
//
// An entry is a header of entryHeader bytes (its key, its length, its
// pins) and its bytes, padded to 8. It is live while items points to it;
// one dropped with its segment keeps its place in the ring (and its bytes,
// while pinned) until the ring comes round to it.
type cache struct {
	mu     sync.Mutex
	budget int64
	used   int64 // the live entries' places in the arena and entryOverhead each
	// arenaLen is the arena's size and maxEntries the most entries kept:
	// together within the budget (see newCache), so the ring's room and
	// the count are all put checks; used follows from them.
	arenaLen, maxEntries int
	arena                []byte
	cleanup              runtime.Cleanup
	// The ring: entries from tail to head, in the order they came; when
	// head has gone round past the arena's end, from tail to end, then
	// from the start to head.
	head, tail, end, count int
	items                  map[cacheKey]uint32
	pinned                 int // pins held, over every entry
	closed                 bool
	nextSeg                uint32
	hits                   uint64
	misses                 uint64
	evicted, wraps         uint64 // entries evicted; times the ring went round
	// inflate is here, shared by every segment, as the cache is.
	inflate inflaters
}

// cacheKey names a whole block, or (block streamBlock) the n bytes of the
// postings stream at off. seg is the segment's number in the cache.
type cacheKey struct {
	seg, block uint32
	off, n     uint64
}

// streamBlock marks a stream's key; it is the footer's number, which is
// never cached.
const streamBlock = footerBlock

const (
	entryHeader = 32
	// entryOverhead is what an entry costs in the heap: its share of
	// the map, which may be up to half empty after it grows.
	entryOverhead = 80
)

func newCache(budget int64) *cache {
	// The ring goes round the whole arena, so all of it is resident once
	// the cache has filled: the arena takes three quarters of the budget
	// and the map the rest, however small the entries.
	arena := min(budget*3/4, math.MaxInt32)
	return &cache{budget: budget, arenaLen: int(arena), maxEntries: int(max((budget-arena)/entryOverhead, 1)),
		items: map[cacheKey]uint32{}}
}

// segID numbers a segment for its keys.
func (c *cache) segID() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextSeg++
	return c.nextSeg
}

func (c *cache) entryLen(at int) int {
	return int(binary.LittleEndian.Uint32(c.arena[at+24:]))
}

func (c *cache) pins(at int) uint32 { return binary.LittleEndian.Uint32(c.arena[at+28:]) }

func (c *cache) setPins(at int, n uint32) { binary.LittleEndian.PutUint32(c.arena[at+28:], n) }

func (c *cache) keyAt(at int) cacheKey {
	h := c.arena[at:]
	return cacheKey{seg: binary.LittleEndian.Uint32(h), block: binary.LittleEndian.Uint32(h[4:]),
		off: binary.LittleEndian.Uint64(h[8:]), n: binary.LittleEndian.Uint64(h[16:])}
}

// place is the room an entry of n bytes takes in the arena.
func place(n int) int { return entryHeader + (n+7)&^7 }

func (c *cache) data(at int) []byte {
	n := c.entryLen(at)
	return c.arena[at+entryHeader : at+entryHeader+n : at+entryHeader+n]
}

// get returns the entry's bytes and place, pinned.
func (c *cache) get(k cacheKey) ([]byte, uint32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.items[k]
	if !ok {
		c.misses++
		return nil, 0, false
	}
	c.hits++
	c.setPins(int(at), c.pins(int(at))+1)
	c.pinned++
	return c.data(int(at)), at, true
}

// put copies data into the cache and returns the copy and its place,
// pinned; or data itself and false when it keeps nothing: data does not
// fit the arena, the key is there already, or a pinned entry is in the
// way.
func (c *cache) put(k cacheKey, data []byte) ([]byte, uint32, bool) {
	n := len(data)
	need := place(n)
	if n == 0 || need > c.arenaLen {
		return data, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok || c.closed {
		return data, 0, false
	}
	if c.arena == nil {
		a := mapArena(c.arenaLen)
		c.arena = a
		// The arena goes with an Index's Close; a cache that is never
		// closed (a segment opened alone) lets it go when it is collected.
		// Nothing reads the arena then: a reader holds its pins, and
		// unpinning needs the cache.
		c.cleanup = runtime.AddCleanup(c, unmapArena, a)
	}
	for {
		if c.count == 0 {
			c.head, c.tail, c.end = 0, 0, 0
			break
		}
		if c.tail < c.head {
			// Free: from head to the arena's end, then from its start
			// to tail.
			if c.head+need > len(c.arena) {
				c.end, c.head = c.head, 0
				c.wraps++
				continue
			}
			if c.count < c.maxEntries {
				break
			}
		} else if c.head+need <= c.tail && c.count < c.maxEntries {
			// Free: from head to tail.
			break
		}
		if c.pins(c.tail) > 0 {
			return data, 0, false
		}
		c.evictTail()
	}
	at := c.head
	h := c.arena[at : at+entryHeader]
	binary.LittleEndian.PutUint32(h, k.seg)
	binary.LittleEndian.PutUint32(h[4:], k.block)
	binary.LittleEndian.PutUint64(h[8:], k.off)
	binary.LittleEndian.PutUint64(h[16:], k.n)
	binary.LittleEndian.PutUint32(h[24:], uint32(n))
	binary.LittleEndian.PutUint32(h[28:], 1)
	copy(c.arena[at+entryHeader:], data)
	c.items[k] = uint32(at)
	c.used += int64(need) + entryOverhead
	c.pinned++
	c.count++
	c.head += need
	return c.data(at), uint32(at), true
}

// evictTail takes the oldest entry, unpinned, out of the ring.
func (c *cache) evictTail() {
	at := c.tail
	c.evicted++
	c.forget(c.keyAt(at), at)
	c.tail += place(c.entryLen(at))
	c.count--
	if c.tail == c.end && c.tail > c.head {
		c.tail, c.end = 0, 0
	}
}

// forget takes the entry at at out of items and the budget, if it is
// still there.
func (c *cache) forget(k cacheKey, at int) {
	if cur, ok := c.items[k]; ok && int(cur) == at {
		delete(c.items, k)
		c.used -= int64(place(c.entryLen(at))) + entryOverhead
	}
}

// unpin releases pins taken by get and put; the entries' bytes are not
// read after.
func (c *cache) unpin(ats ...uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, at := range ats {
		c.setPins(int(at), c.pins(int(at))-1)
		c.pinned--
	}
	c.unmapIfDone()
}

// drop forgets every entry of a segment that is gone.
func (c *cache) drop(seg uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, at := range c.items {
		if k.seg == seg {
			c.forget(k, int(at))
		}
	}
}

// close forgets every entry and lets the arena go once no pin is held.
func (c *cache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for k, at := range c.items {
		c.forget(k, int(at))
	}
	c.unmapIfDone()
}

func (c *cache) unmapIfDone() {
	if !c.closed || c.pinned > 0 || c.arena == nil {
		return
	}
	c.cleanup.Stop()
	unmapArena(c.arena)
	c.arena = nil
	c.head, c.tail, c.end, c.count = 0, 0, 0, 0
}

// pins are the places of the cache entries one reader holds.
type pins struct {
	c   *cache
	ats []uint32
}

func (p *pins) add(c *cache, at uint32, ok bool) {
	if ok {
		p.c = c
		p.ats = append(p.ats, at)
	}
}

// release unpins every entry; their bytes are not read after.
func (p *pins) release() {
	if len(p.ats) > 0 {
		p.c.unpin(p.ats...)
		p.ats = p.ats[:0]
	}
}
