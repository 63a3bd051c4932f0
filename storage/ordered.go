package storage

import "slices"

// Ordered describes an ordered index: for each key, the live records with
// that key, in the order Less gives, so that a reader can seek to a
// position and read the records after it (a page) without reading the
// others.
type Ordered[T any] struct {
	// Key is the record's key in the index; an empty key is not indexed.
	Key func(*T) string
	// Less orders the records of one key. It must be a strict total
	// order over them: two different records never compare equal, so
	// break ties by id.
	Less func(a, b *T) bool
}

// chunkMax bounds a chunk of an ordered index. An insert or a removal
// moves at most a chunk's ids, and a seek costs about
// log2(records/chunkMax) + log2(chunkMax) comparisons.
const chunkMax = 256

// orderedIndex holds, per key, the ids of the live records in Less order,
// cut into chunks of at most chunkMax ids, so that changing one record
// costs O(log n + chunkMax) whatever the number of records of its key,
// and removing many (a whole key's records) is not quadratic. An id is
// 16 bytes here: the string shares the bytes of the id it came from.
type orderedIndex[T any] struct {
	name   string
	cfg    Ordered[T]
	groups map[string]*orderedGroup
}

type orderedGroup struct {
	chunks [][]string
}

// pos is a position in a group: chunk c, index i in it.
type pos struct{ c, i int }

// orderedKey is v's key in o, or "" if v is not indexed there: ordered
// indexes hold live records only.
func (t *Table[T]) orderedKey(o *orderedIndex[T], v *T) string {
	if !t.live(v) {
		return ""
	}
	return o.cfg.Key(v)
}

// search returns the first position of g whose record f reports true
// for, f being false then true along the order (as sort.Search's f). The
// caller holds s.mu, and every id in g names a record whose stored value
// is where g puts it.
func (t *Table[T]) search(g *orderedGroup, f func(*T) bool) pos {
	at := func(id string) bool {
		r := t.recs[id]
		return f(&r)
	}
	c, _ := slices.BinarySearchFunc(g.chunks, true, func(ch []string, _ bool) int {
		if at(ch[len(ch)-1]) {
			return 1
		}
		return -1
	})
	if c == len(g.chunks) {
		return pos{c, 0}
	}
	ch := g.chunks[c]
	i, _ := slices.BinarySearchFunc(ch, true, func(id string, _ bool) int {
		if at(id) {
			return 1
		}
		return -1
	})
	return pos{c, i}
}

// insert adds id, whose stored record is v, in order.
func (t *Table[T]) orderedInsert(o *orderedIndex[T], key, id string, v *T) {
	g := o.groups[key]
	if g == nil {
		g = &orderedGroup{}
		o.groups[key] = g
	}
	if len(g.chunks) == 0 {
		g.chunks = append(g.chunks, []string{id})
		return
	}
	p := t.search(g, func(r *T) bool { return !o.cfg.Less(r, v) })
	if p.c == len(g.chunks) { // after every record: at the end of the last chunk
		p.c--
		p.i = len(g.chunks[p.c])
	}
	ch := g.chunks[p.c]
	switch {
	case len(ch) < chunkMax:
	case p.i == 0 || p.i == len(ch):
		// At an end of a full chunk: a chunk of its own, so that records
		// arriving in order (the newest first, say) fill chunks rather
		// than leave each half empty.
		if p.i > 0 {
			p.c++
		}
		g.chunks = slices.Insert(g.chunks, p.c, make([]string, 0, 8))
		ch, p.i = g.chunks[p.c], 0
	default:
		half := chunkMax / 2
		right := make([]string, chunkMax-half, chunkMax)
		copy(right, ch[half:])
		clear(ch[half:])
		ch = ch[:half]
		g.chunks[p.c] = ch
		g.chunks = slices.Insert(g.chunks, p.c+1, right)
		if p.i > half {
			p.c++
			p.i -= half
			ch = right
		}
	}
	g.chunks[p.c] = slices.Insert(ch, p.i, id)
}

