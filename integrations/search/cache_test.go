package search

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// streamDocs are documents whose common words have postings streams
// longer than a block, and whose rare words have streams of a few bytes.
func streamDocs() []Doc {
	var docs []Doc
	for i := range 1500 {
		docs = append(docs, Doc{ID: fmt.Sprintf("s%04d", i), Kind: "email", Title: "weekly " + letters(i),
			Text: strings.Repeat("alpha beta gamma ", 12) + "only" + letters(i) + " delta" + letters(i%40)})
	}
	return docs
}

// onlySegment returns the one segment of userA's index.
func onlySegment(t *testing.T, ix *Index) *segment {
	t.Helper()
	u, err := ix.getUser(userA, false)
	if err != nil || u == nil {
		t.Fatalf("getUser: %v, %v", u, err)
	}
	var segs []*segment
	for _, p := range u.parts {
		if p.seg != nil {
			segs = append(segs, p.seg)
		}
	}
	if len(segs) != 1 {
		t.Fatalf("got %d segments, want 1", len(segs))
	}
	return segs[0]
}

// TestCachedPostings reads every stream of a segment through the cache,
// as queries do, and compares it with the stream read block by block
// without the cache: the same bytes, then the same bytes again from the
// cache, which holds each stream alone and no whole postings block.
func TestCachedPostings(t *testing.T) {
	ix := openTest(t, t.TempDir())
	if err := ix.Add(userA, streamDocs()...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	seg := onlySegment(t, ix)
	if len(seg.post) < 2 {
		t.Fatalf("got %d postings blocks, want several", len(seg.post))
	}
	var bs blockScratch
	spanning, streams := 0, 0
	it := seg.dictFrom(0, &blockMemo{})
	for it.next() {
		e := it.e
		for _, st := range []struct{ off, n uint64 }{{e.off + e.posLen, e.docLen}, {e.off, e.posLen}} {
			if st.n == 0 {
				continue
			}
			streams++
			if st.off/postBlock != (st.off+st.n-1)/postBlock {
				spanning++
			}
			var buf []byte
			want, err := seg.postings(st.off, st.n, &buf, &blockMemo{})
			if err != nil {
				t.Fatalf("%q: postings: %v", e.term, err)
			}
			want = bytes.Clone(want)
			misses := ix.cache.misses
			got, err := seg.cachedPostings(st.off, st.n, &bs)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%q at %d+%d: got %d bytes (%v), want %d bytes", e.term, st.off, st.n, len(got), err, len(want))
			}
			if ix.cache.misses != misses+1 {
				t.Fatalf("%q: got %d misses, want %d", e.term, ix.cache.misses, misses+1)
			}
			hits := ix.cache.hits
			again, err := seg.cachedPostings(st.off, st.n, &bs)
			if err != nil || !bytes.Equal(again, want) || ix.cache.hits != hits+1 {
				t.Fatalf("%q again: got %d bytes (%v), %d hits; want %d bytes, %d hits", e.term, len(again), err, ix.cache.hits, len(want), hits+1)
			}
		}
	}
	if it.err != nil {
		t.Fatal(it.err)
	}
	if spanning == 0 {
		t.Fatalf("got no stream across blocks of %d, want some", streams)
	}
	bs.release()
	ix.cache.mu.Lock()
	defer ix.cache.mu.Unlock()
	if ix.cache.pinned != 0 {
		t.Errorf("got %d pins after release, want 0", ix.cache.pinned)
	}
	n := 0
	for k, at := range ix.cache.items {
		switch {
		case k.block == streamBlock && uint64(ix.cache.entryLen(int(at))) != k.n:
			t.Errorf("stream at %d: got %d bytes cached, want %d", k.off, ix.cache.entryLen(int(at)), k.n)
		case k.block != streamBlock && seg.kinds[k.block] == kindPostings:
			t.Errorf("postings block %d cached whole", k.block)
		}
		if k.block == streamBlock {
			n++
		}
	}
	if n != streams {
		t.Errorf("got %d streams cached, want %d", n, streams)
	}
}

