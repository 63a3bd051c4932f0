package search

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestCacheRingModel drives the cache with random puts, gets, unpins and
// drops, and checks that every pinned slice still holds the bytes it was
// given, that a get returns the bytes put under that key, and that the
// arena and the entries stay within the budget. (Written by a cold review
// of the arena.)
func TestCacheRingModel(t *testing.T) {
	for seed := int64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewSource(seed))
		budget := int64(512 + rng.Intn(4096))
		c := newCache(budget)
		type held struct {
			b    []byte
			want []byte
			at   uint32
		}
		var hs []held
		content := map[cacheKey][]byte{}
		segs := []uint32{c.segID(), c.segID(), c.segID()}
		for step := 0; step < 3000; step++ {
			switch op := rng.Intn(10); {
			case op < 4:
				k := cacheKey{seg: segs[rng.Intn(len(segs))], block: streamBlock, off: uint64(rng.Intn(200)), n: uint64(1 + rng.Intn(300))}
				data, ok := content[k]
				if !ok {
					data = make([]byte, k.n)
					rng.Read(data)
					content[k] = data
				}
				b, at, kept := c.put(k, bytes.Clone(data))
				if kept {
					hs = append(hs, held{b, bytes.Clone(data), at})
				}
			case op < 7:
				for k, data := range content {
					b, at, ok := c.get(k)
					if ok {
						if !bytes.Equal(b, data) {
							t.Fatalf("seed %d step %d: get %v = wrong bytes", seed, step, k)
						}
						hs = append(hs, held{b, bytes.Clone(data), at})
					}
					break
				}
			case op < 9:
				if len(hs) > 0 {
					i := rng.Intn(len(hs))
					c.unpin(hs[i].at)
					hs = append(hs[:i], hs[i+1:]...)
				}
			default:
				i := rng.Intn(len(segs))
				c.drop(segs[i])
				for k := range content {
					if k.seg == segs[i] {
						delete(content, k)
					}
				}
				segs[i] = c.segID()
			}
			for _, h := range hs {
				if !bytes.Equal(h.b, h.want) {
					t.Fatalf("seed %d step %d: a pinned entry was overwritten", seed, step)
				}
			}
			if c.used > c.budget || int64(c.arenaLen+c.count*entryOverhead) > c.budget {
				t.Fatalf("seed %d: used %d, arena %d and %d entries; budget %d", seed, c.used, c.arenaLen, c.count, c.budget)
			}
		}
	}
}