// orderedMoves reports whether a record changing from old to v, old
// being in o under key, leaves its place in o: it changes key, stops being
// indexed, or changes its order.
func (t *Table[T]) orderedMoves(o *orderedIndex[T], key string, old, v *T) bool {
	return t.orderedKey(o, v) != key || o.cfg.Less(old, v) || o.cfg.Less(v, old)
}

// remove takes out id, whose stored record is v (still stored when
// remove runs, so that the search finds it).
func (t *Table[T]) orderedRemove(o *orderedIndex[T], key, id string, v *T) {
	g := o.groups[key]
	if g == nil {
		return
	}
	p := t.search(g, func(r *T) bool { return !o.cfg.Less(r, v) })
	if p.c == len(g.chunks) || g.chunks[p.c][p.i] != id {
		return
	}
	ch := slices.Delete(g.chunks[p.c], p.i, p.i+1)
	g.chunks[p.c] = ch
	switch {
	case len(ch) == 0:
		g.chunks = slices.Delete(g.chunks, p.c, p.c+1)
		if len(g.chunks) == 0 {
			delete(o.groups, key)
		}
	case p.c+1 < len(g.chunks) && len(ch)+len(g.chunks[p.c+1]) <= chunkMax/2:
		// Merge small neighbours, so that a group that lost most of its
		// records does not keep a chunk per few of them.
		g.chunks[p.c] = append(ch, g.chunks[p.c+1]...)
		g.chunks = slices.Delete(g.chunks, p.c+1, p.c+2)
	}
}

// build fills o from the records vals[i] for i in keep, at Open.
func (t *Table[T]) orderedBuild(o *orderedIndex[T], vals []T, keep []int) {
	byKey := make(map[string][]int)
	for _, i := range keep {
		if k := t.orderedKey(o, &vals[i]); k != "" {
			byKey[k] = append(byKey[k], i)
		}
	}
	o.groups = make(map[string]*orderedGroup, len(byKey))
	for k, idx := range byKey {
		slices.SortFunc(idx, func(a, b int) int {
			switch {
			case o.cfg.Less(&vals[a], &vals[b]):
				return -1
			case o.cfg.Less(&vals[b], &vals[a]):
				return 1
			}
			return 0
		})
		g := &orderedGroup{chunks: make([][]string, 0, (len(idx)+chunkMax-1)/chunkMax)}
		for len(idx) > 0 {
			n := min(len(idx), chunkMax)
			ch := make([]string, n)
			for j, i := range idx[:n] {
				ch[j] = t.cfg.ID(&vals[i])
			}
			g.chunks = append(g.chunks, ch)
			idx = idx[n:]
		}
		o.groups[k] = g
	}
}

// Ascend calls fn, in the order of the ordered index, for the live
// records whose key in it is key, from the first for which from reports
// true (nil: from the first), until fn returns false. from must report
// false for the records of a prefix of the order and true for the rest,
// like sort.Search's f: a seek costs O(log n) calls of from, and reading
// m records costs m, whatever the number of records of the key. It holds
// the store's read lock throughout: fn and from must not call Commit or
// any other method of the store or its tables. It panics if the table has
// no such index.
func (t *Table[T]) Ascend(index, key string, from func(*T) bool, fn func(T) bool) {
	o := t.ord[index]
	if o == nil {
		panic("storage: table " + t.name + " has no ordered index " + index)
	}
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	g := o.groups[key]
	if g == nil {
		return
	}
	p := pos{}
	if from != nil {
		p = t.search(g, from)
	}
	for c := p.c; c < len(g.chunks); c++ {
		ch := g.chunks[c]
		if c == p.c {
			ch = ch[p.i:]
		}
		for _, id := range ch {
			if !fn(t.recs[id]) {
				return
			}
		}
	}
}

// OrderedLen returns the number of records whose key in the ordered index
// is key. It panics if the table has no such index.
func (t *Table[T]) OrderedLen(index, key string) int {
	o := t.ord[index]
	if o == nil {
		panic("storage: table " + t.name + " has no ordered index " + index)
	}
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	n := 0
	if g := o.groups[key]; g != nil {
		for _, ch := range g.chunks {
			n += len(ch)
		}
	}
	return n
}
