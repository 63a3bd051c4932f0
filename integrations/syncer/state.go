package syncer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// The values a record's integration keeps between syncs (TaskResult.State,
// read back through Env.State): a Dropbox listing cursor, say. They live
// in the main store's "syncstate" table, one row per record and key,
// sealed like task payloads since a cursor is the provider's data: a task
// that changes one key writes that key's row only, so an integration may
// keep a listing's progress in one key per page and pay for the page, not
// for all the pages before it. A row changes in the same log line as the
// batch whose task set it, so a crash never keeps a cursor past items
// that were not stored; the rows go with the record's disconnect.

// stateRow is one kept value of a record.
type stateRow struct {
	ID          string    `json:"id"` // the record id, then "/" and a hash of the key
	Record      string    `json:"record,omitempty"`
	UserID      string    `json:"userId"`
	Integration string    `json:"integration"`
	Value       []byte    `json:"value"` // sealed JSON: [key, value]
	UpdatedAt   time.Time `json:"updatedAt"`
}

const stateIndexRecord = "record"

func (r *stateRow) aad() []byte {
	return vault.AAD(vault.SyncState, r.UserID, r.Integration, r.ID)
}

func registerState(st *storage.Store) *storage.Table[stateRow] {
	return storage.Register(st, "syncstate", storage.TableConfig[stateRow]{
		ID:    func(r *stateRow) string { return r.ID },
		Index: map[string]func(*stateRow) string{stateIndexRecord: func(r *stateRow) string { return r.Record }},
	})
}

// stateRowID is the id of the row of the record's key: the key is hashed,
// as it may name a provider's object (a channel).
func stateRowID(recordID, key string) string {
	sum := sha256.Sum256([]byte(key))
	return recordID + "/" + hex.EncodeToString(sum[:12])
}

// loadState opens the values the record keeps; none is an empty map.
func (s *Syncer) loadState(rec *records.Record) (map[string]string, error) {
	m := map[string]string{}
	for _, row := range s.state.Find(stateIndexRecord, rec.ID) {
		if len(row.Value) == 0 {
			continue
		}
		b, err := s.vault.Open(row.aad(), row.Value)
		if err != nil {
			return nil, fmt.Errorf("open sync state: %w", err)
		}
		var kv [2]string
		if err := json.Unmarshal(b, &kv); err != nil {
			return nil, fmt.Errorf("decode sync state: %w", err)
		}
		m[kv[0]] = kv[1]
	}
	return m, nil
}

// stateOps returns the ops that store the changed keys of the record's
// kept values, read from all (an empty value deletes its row).
func (s *Syncer) stateOps(rec *records.Record, changed map[string]string, all map[string]string, now time.Time) ([]storage.Op, error) {
	var ops []storage.Op
	for _, k := range slices.Sorted(maps.Keys(changed)) {
		id := stateRowID(rec.ID, k)
		v := all[k]
		if v == "" {
			ops = append(ops, s.state.DeleteIfExists(id, nil))
			continue
		}
		row := stateRow{ID: id, Record: rec.ID, UserID: rec.UserID, Integration: rec.Integration, UpdatedAt: now.UTC()}
		b, err := json.Marshal([2]string{k, v})
		if err != nil {
			return nil, err
		}
		row.Value = s.vault.Seal(row.aad(), b)
		ops = append(ops, s.state.Put(row))
	}
	return ops, nil
}

// KeptState returns the values the record keeps (TaskResult.State) as
// committed, for the record's view (Definition.Details).
func (s *Syncer) KeptState(rec records.Record) (map[string]string, error) {
	return s.loadState(&rec)
}

// deleteStateOps returns the ops that delete every kept value of the
// record.
func (s *Syncer) deleteStateOps(recordID string) []storage.Op {
	var ops []storage.Op
	for _, row := range s.state.Find(stateIndexRecord, recordID) {
		ops = append(ops, s.state.DeleteIfExists(row.ID, nil))
	}
	return ops
}

// stateValue is Env.State: the batch's value for key, else the committed
// one. A state that cannot be opened reads as empty, so the integration
// starts over (a full listing that skips what is stored) rather than
// failing every sync.
func (r *run) stateValue(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.b.state[key]; ok {
		return v
	}
	return r.keptLocked()[key]
}

// keptLocked returns the record's committed values, read once per run;
// r.mu is held.
func (r *run) keptLocked() map[string]string {
	if r.kept == nil {
		m, err := r.s.loadState(&r.rec)
		if err != nil {
			r.log.Error("read sync state; starting over", "err", err)
			m = map[string]string{}
		}
		r.kept = m
	}
	return r.kept
}

// stageState adds a task's State to the batch.
func (r *run) stageState(m map[string]string) {
	if len(m) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.b.state == nil {
		r.b.state = make(map[string]string, len(m))
	}
	maps.Copy(r.b.state, m)
}

// stateOps returns the ops that commit the batch's State, if it has any,
// and the record's kept values once they are committed.
func (r *run) stateOps(now time.Time) ([]storage.Op, map[string]string, error) {
	r.mu.Lock()
	var pending, next map[string]string
	if len(r.b.state) > 0 {
		kept := r.keptLocked()
		// A value set again unchanged is not written again: an idle poll
		// that reports the same cursor stores nothing (idle.go).
		for k, v := range r.b.state {
			if cur, ok := kept[k]; v != cur || (v == "" && ok) {
				if pending == nil {
					pending = make(map[string]string)
				}
				pending[k] = v
			}
		}
		if len(pending) > 0 {
			next = maps.Clone(kept)
		}
	}
	r.mu.Unlock()
	if len(pending) == 0 {
		return nil, nil, nil
	}
	for k, v := range pending {
		if v == "" {
			delete(next, k)
		} else {
			next[k] = v
		}
	}
	ops, err := r.s.stateOps(&r.rec, pending, next, now)
	if err != nil {
		return nil, nil, err
	}
	return ops, next, nil
}

// rotateState re-seals under the current key the kept values sealed
// under a previous one.
func (s *Tasks) rotateState() (int, error) {
	v := s.vault
	var rows []stateRow
	s.state.Scan(func(r stateRow) bool {
		if v.Stale(r.Value) {
			rows = append(rows, r)
		}
		return true
	})
	var ops []storage.Op
	for _, r := range rows {
		sealed, _, err := v.Reseal(r.aad(), r.Value)
		if err != nil {
			return 0, fmt.Errorf("sync state of record %s: %w", r.ID, err)
		}
		old := r.Value
		ops = append(ops, s.state.Update(r.ID, func(cur *stateRow) error {
			if bytes.Equal(cur.Value, old) {
				cur.Value = sealed
			}
			return nil
		}))
	}
	if len(ops) == 0 {
		return 0, nil
	}
	return len(ops), s.st.Commit(ops...)
}

// staged reports whether the batch stages an item with one of the
// provider ids.
func (r *run) staged(providerIDs []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, pid := range providerIDs {
		if r.b.seen[pid] {
			return true
		}
	}
	return false
}
