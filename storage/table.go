package storage

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// TableConfig describes the records of one table: how to find their id,
// which of them are live, when they expire, and which indexes they feed.
// Every func must be pure: it is called under the store's locks, on values
// it must not modify.
type TableConfig[T any] struct {
	// ID returns the record's id. Required. An id must be non-empty valid
	// UTF-8 and must survive a JSON round trip of the record unchanged.
	ID func(*T) string
	// Live reports whether the record is live. nil: every record is live.
	// A record that is not live is soft-deleted: it is kept and readable,
	// but outside the unique indexes, so its keys are free for others.
	Live func(*T) bool
	// Expired reports whether the record has expired at the given time.
	// nil: never. Expired records stay readable until the next compaction
	// or open, which drop them; callers check expiry themselves.
	Expired func(*T, time.Time) bool
	// Unique maps an index name to the record's key in it. Among live
	// records a non-empty key belongs to one record at most; an empty key is
	// not indexed.
	Unique map[string]func(*T) string
	// Index maps an index name to the record's key in a non-unique index
	// over every record, live or not. An empty key is not indexed.
	Index map[string]func(*T) string
	// Ordered maps an index name to an ordered index over live records,
	// read with Ascend.
	Ordered map[string]Ordered[T]
	// Pack, if set, is called once at Open with the records the replay
	// keeps, before they go into the table, and may move what they point
	// to into a few large allocations (keeping every value equal). The
	// replay leaves each record's strings scattered among its own garbage,
	// so pages stay partly used and cannot be given back to the system;
	// packed, they can. For tables of very many records.
	Pack func([]T)
	// Cold, if set, makes the table cold: it keeps each record stripped in
	// memory and reads it whole back from the log when needed (Load). Get,
	// Lookup, Find, Scan and ScanIndex return the stripped copies. Put and
	// Insert refuse a stripped record, so that none can replace a whole one.
	Cold *Cold[T]
}

// Table is a typed table of records of type T keyed by id, registered with
// Register. Reads see only durable state. Values returned are copies of the
// stored ones, but slices and maps inside them are shared: treat them as
// immutable.
type Table[T any] struct {
	s      *Store
	name   string
	cfg    TableConfig[T]
	recs   map[string]T
	unique map[string]*uniqueIndex[T]
	multi  map[string]*multiIndex[T]
	uniq   []*uniqueIndex[T] // unique, in a fixed order for the writer
	mult   []*multiIndex[T]
	ord    map[string]*orderedIndex[T]
	ords   []*orderedIndex[T]

	// pend is the writer's overlay of accepted but still undurable changes
	// of the current batch. Only the writer goroutine touches it.
	pend map[string]pendingRec[T]

	// stage holds, during Open only, the last logged JSON of each record.
	stage map[string]*staged

	// moved holds, during a compaction of a cold table, the records'
	// positions in the new log. Only the writer touches it.
	moved []movedRef
}

// pendingRec is a change in the writer's overlay: v is whole, and for a
// put ref is where its JSON lies in the batch's line.
type pendingRec[T any] struct {
	v   T
	ref ColdRef
	del bool
}

type uniqueIndex[T any] struct {
	name string
	key  func(*T) string
	m    map[string]string // key -> id, live records only
	pend map[string]string // writer overlay: key -> id, "" for released
}

type multiIndex[T any] struct {
	name string
	key  func(*T) string
	m    map[string][]string // key -> ids
	gone map[string][]string // key -> ids to remove, while a batch is applied
}

// table is what the store needs of a Table[T] whatever T is.
type table interface {
	tableName() string
	count() int
	replayPut(id, raw []byte, off, voff int64)
	replayDelete(id []byte)
	finishReplay(path string, now time.Time) error
	writeLive(now time.Time, emit func(table, id string, v []byte) (int64, error)) (expired []string, err error)
	switchRefs(apply bool)
	drop(ids []string)
	applyPending(base int64)
	clearPending()
}

