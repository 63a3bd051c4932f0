package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// A ColdTable is a table of which the store keeps nothing in memory but
// the batch being written: its caller keeps, in whatever form suits it
// (a few fixed-size fields per record), what lookups need, together with
// where each record's whole value lies in the active log, and reads the
// rest back with Load. It is for tables so large that even the stripped
// copies of a Table with TableConfig.Cold cost too much (a string id, a
// map slot and its indexes per record): the synced items.
//
// The caller's copy changes only in its ColdConfig funcs, which the store
// calls with its lock held for writing (the replay at Open, a durable
// batch, the switch to a compacted log), so a reader that holds it for
// reading (View) sees one committed state whole, and a position it finds
// points into the log the file then is. Values read back are checked
// against the CRC32C they had when they were written or verified at Open,
// as a Table's cold records are.

// ColdPut is a record a ColdTable holds: its id, where its whole value lies
// in the log and, when the store hands it to ColdConfig.Apply, that value
// (valid during the call only).
type ColdPut struct {
	ID  string
	Ref ColdRef
	V   []byte
}

// ColdConfig is what a ColdTable asks of the caller that keeps its records.
// Every func is called with the store's lock held: it must not call the
// store.
type ColdConfig struct {
	// Apply changes the caller's copy: the records put (whole values,
	// with their positions) and the ids deleted, of one durable batch or,
	// at Open, of one op of the log (replaying), in log order. An error
	// while replaying is a *CorruptError at the op's line; after a commit
	// the values are those the ops were made with.
	Apply func(puts []ColdPut, dels []string, replaying bool) error
	// Opened is called once at Open, after the replay: the caller drops
	// the records expired at now and builds its indexes.
	Opened func(now time.Time)
	// Keep calls fn for each record a compaction at now copies to the new
	// log, in any order: those that have not expired.
	Keep func(now time.Time, fn func(id string, ref ColdRef))
	// Moved gives the positions, in the new log a compaction wrote, of
	// every record Keep named: the caller forgets the others.
	Moved func(refs []ColdPut)
	// Ref returns where the whole value of the record with id lies, or
	// false if there is none.
	Ref func(id string) (ColdRef, bool)
	// Owner returns the id of the live record that holds key in the
	// table's one unique index, or "" if none does. load reads a record
	// back, checked, as View's does: a caller that keeps only a short
	// fingerprint of each key confirms a candidate with the key in its
	// record.
	Owner func(key string, load func(id string, ref ColdRef) ([]byte, error)) string
	// Len is the number of records, live or not.
	Len func() int
	// Check, if set, validates a value put, in the writer, before it joins
	// a batch: an error fails the Commit (wrapped in ErrInvalid).
	Check func(id string, v []byte) error
}

// ColdTable is a table whose records its caller keeps (see ColdConfig).
// Create it with RegisterCold.
type ColdTable struct {
	s    *Store
	name string
	cfg  ColdConfig

	// pend is the writer's overlay of the current batch; pendKeys the
	// unique keys its puts claimed. Only the writer touches them.
	pend     map[string]coldPending
	pendKeys map[string]string

	// whole holds the values of records whose position the replay could
	// not tell (a line not in the writer's own layout), until the next
	// compaction or put writes them anew.
	whole map[string][]byte
	moved []ColdPut // during a compaction: positions in the new log

	puts []ColdPut // reused by replayPut
	ids  []string
}

type coldPending struct {
	v   []byte
	at  int // where v lies in the batch's line
	del bool
}

// RegisterCold adds a cold table named name to s, whose records the caller
// keeps through cfg. Like Register, it must be called before Open and
// panics on a missing func, a duplicate or an invalid name.
func RegisterCold(s *Store, name string, cfg ColdConfig) *ColdTable {
	if cfg.Apply == nil || cfg.Opened == nil || cfg.Keep == nil || cfg.Moved == nil ||
		cfg.Ref == nil || cfg.Owner == nil || cfg.Len == nil {
		panic(fmt.Sprintf("storage: cold table %q: every ColdConfig func is required", name))
	}
	if !validID(name) {
		panic(fmt.Sprintf("storage: invalid table name %q", name))
	}
	t := &ColdTable{s: s, name: name, cfg: cfg,
		pend: make(map[string]coldPending), pendKeys: make(map[string]string), whole: make(map[string][]byte)}
	s.register(t)
	return t
}

