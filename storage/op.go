package storage

import (
	"encoding/json"
	"fmt"
)

// Op is one change to one record, made by a Table's Insert, Put, Update or
// Delete and carried out by Store.Commit. The zero Op is invalid.
type Op struct {
	p preparer
}

// preparer validates an op against the committed state plus the batch so
// far, adds it to the batch's log line and overlay, and records how to undo
// that if a later op of the same Commit fails. Only the writer calls it.
type preparer interface {
	prepare(b *batch) error
}

type opKind uint8

const (
	opInsert opKind = iota
	opPut
	opUpdate
	opDelete
)

type op[T any] struct {
	t    *Table[T]
	kind opKind
	id   string
	v    T
	fn   func(*T) error
	// ifExists makes an update or delete of a missing record a no-op
	// instead of ErrNotFound; found, when set, tells the caller whether
	// the record was there.
	ifExists bool
	found    *bool
}

// Insert returns an op that adds v. The Commit fails with ErrExists if a
// record with v's id is present.
func (t *Table[T]) Insert(v T) Op {
	return Op{&op[T]{t: t, kind: opInsert, id: t.cfg.ID(&v), v: v}}
}

// Put returns an op that adds v or replaces the record with v's id.
func (t *Table[T]) Put(v T) Op {
	return Op{&op[T]{t: t, kind: opPut, id: t.cfg.ID(&v), v: v}}
}

// Update returns an op that replaces the record with id by fn's change to a
// copy of it. fn runs in the store's writer goroutine, so it sees every
// earlier change; it must not call the store, and must replace rather than
// modify slices and maps it finds in the record (they are shared with the
// stored value). fn must keep the id. An error from fn fails the whole
// Commit and is returned by it unchanged. The Commit fails with ErrNotFound
// if there is no such record.
func (t *Table[T]) Update(id string, fn func(*T) error) Op {
	return Op{&op[T]{t: t, kind: opUpdate, id: id, fn: fn}}
}

// UpdateIfExists is Update, except that a missing record (never there,
// or deleted by a commit ahead of this one) is left alone instead of
// failing the Commit. For changes that only matter while the record lives,
// such as a last-access time: a Commit of many of them cannot be failed by
// a deletion racing with it.
func (t *Table[T]) UpdateIfExists(id string, fn func(*T) error) Op {
	return Op{&op[T]{t: t, kind: opUpdate, id: id, fn: fn, ifExists: true}}
}

// DeleteIfExists is Delete, except that a missing record is left alone
// instead of failing the Commit: for deleting a set of records of which
// others may delete some meanwhile. If found is not nil, *found is set to
// whether this op deleted the record; read it only after Commit returned
// nil.
func (t *Table[T]) DeleteIfExists(id string, found *bool) Op {
	return Op{&op[T]{t: t, kind: opDelete, id: id, ifExists: true, found: found}}
}

// Delete returns an op that removes the record with id for good (for a soft
// delete, Update the record so that TableConfig.Live reports false). The
// Commit fails with ErrNotFound if there is no such record.
func (t *Table[T]) Delete(id string) Op {
	return Op{&op[T]{t: t, kind: opDelete, id: id}}
}

// current is the record's state as of the batch so far.
func (t *Table[T]) current(id string) (T, bool) {
	if p, ok := t.pend[id]; ok {
		return p.v, !p.del
	}
	v, ok := t.recs[id]
	return v, ok
}

