package search

import (
	"container/list"
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
// The bytes live in an arena mapped outside the Go heap (see mapArena),
// filled as a ring, oldest entry out first. In the heap they would count
// as live, and the collector lets the heap grow half as far again past
// what is live (GC_PERCENT 50): a full cache would cost half its budget
// once more in garbage. Out of it, an entry's bytes are reused as soon as
// it is evicted, so a reader pins the entries it reads (get and put pin;
// unpin releases) and a pinned entry is never evicted or overwritten:
// when the oldest entry is pinned, put keeps nothing and the caller reads
// its own copy.
type cache struct {
	mu      sync.Mutex
	budget  int64
	used    int64 // the entries' bytes and entryOverhead each
	arena   []byte
	cleanup runtime.Cleanup
	head    int        // where the next entry goes in the arena
	ring    *list.List // of *centry, in arena order from head: oldest first
	items   map[cacheKey]*centry
	pinned  int // pins held, over every entry
	closed  bool
	hits    uint64
	misses  uint64
	// inflate is here, shared by every segment, as the cache is.
	inflate inflaters
}

// cacheKey names a whole block (stream false), or the n bytes of the
// postings stream at off (stream true, block zero).
type cacheKey struct {
	seg    *segment
	block  uint32
	stream bool
	off, n uint64
}

// centry is one entry: n bytes at off in the arena. An entry dropped with
// its segment leaves items, but keeps its place in the ring (and its
// bytes, while pinned) until the ring comes round to it.
type centry struct {
	key    cacheKey
	off, n int
	pins   int
	live   bool // in items
	elem   *list.Element
}

// entryOverhead is what an entry costs beside its bytes: its centry, its
// list element and its share of the map. A cached stream is often a few
// bytes, so this counts against the budget as they do.
const entryOverhead = 160

func newCache(budget int64) *cache {
	return &cache{budget: budget, ring: list.New(), items: map[cacheKey]*centry{}}
}

// get returns the entry's bytes, pinned.
func (c *cache) get(k cacheKey) ([]byte, *centry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		c.misses++
		return nil, nil, false
	}
	c.hits++
	e.pins++
	c.pinned++
	return c.arena[e.off : e.off+e.n : e.off+e.n], e, true
}

// put copies data into the cache and returns the copy, pinned; or data
// itself and no entry when it keeps nothing: data alone exceeds the
// budget, the key is there already, or a pinned entry is in the way.
func (c *cache) put(k cacheKey, data []byte) ([]byte, *centry) {
	n := len(data)
	size := int64(n) + entryOverhead
	if n == 0 || size > c.budget {
		return data, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok || c.closed {
		return data, nil
	}
	if c.arena == nil {
		a := mapArena(int(c.budget))
		c.arena = a
		// The arena goes with an Index's Close; a cache that is never
		// closed (a segment opened alone) lets it go when it is collected.
		// Nothing reads the arena then: a reader holds its pins, and
		// unpinning needs the cache.
		c.cleanup = runtime.AddCleanup(c, unmapArena, a)
	}
	for {
		front := c.ring.Front()
		if front == nil {
			if c.head+n > len(c.arena) {
				c.head = 0
			}
			break
		}
		fe := front.Value.(*centry)
		if fe.off >= c.head {
			// Free: from head to the oldest entry.
			if c.head+n <= fe.off && c.used+size <= c.budget {
				break
			}
		} else {
			// Free: from head to the end, then from the start to the
			// oldest entry.
			if c.head+n > len(c.arena) {
				c.head = 0
				continue
			}
			if c.used+size <= c.budget {
				break
			}
		}
		if fe.pins > 0 {
			return data, nil
		}
		c.evict(fe)
	}
	copy(c.arena[c.head:c.head+n], data)
	e := &centry{key: k, off: c.head, n: n, pins: 1, live: true}
	e.elem = c.ring.PushBack(e)
	c.items[k] = e
	c.used += size
	c.pinned++
	c.head += n
	return c.arena[e.off : e.off+n : e.off+n], e
}

// evict removes an unpinned entry from the ring, and from items if it is
// still there.
func (c *cache) evict(e *centry) {
	c.ring.Remove(e.elem)
	c.forget(e)
}

// forget takes a live entry out of items and the budget.
func (c *cache) forget(e *centry) {
	if e.live {
		e.live = false
		delete(c.items, e.key)
		c.used -= int64(e.n) + entryOverhead
	}
}

// unpin releases pins taken by get and put; an entry is not read after.
func (c *cache) unpin(es ...*centry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range es {
		e.pins--
		c.pinned--
	}
	c.unmapIfDone()
}

// drop forgets every block of a segment that is gone.
func (c *cache) drop(s *segment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if k.seg == s {
			c.forget(e)
		}
	}
}

// close forgets every entry and lets the arena go once no pin is held.
func (c *cache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, e := range c.items {
		c.forget(e)
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
	c.ring.Init()
}

// pins are the cache entries one reader holds.
type pins struct {
	c  *cache
	es []*centry
}

func (p *pins) add(c *cache, e *centry) {
	if e != nil {
		p.c = c
		p.es = append(p.es, e)
	}
}

// release unpins every entry; their bytes are not read after.
func (p *pins) release() {
	if len(p.es) > 0 {
		p.c.unpin(p.es...)
		clear(p.es)
		p.es = p.es[:0]
	}
}