// View calls fn with the store's read lock held, so that what fn reads of
// the caller's copy is one committed state, and load reads the values at
// the positions it finds there. fn must not call the store.
func (t *ColdTable) View(fn func(load func(id string, ref ColdRef) ([]byte, error))) {
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	fn(t.load)
}

// Load returns the whole value of the record with id, read back from the
// log: an error matching ErrNotFound if there is none, a *CorruptError if
// its bytes changed since they were verified, ErrClosed once the store is
// closed.
func (t *ColdTable) Load(id string) ([]byte, error) {
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	ref, ok := t.cfg.Ref(id)
	if !ok {
		return nil, fmt.Errorf("%w: %s %q", ErrNotFound, t.name, id)
	}
	return t.load(id, ref)
}

// load reads the value of id at ref; the caller holds s.mu or is the writer.
func (t *ColdTable) load(id string, ref ColdRef) ([]byte, error) {
	if !ref.Stripped() {
		if v, ok := t.whole[id]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("%w: %s %q", ErrNotFound, t.name, id)
	}
	return t.s.readValue(ref)
}

// Put returns an op that adds v, the whole JSON value of the record with
// id, or replaces the record; key, if not empty, is the record's key in
// the table's unique index, which no other live record may hold (a
// *UniqueError). A put that takes a record out of the index, or changes
// its key, frees the old key only once durable.
func (t *ColdTable) Put(id string, v []byte, key string) Op {
	return Op{&coldOp{t: t, id: id, v: v, key: key}}
}

// Insert is Put, failing with ErrExists if the record is present.
func (t *ColdTable) Insert(id string, v []byte, key string) Op {
	return Op{&coldOp{t: t, id: id, v: v, key: key, insert: true}}
}

// UpdateIfExists returns an op that replaces the record with id by what
// fn makes of its current value (as of the commits ahead of it), with its
// unique key; fn returning a nil value leaves the record as it is, and so
// does a missing record. fn runs in the writer: it must not call the store.
func (t *ColdTable) UpdateIfExists(id string, fn func(cur []byte) (v []byte, key string, err error)) Op {
	return Op{&coldOp{t: t, id: id, fn: fn}}
}

// Delete returns an op that removes the record with id for good; a missing
// record is left alone.
func (t *ColdTable) Delete(id string) Op {
	return Op{&coldOp{t: t, id: id, del: true}}
}

type coldOp struct {
	t      *ColdTable
	id     string
	v      []byte
	key    string
	insert bool
	del    bool
	fn     func(cur []byte) ([]byte, string, error)
}

func (o *coldOp) prepare(b *batch) error {
	t := o.t
	if t.s != b.s {
		return fmt.Errorf("%w: table %s belongs to another store", ErrInvalid, t.name)
	}
	if !validID(o.id) {
		return fmt.Errorf("%w: %s id %q is empty or not UTF-8", ErrInvalid, t.name, o.id)
	}
	p, pending := t.pend[o.id]
	ref, committed := t.cfg.Ref(o.id)
	exists := (pending && !p.del) || (!pending && committed)
	next := coldPending{v: o.v, del: o.del}
	key := o.key
	switch {
	case o.del && !exists:
		return nil
	case o.fn != nil:
		if !exists {
			return nil
		}
		cur := p.v
		if !pending {
			var err error
			if cur, err = t.load(o.id, ref); err != nil {
				return err
			}
		}
		v, k, err := o.callFn(cur)
		if err != nil || v == nil {
			return err
		}
		next.v, key = v, k
	case o.insert && exists:
		return fmt.Errorf("%w: %s %q", ErrExists, t.name, o.id)
	}
	if next.del {
		b.lb.addDelete(t.name, o.id)
	} else {
		if !json.Valid(next.v) {
			return fmt.Errorf("%w: %s %q: value is not JSON", ErrInvalid, t.name, o.id)
		}
		if t.cfg.Check != nil {
			if err := t.cfg.Check(o.id, next.v); err != nil {
				return fmt.Errorf("%w: %s %q: %w", ErrInvalid, t.name, o.id, err)
			}
		}
		next.v = bytes.Clone(next.v)
		if err := t.claim(b, key, o.id); err != nil {
			return err
		}
		next.at = b.lb.addPut(t.name, o.id, next.v)
	}
	t.pend[o.id] = next
	b.undo = append(b.undo, func() {
		if pending {
			t.pend[o.id] = p
		} else {
			delete(t.pend, o.id)
		}
	})
	return nil
}