func (o *op[T]) prepare(b *batch) error {
	t := o.t
	if t.s != b.s {
		return fmt.Errorf("%w: table %s belongs to another store", ErrInvalid, t.name)
	}
	if !validID(o.id) {
		return fmt.Errorf("%w: %s id %q is empty or not UTF-8", ErrInvalid, t.name, o.id)
	}
	cur, exists := t.current(o.id)
	next := pendingRec[T]{}
	if (o.kind == opInsert || o.kind == opPut) && t.stripped(&o.v) {
		return fmt.Errorf("%w: %s %q is a stripped record of a cold table, not a whole one", ErrInvalid, t.name, o.id)
	}
	switch o.kind {
	case opInsert:
		if exists {
			return fmt.Errorf("%w: %s %q", ErrExists, t.name, o.id)
		}
		next.v = o.v
	case opPut:
		next.v = o.v
	case opUpdate:
		if !exists && o.ifExists {
			return nil
		}
		if !exists {
			return fmt.Errorf("%w: %s %q", ErrNotFound, t.name, o.id)
		}
		whole, err := t.whole(o.id, cur)
		if err != nil {
			return err
		}
		next.v = whole
		if err := o.callFn(&next.v); err != nil {
			return err
		}
	case opDelete:
		if !exists && o.ifExists {
			return nil
		}
		if !exists {
			return fmt.Errorf("%w: %s %q", ErrNotFound, t.name, o.id)
		}
		next.del = true
		if o.found != nil {
			*o.found = true
			b.undo = append(b.undo, func() { *o.found = false })
		}
	}
	if next.del {
		b.lb.addDelete(t.name, o.id)
	} else if err := o.addPut(b, &next); err != nil {
		return err
	}
	if err := o.claimUnique(b, &cur, exists, &next); err != nil {
		return err
	}
	prev, had := t.pend[o.id]
	t.pend[o.id] = next
	b.undo = append(b.undo, func() {
		if had {
			t.pend[o.id] = prev
		} else {
			delete(t.pend, o.id)
		}
	})
	return nil
}

// addPut adds the line that puts next.v to b, and makes next.v what a
// replay of that line would produce.
func (o *op[T]) addPut(b *batch, next *pendingRec[T]) error {
	t := o.t
	raw, err := json.Marshal(&next.v)
	if err != nil {
		return fmt.Errorf("%w: encode %s %q: %w", ErrInvalid, t.name, o.id, err)
	}
	// Keep what a replay would produce, not the caller's value: the same
	// bytes decoded, with no slice or map shared with the caller.
	var stored T
	if err := json.Unmarshal(raw, &stored); err != nil {
		return fmt.Errorf("%w: %s %q does not decode from its own JSON: %w", ErrInvalid, t.name, o.id, err)
	}
	if got := t.cfg.ID(&stored); got != o.id {
		return fmt.Errorf("%w: %s id %q reads back as %q", ErrInvalid, t.name, o.id, got)
	}
	at := b.lb.addPut(t.name, o.id, raw)
	if t.cfg.Cold != nil {
		*t.cfg.Cold.Ref(&stored) = ColdRef{}
		next.ref, _ = coldRef(int64(at), raw)
	}
	next.v = stored
	return nil
}

// claimUnique moves the record's keys in the table's unique indexes from
// cur (when it exists) to next, in b's pending changes, and refuses a key
// another record holds.
func (o *op[T]) claimUnique(b *batch, cur *T, exists bool, next *pendingRec[T]) error {
	t := o.t
	for _, u := range t.uniq {
		oldKey, newKey := "", ""
		if exists {
			oldKey = t.uniqueKey(u, cur)
		}
		if !next.del {
			newKey = t.uniqueKey(u, &next.v)
		}
		if oldKey == newKey {
			continue
		}
		if newKey != "" {
			owner, ok := u.pend[newKey]
			if !ok {
				owner = u.m[newKey]
			}
			if owner != "" && owner != o.id {
				return &UniqueError{Table: t.name, Index: u.name, Key: newKey}
			}
			b.setUnique(u.pend, newKey, o.id)
		}
		if oldKey != "" {
			b.setUnique(u.pend, oldKey, "")
		}
	}
	return nil
}

// callFn runs an Update func. A panic in it fails its Commit instead of
// taking down the writer goroutine, and with it the process.
func (o *op[T]) callFn(v *T) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: update of %s %q panicked: %v", ErrInvalid, o.t.name, o.id, r)
		}
	}()
	return o.fn(v)
}

// setUnique sets an entry of a unique index overlay, recording its undo.
func (b *batch) setUnique(pend map[string]string, key, id string) {
	prev, had := pend[key]
	pend[key] = id
	b.undo = append(b.undo, func() {
		if had {
			pend[key] = prev
		} else {
			delete(pend, key)
		}
	})
}
