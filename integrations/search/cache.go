package search

import (
	"container/list"
	"sync"
)

// cache keeps opened (decrypted) blocks, least recently used out first,
// within a byte budget. It is shared by every user's segments. Of a
// postings block it keeps only the streams queries read (see
// segment.cachedPostings): a query for a rare word needs a few bytes of
// a block of 64 KiB, and one that reads a term's documents does not need
// its positions, which lie beside them.
type cache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	ll     *list.List
	items  map[cacheKey]*list.Element
	hits   uint64
	misses uint64
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

// entryOverhead is what an entry costs beside its bytes: its list
// element, its cacheEntry and its share of the map. A cached stream is
// often a few bytes, so this counts against the budget as they do.
const entryOverhead = 160

type cacheEntry struct {
	key  cacheKey
	data []byte
}

func newCache(budget int64) *cache {
	return &cache{budget: budget, ll: list.New(), items: map[cacheKey]*list.Element{}}
}

func (c *cache) get(k cacheKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		c.hits++
		return e.Value.(*cacheEntry).data, true
	}
	c.misses++
	return nil, false
}

// put keeps data unless it alone exceeds the budget.
func (c *cache) put(k cacheKey, data []byte) {
	size := int64(cap(data)) + entryOverhead
	if size > c.budget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	c.items[k] = c.ll.PushFront(&cacheEntry{key: k, data: data})
	c.used += size
	for c.used > c.budget {
		c.removeElement(c.ll.Back())
	}
}

func (c *cache) removeElement(e *list.Element) {
	ce := e.Value.(*cacheEntry)
	c.ll.Remove(e)
	delete(c.items, ce.key)
	c.used -= int64(cap(ce.data)) + entryOverhead
}

// drop forgets every block of a segment that is gone.
func (c *cache) drop(s *segment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.ll.Front(); e != nil; {
		next := e.Next()
		if e.Value.(*cacheEntry).key.seg == s {
			c.removeElement(e)
		}
		e = next
	}
}