// claim takes key for id in the batch, or refuses it if another live
// record holds it or an op ahead of this one claimed it.
func (t *ColdTable) claim(b *batch, key, id string) error {
	if key == "" {
		return nil
	}
	owner, ok := t.pendKeys[key]
	if !ok {
		owner = t.cfg.Owner(key, t.load)
	}
	if owner != "" && owner != id {
		return &UniqueError{Table: t.name, Index: "key", Key: key}
	}
	b.setUnique(t.pendKeys, key, id)
	return nil
}

// callFn runs an update func; a panic in it fails its Commit, not the
// writer.
func (o *coldOp) callFn(cur []byte) (v []byte, key string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: update of %s %q panicked: %v", ErrInvalid, o.t.name, o.id, r)
		}
	}()
	return o.fn(cur)
}

func (t *ColdTable) tableName() string { return t.name }

func (t *ColdTable) count() int { return t.cfg.Len() }

// replayPut hands one put of the log to the caller. raw aliases the
// replay's read buffer; voff < 0: its position is not known, and the
// value is kept whole here.
func (t *ColdTable) replayPut(id, raw []byte, off, voff int64) {
	sid := string(id)
	ref, ok := coldRef(voff, raw)
	if ok {
		delete(t.whole, sid)
	} else {
		t.whole[sid] = bytes.Clone(raw)
	}
	t.puts = append(t.puts[:0], ColdPut{ID: sid, Ref: ref, V: raw})
	if err := t.cfg.Apply(t.puts, nil, true); err != nil && t.s.replayErr == nil {
		t.s.replayErr = &CorruptError{Offset: off, Reason: fmt.Sprintf("%s record %q: %v", t.name, sid, err)}
	}
	t.puts[0] = ColdPut{}
}

func (t *ColdTable) replayDelete(id []byte) {
	sid := string(id)
	delete(t.whole, sid)
	t.ids = append(t.ids[:0], sid)
	t.cfg.Apply(nil, t.ids, true)
}

func (t *ColdTable) finishReplay(_ string, now time.Time) error {
	t.cfg.Opened(now)
	return nil
}

// writeLive copies the records Keep names to the new log, from the old one
// in one sequential read, each checked against its CRC.
func (t *ColdTable) writeLive(now time.Time, emit func(table, id string, v []byte) (int64, error)) ([]string, error) {
	var cold []movedRef
	var errs error
	t.cfg.Keep(now, func(id string, ref ColdRef) {
		if errs != nil {
			return
		}
		if ref.Stripped() {
			cold = append(cold, movedRef{id: id, ref: ref})
			return
		}
		v, ok := t.whole[id]
		if !ok {
			return
		}
		at, err := emit(t.name, id, v)
		if err != nil {
			errs = err
			return
		}
		ref, _ = coldRef(at, v)
		t.moved = append(t.moved, ColdPut{ID: id, Ref: ref})
	})
	if errs != nil {
		return nil, errs
	}
	err := t.s.copyCold(t.name, cold, emit, func(id string, ref ColdRef) {
		t.moved = append(t.moved, ColdPut{ID: id, Ref: ref})
	})
	return nil, err
}

// switchRefs gives the caller the positions in the compacted log (apply),
// or forgets them.
func (t *ColdTable) switchRefs(apply bool) {
	if apply {
		t.cfg.Moved(t.moved)
		clear(t.whole)
	}
	clear(t.moved)
	t.moved = t.moved[:0]
}

// drop is never asked of a cold table: writeLive reports no expired ids,
// and the caller forgets them in Moved.
func (t *ColdTable) drop([]string) {}

// applyPending hands the durable batch to the caller; base is the offset
// of its line in the log.
func (t *ColdTable) applyPending(base int64) {
	if len(t.pend) == 0 {
		return
	}
	var puts []ColdPut
	var dels []string
	for id, p := range t.pend {
		delete(t.whole, id)
		if p.del {
			dels = append(dels, id)
			continue
		}
		ref, ok := coldRef(base+int64(p.at), p.v)
		if !ok {
			t.whole[id] = p.v
		}
		puts = append(puts, ColdPut{ID: id, Ref: ref, V: p.v})
	}
	t.cfg.Apply(puts, dels, false)
	t.clearPending()
}

func (t *ColdTable) clearPending() {
	clear(t.pend)
	clear(t.pendKeys)
}