// Register adds a table named name to s. It must be called before Open; it
// panics after Open, on a duplicate or empty name, or without cfg.ID, as
// these are programmer errors.
func Register[T any](s *Store, name string, cfg TableConfig[T]) *Table[T] {
	if cfg.ID == nil {
		panic(fmt.Sprintf("storage: table %q: TableConfig.ID is nil", name))
	}
	if cfg.Cold != nil && (cfg.Cold.Strip == nil || cfg.Cold.Ref == nil) {
		panic(fmt.Sprintf("storage: table %q: TableConfig.Cold needs Strip and Ref", name))
	}
	if !validID(name) {
		panic(fmt.Sprintf("storage: invalid table name %q", name))
	}
	t := &Table[T]{
		s: s, name: name, cfg: cfg,
		recs:   make(map[string]T),
		unique: make(map[string]*uniqueIndex[T]),
		multi:  make(map[string]*multiIndex[T]),
		ord:    make(map[string]*orderedIndex[T]),
		pend:   make(map[string]pendingRec[T]),
		stage:  make(map[string]*staged),
	}
	for _, n := range sortedKeys(cfg.Unique) {
		u := &uniqueIndex[T]{name: n, key: cfg.Unique[n], m: make(map[string]string), pend: make(map[string]string)}
		t.unique[n] = u
		t.uniq = append(t.uniq, u)
	}
	for _, n := range sortedKeys(cfg.Index) {
		m := &multiIndex[T]{name: n, key: cfg.Index[n], m: make(map[string][]string), gone: make(map[string][]string)}
		t.multi[n] = m
		t.mult = append(t.mult, m)
	}
	for _, n := range sortedKeys(cfg.Ordered) {
		oc := cfg.Ordered[n]
		if oc.Key == nil || oc.Less == nil {
			panic(fmt.Sprintf("storage: table %q: ordered index %q needs Key and Less", name, n))
		}
		o := &orderedIndex[T]{name: n, cfg: oc, groups: make(map[string]*orderedGroup)}
		t.ord[n] = o
		t.ords = append(t.ords, o)
	}
	s.register(t)
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Get returns the record with id. It does not allocate.
func (t *Table[T]) Get(id string) (T, bool) {
	t.s.mu.RLock()
	v, ok := t.recs[id]
	t.s.mu.RUnlock()
	return v, ok
}

// Lookup returns the live record whose key in the unique index is key. It
// does not allocate. It panics if the table has no such index.
func (t *Table[T]) Lookup(index, key string) (T, bool) {
	u := t.unique[index]
	if u == nil {
		panic("storage: table " + t.name + " has no unique index " + index)
	}
	t.s.mu.RLock()
	v, ok := t.recs[u.m[key]]
	t.s.mu.RUnlock()
	return v, ok
}

// Find returns every record, live or not, whose key in the non-unique index
// is key, in no particular order. It panics if the table has no such index.
func (t *Table[T]) Find(index, key string) []T {
	m := t.multi[index]
	if m == nil {
		panic("storage: table " + t.name + " has no index " + index)
	}
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	ids := m.m[key]
	if len(ids) == 0 {
		return nil
	}
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		out = append(out, t.recs[id])
	}
	return out
}

// Scan calls fn for every record, in no particular order, until fn returns
// false. It holds the store's read lock throughout, which is not reentrant:
// fn must not call Commit or any other method of the store or its tables.
func (t *Table[T]) Scan(fn func(T) bool) {
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	for _, v := range t.recs {
		if !fn(v) {
			return
		}
	}
}

// Len returns the number of records, live or not.
func (t *Table[T]) Len() int {
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	return len(t.recs)
}

func (t *Table[T]) tableName() string { return t.name }

func (t *Table[T]) count() int { return len(t.recs) }

func (t *Table[T]) live(v *T) bool { return t.cfg.Live == nil || t.cfg.Live(v) }

// uniqueKey is v's key in u, or "" if v is not indexed there.
func (t *Table[T]) uniqueKey(u *uniqueIndex[T], v *T) string {
	if !t.live(v) {
		return ""
	}
	return u.key(v)
}

// writeLive emits every record that has not expired, as JSON, and returns
// the ids of those that have. emit returns where the value lies in the new
// log; a cold table notes it (moved) for switchRefs.
func (t *Table[T]) writeLive(now time.Time, emit func(table, id string, v []byte) (int64, error)) ([]string, error) {
	var expired []string
	var cold []movedRef
	for id, v := range t.recs {
		if t.cfg.Expired != nil && t.cfg.Expired(&v, now) {
			expired = append(expired, id)
			continue
		}
		if t.stripped(&v) {
			cold = append(cold, movedRef{id: id, ref: *t.cfg.Cold.Ref(&v)})
			continue
		}
		raw, err := json.Marshal(&v)
		if err != nil {
			return nil, fmt.Errorf("encode %s %q: %w", t.name, id, err)
		}
		at, err := emit(t.name, id, raw)
		if err != nil {
			return nil, err
		}
		if ref, ok := coldRef(at, raw); ok && t.cfg.Cold != nil {
			t.moved = append(t.moved, movedRef{id: id, ref: ref})
		}
	}
	if err := t.writeCold(cold, emit); err != nil {
		return nil, err
	}
	return expired, nil
}

