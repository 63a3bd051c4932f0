package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Loading a table at Open happens in two phases. While the log is read,
// only the last logged JSON of each record is kept (staged), so records
// that a later op superseded or deleted are never decoded. Then the
// survivors are decoded in parallel, expired ones dropped, and the indexes
// built once, so intermediate states of the log never matter.

// staged is the last logged JSON of a record, the offset of its line and
// of the JSON itself (-1: not known, and the record stays whole in memory).
type staged struct {
	raw  []byte
	off  int64
	voff int64
}

// replayPut stages a record. raw aliases the replay's read buffer: it is
// copied, into the staged copy's own bytes when they are large enough.
func (t *Table[T]) replayPut(id, raw []byte, off, voff int64) {
	if e := t.stage[string(id)]; e != nil {
		e.raw, e.off, e.voff = append(e.raw[:0], raw...), off, voff
		return
	}
	t.stage[string(id)] = &staged{raw: bytes.Clone(raw), off: off, voff: voff}
}

func (t *Table[T]) replayDelete(id []byte) { delete(t.stage, string(id)) }

// finishReplay decodes the staged records, drops the expired ones and
// builds the indexes. A record that does not decode into T, or whose id is
// not the one it was logged under, is a *CorruptError at its line.
func (t *Table[T]) finishReplay(path string, now time.Time) error {
	ids := make([]string, 0, len(t.stage))
	ents := make([]*staged, 0, len(t.stage))
	for id, e := range t.stage {
		ids = append(ids, id)
		ents = append(ents, e)
	}
	t.stage = nil
	vals := make([]T, len(ents))
	if err := decodeAll(ents, vals); err != nil {
		return &CorruptError{File: path, Offset: err.off, Reason: fmt.Sprintf("decode %s record: %v", t.name, err.err)}
	}

	keep := make([]int, 0, len(vals))
	for i := range vals {
		v := &vals[i]
		if key := t.cfg.ID(v); key != ids[i] {
			return &CorruptError{File: path, Offset: ents[i].off,
				Reason: fmt.Sprintf("%s record logged as %q has id %q", t.name, ids[i], key)}
		}
		if t.cfg.Expired != nil && t.cfg.Expired(v, now) {
			continue
		}
		keep = append(keep, i)
		if t.cfg.Cold != nil {
			*t.cfg.Cold.Ref(v) = ColdRef{}
			if ref, ok := coldRef(ents[i].voff, ents[i].raw); ok {
				t.strip(v, ref)
			}
		}
	}
	if t.cfg.Pack != nil {
		// The kept records first, in place, so that Pack sees those only.
		for j, i := range keep {
			vals[j], keep[j] = vals[i], j
		}
		clear(vals[len(keep):])
		t.cfg.Pack(vals[:len(keep)])
	}

	return t.buildIndexes(vals, keep)
}

// buildIndexes builds the records map and every index of the table from
// the replayed records vals[i] for i in keep. A unique key two records
// hold is an error.
func (t *Table[T]) buildIndexes(vals []T, keep []int) error {
	// The records map and each index are separate maps: build them side
	// by side. Keys are the values' own id strings, so they share memory.
	errs := make([]error, len(t.uniq))
	var wg sync.WaitGroup
	wg.Go(func() {
		t.recs = make(map[string]T, len(keep))
		for _, i := range keep {
			t.recs[t.cfg.ID(&vals[i])] = vals[i]
		}
	})
	for n, u := range t.uniq {
		wg.Go(func() {
			u.m = make(map[string]string, len(keep))
			for _, i := range keep {
				v := &vals[i]
				k := t.uniqueKey(u, v)
				if k == "" {
					continue
				}
				id := t.cfg.ID(v)
				if other, taken := u.m[k]; taken {
					errs[n] = fmt.Errorf("records %q and %q: %w", other, id, &UniqueError{Table: t.name, Index: u.name, Key: k})
					return
				}
				u.m[k] = id
			}
		})
	}
	for _, m := range t.mult {
		wg.Go(func() {
			// Counted first, so that each key's slice is allocated once at
			// its size: appending would leave a third of it unused.
			n := make(map[string]int)
			for _, i := range keep {
				if k := m.key(&vals[i]); k != "" {
					n[k]++
				}
			}
			for _, i := range keep {
				v := &vals[i]
				if k := m.key(v); k != "" {
					ids := m.m[k]
					if ids == nil {
						ids = make([]string, 0, n[k])
					}
					m.m[k] = append(ids, t.cfg.ID(v))
				}
			}
		})
	}
	for _, o := range t.ords {
		wg.Go(func() { t.orderedBuild(o, vals, keep) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// decodeError is a record that did not decode, before its file is known.
type decodeError struct {
	off int64
	err error
}

// decodeAll decodes ents[i].raw into vals[i] on every CPU: JSON decoding is
// most of the cost of Open. Of several bad records it reports the first in
// the file, so the error does not depend on scheduling.
func decodeAll[T any](ents []*staged, vals []T) *decodeError {
	workers := min(runtime.GOMAXPROCS(0), (len(ents)+1023)/1024)
	if workers <= 1 {
		return decodeRange(ents, vals)
	}
	errs := make([]*decodeError, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(ents)/workers, (w+1)*len(ents)/workers
		wg.Go(func() { errs[w] = decodeRange(ents[lo:hi], vals[lo:hi]) })
	}
	wg.Wait()
	var first *decodeError
	for _, e := range errs {
		if e != nil && (first == nil || e.off < first.off) {
			first = e
		}
	}
	return first
}

func decodeRange[T any](ents []*staged, vals []T) *decodeError {
	var first *decodeError
	for i, e := range ents {
		if err := json.Unmarshal(e.raw, &vals[i]); err != nil && (first == nil || e.off < first.off) {
			first = &decodeError{off: e.off, err: err}
		}
	}
	return first
}