// TestCacheBudget runs queries from several goroutines through a cache far
// smaller than what they read, so streams are evicted while other queries
// read them: every answer is the one a large cache gives, and the cache
// never holds more than its budget.
func TestCacheBudget(t *testing.T) {
	docs := streamDocs()
	queries := []Node{
		qterm("alpha"),
		qterm("only" + letters(7)),
		And{Children: []Node{qterm("delta" + letters(3)), qterm("gamma")}},
		qphrase(FieldText, "beta", "gamma"),
		qprefix("delta"),
		Or{Children: []Node{qterm("only" + letters(1400)), qfield(FieldTitle, "weekly")}},
	}
	var want [][]string
	big := openTest(t, t.TempDir())
	big.Add(userA, docs...)
	big.Flush()
	for _, q := range queries {
		ids := hitIDs(search(t, big, userA, Request{Query: q, Limit: 50}))
		if len(ids) == 0 {
			t.Fatalf("%v: no hits", q)
		}
		want = append(want, ids)
	}
	for _, budget := range []int64{1 << 10, 8 << 10, 64 << 10} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			ix := openTest(t, t.TempDir(), func(c *Config) { c.CacheBytes = budget })
			ix.Add(userA, docs...)
			ix.Flush()
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for g := range 4 {
				wg.Go(func() {
					for round := range 20 {
						i := (g + round) % len(queries)
						res, err := ix.Search(userA, Request{Query: queries[i], Limit: 50})
						if err != nil {
							errs <- err
							return
						}
						if got := hitIDs(res); !slices.Equal(got, want[i]) {
							errs <- fmt.Errorf("query %d: got %v, want %v", i, got, want[i])
							return
						}
						if used := ix.Stats().CacheBytes; used > budget {
							errs <- fmt.Errorf("cache holds %d bytes, budget %d", used, budget)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

// fill is the content the cache tests keep under stream key i: n bytes
// that differ from every other key's.
func fill(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*7 + j*13 + i>>8)
	}
	return b
}

func streamKey(i int) cacheKey { return cacheKey{seg: 1, block: streamBlock, off: uint64(i), n: 1} }

// TestCachePins checks that a pinned entry keeps its bytes while the ring
// comes round many times, that put keeps nothing rather than overwrite
// it, and that it goes once unpinned; also after its segment is dropped
// and after the cache is closed.
func TestCachePins(t *testing.T) {
	const size = 1000
	budget := int64(4 * (place(size) + entryOverhead))
	tests := []struct {
		name string
		end  func(c *cache, pinned uint32)
	}{
		{"unpin", func(c *cache, at uint32) { c.unpin(at) }},
		{"drop, then unpin", func(c *cache, at uint32) { c.drop(2); c.unpin(at) }},
		{"close, then unpin", func(c *cache, at uint32) { c.close(); c.unpin(at) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache(budget)
			want := fill(0, size)
			k := cacheKey{seg: 2, block: streamBlock, n: 1}
			held, at, ok := c.put(k, want)
			if !ok {
				t.Fatal("first put kept nothing")
			}
			kept, refused := 0, 0
			for i := 1; i < 40; i++ {
				data := fill(i, size-i%3)
				got, ai, ok := c.put(streamKey(i), data)
				if !bytes.Equal(got, data) {
					t.Fatalf("put %d: got other bytes", i)
				}
				if !ok {
					refused++
				} else {
					kept++
					c.unpin(ai)
				}
				if !bytes.Equal(held, want) {
					t.Fatalf("after put %d: the pinned entry's bytes changed", i)
				}
				if c.used > budget {
					t.Fatalf("after put %d: %d bytes used, budget %d", i, c.used, budget)
				}
			}
			if kept == 0 || refused == 0 {
				t.Fatalf("got %d kept, %d refused; want some of each", kept, refused)
			}
			if b, ag, ok := c.get(k); !ok || !bytes.Equal(b, want) {
				t.Fatalf("get of the pinned entry: %v", ok)
			} else {
				c.unpin(ag)
			}
			tt.end(c, at)
			if c.pinned != 0 {
				t.Fatalf("got %d pins, want 0", c.pinned)
			}
			if c.closed {
				if c.arena != nil {
					t.Fatal("arena kept after close and the last unpin")
				}
				if _, _, ok := c.put(streamKey(99), fill(99, 10)); ok {
					t.Fatal("closed cache kept an entry")
				}
				return
			}
			for i := 40; i < 50; i++ {
				_, ai, ok := c.put(streamKey(i), fill(i, size))
				if !ok {
					t.Fatalf("put %d after the unpin kept nothing", i)
				}
				c.unpin(ai)
			}
			if _, _, ok := c.get(k); ok {
				t.Fatal("the unpinned entry is still there after the ring came round")
			}
		})
	}
}

// TestCacheConcurrent gets and puts from several goroutines through a
// cache a few entries large, each reader checking the bytes it holds
// pinned after the others had every chance to overwrite them.
func TestCacheConcurrent(t *testing.T) {
	c := newCache(int64(6 * (place(600) + entryOverhead)))
	defer c.close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for round := range 3000 {
				i := (g*31 + round*7) % 50
				want := fill(i, 200+i*8)
				var p pins
				b, at, ok := c.get(streamKey(i))
				if !ok {
					b, at, ok = c.put(streamKey(i), want)
				}
				p.add(c, at, ok)
				runtime.Gosched()
				if !bytes.Equal(b, want) {
					errs <- fmt.Errorf("goroutine %d, key %d: bytes changed while pinned", g, i)
					p.release()
					return
				}
				p.release()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pinned != 0 || c.used > c.budget {
		t.Fatalf("got %d pins, %d bytes used; want 0, at most %d", c.pinned, c.used, c.budget)
	}
}

// The ring goes round its whole arena, so all of it becomes resident:
// the arena and what the entries cost in the heap stay within the
// budget together, however small the entries (a rare word's stream is a
// few bytes, and its map entry costs more than it).
func TestCacheSmallEntriesWithinBudget(t *testing.T) {
	const budget = 64 << 10
	c := newCache(budget)
	for i := range 10_000 {
		_, at, ok := c.put(cacheKey{seg: 1, block: streamBlock, off: uint64(i), n: 1}, []byte{byte(i)})
		if ok {
			c.unpin(at)
		}
	}
	if got := len(c.arena) + c.count*entryOverhead; got > budget || c.count == 0 || c.wraps == 0 {
		t.Errorf("after 10,000 one-byte entries: arena %d + %d entries × %d = %d bytes (%d wraps), want at most the budget %d",
			len(c.arena), c.count, entryOverhead, got, c.wraps, budget)
	}
	c.close()
}