// drop removes records and their index entries. Caller holds s.mu.
func (t *Table[T]) drop(ids []string) {
	for _, id := range ids {
		t.pend[id] = pendingRec[T]{del: true}
	}
	t.applyPending(0)
}

// applyPending makes the batch overlay the committed state; base is the
// log offset of the batch's line, where a cold table's records now lie. The caller holds
// s.mu for writing. Index entries are removed for every changed record
// before any is added, so a key moving from one record to another within a
// batch ends up with its new owner whatever the map order, and an ordered
// index only ever holds records whose stored value is where it put them.
func (t *Table[T]) applyPending(base int64) {
	if len(t.pend) == 0 {
		return
	}
	for id, p := range t.pend {
		old, had := t.recs[id]
		if !had {
			continue
		}
		for _, u := range t.uniq {
			k := t.uniqueKey(u, &old)
			if k != "" && (p.del || t.uniqueKey(u, &p.v) != k) && u.m[k] == id {
				delete(u.m, k)
			}
		}
		for _, m := range t.mult {
			k := m.key(&old)
			if k != "" && (p.del || m.key(&p.v) != k) {
				m.gone[k] = append(m.gone[k], id)
			}
		}
		for _, o := range t.ords {
			if k := t.orderedKey(o, &old); k != "" && (p.del || t.orderedMoves(o, k, &old, &p.v)) {
				t.orderedRemove(o, k, id, &old)
			}
		}
	}
	for _, m := range t.mult {
		m.removeGone()
	}
	for id, p := range t.pend {
		old, had := t.recs[id]
		if p.del {
			delete(t.recs, id)
			continue
		}
		if p.ref.Stripped() && t.cfg.Cold != nil {
			v, ref := p.v, p.ref
			ref.off += base
			t.strip(&v, ref)
			t.recs[id] = v
		} else {
			t.recs[id] = p.v
		}
		for _, u := range t.uniq {
			if k := t.uniqueKey(u, &p.v); k != "" && (!had || t.uniqueKey(u, &old) != k) {
				u.m[k] = id
			}
		}
		for _, m := range t.mult {
			if k := m.key(&p.v); k != "" && (!had || m.key(&old) != k) {
				m.m[k] = append(m.m[k], id)
			}
		}
		for _, o := range t.ords {
			if k := t.orderedKey(o, &p.v); k != "" && (!had || t.orderedMoves(o, t.orderedKey(o, &old), &old, &p.v)) {
				t.orderedInsert(o, k, id, &p.v)
			}
		}
	}
	t.clearPending()
}

func (t *Table[T]) clearPending() {
	clear(t.pend)
	for _, u := range t.uniq {
		clear(u.pend)
	}
}

// removeGone takes the ids gathered in m.gone out of their keys' lists:
// one pass over a list whatever the number of its ids that go, so that
// dropping a whole key's records (the expired tombstones of a
// disconnect) is not quadratic.
func (m *multiIndex[T]) removeGone() {
	for key, gone := range m.gone {
		ids := m.m[key]
		if len(gone) == 1 {
			if i := slices.Index(ids, gone[0]); i >= 0 {
				last := len(ids) - 1
				ids[i], ids[last] = ids[last], ""
				ids = ids[:last]
			}
		} else {
			set := make(map[string]struct{}, len(gone))
			for _, id := range gone {
				set[id] = struct{}{}
			}
			ids = slices.DeleteFunc(ids, func(id string) bool {
				_, ok := set[id]
				return ok
			})
		}
		if len(ids) == 0 {
			delete(m.m, key)
		} else {
			m.m[key] = ids
		}
	}
	clear(m.gone)
}

// ScanIndex calls fn for every record, live or not, whose key in the
// non-unique index is key, in no particular order, until fn returns false.
// Unlike Find it copies nothing: a caller that keeps a few of many records
// (a page) pays for those only. It holds the store's read lock throughout:
// fn must not call Commit or any other method of the store or its tables.
// It panics if the table has no such index.
func (t *Table[T]) ScanIndex(index, key string, fn func(T) bool) {
	m := t.multi[index]
	if m == nil {
		panic("storage: table " + t.name + " has no index " + index)
	}
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	for _, id := range m.m[key] {
		if !fn(t.recs[id]) {
			return
		}
	}
}
