package sync

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// The values a record's integration keeps between syncs (TaskResult.State,
// read back through Env.State): a Dropbox listing cursor, say. They live
// in the main store's "syncstate" table, one row per record, sealed like
// task payloads since a cursor is the provider's data. A row changes in
// the same log line as the batch whose task set it, so a crash never
// keeps a cursor past items that were not stored; it goes with the
// record's disconnect.

// stateRow is one record's kept values.
type stateRow struct {
	ID          string    `json:"id"` // the record id
	UserID      string    `json:"userId"`
	Integration string    `json:"integration"`
	Value       string    `json:"value"` // sealed JSON object of strings
	UpdatedAt   time.Time `json:"updatedAt"`
}

func (r *stateRow) aad() vault.AAD {
	return vault.AAD{Purpose: vault.SyncState, UserID: r.UserID, Domain: r.Integration, ID: r.ID}
}

func registerState(st *storage.Store) *storage.Table[stateRow] {
	return storage.Register(st, "syncstate", storage.TableConfig[stateRow]{
		ID: func(r *stateRow) string { return r.ID },
	})
}

// loadState opens the values the record keeps; none is an empty map.
func (s *Syncer) loadState(rec *records.Record) (map[string]string, error) {
	row, ok := s.state.Get(rec.ID)
	if !ok || row.Value == "" {
		return map[string]string{}, nil
	}
	b, err := s.records.Vault().Open(row.aad(), row.Value)
	if err != nil {
		return nil, fmt.Errorf("open sync state: %w", err)
	}
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode sync state: %w", err)
	}
	return m, nil
}

// stateOp returns the op that stores m as the record's kept values, or
// deletes its row when m is empty.
func (s *Syncer) stateOp(rec *records.Record, m map[string]string, now time.Time) (storage.Op, error) {
	if len(m) == 0 {
		return s.state.DeleteIfExists(rec.ID, nil), nil
	}
	row := stateRow{ID: rec.ID, UserID: rec.UserID, Integration: rec.Integration, UpdatedAt: now.UTC()}
	b, err := json.Marshal(m)
	if err != nil {
		return storage.Op{}, err
	}
	if row.Value, err = s.records.Vault().Seal(row.aad(), b); err != nil {
		return storage.Op{}, fmt.Errorf("seal sync state: %w", err)
	}
	return s.state.Put(row), nil
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

// stateOps returns the op that commits the batch's State, if it has any,
// and the record's kept values once it is committed.
func (r *run) stateOps(now time.Time) ([]storage.Op, map[string]string, error) {
	r.mu.Lock()
	pending := r.b.state
	var next map[string]string
	if len(pending) > 0 {
		next = maps.Clone(r.keptLocked())
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
	op, err := r.s.stateOp(&r.rec, next, now)
	if err != nil {
		return nil, nil, err
	}
	return []storage.Op{op}, next, nil
}

// rotateState re-seals under the current key the kept values sealed
// under a previous one.
func (s *Syncer) rotateState() (int, error) {
	v := s.records.Vault()
	var rows []stateRow
	s.state.Scan(func(r stateRow) bool {
		if r.Value != "" && v.NeedsRotation(r.Value) {
			rows = append(rows, r)
		}
		return true
	})
	var ops []storage.Op
	for _, r := range rows {
		sealed, err := v.Rotate(r.aad(), r.Value)
		if err != nil {
			return 0, fmt.Errorf("sync state of record %s: %w", r.ID, err)
		}
		old := r.Value
		ops = append(ops, s.state.Update(r.ID, func(cur *stateRow) error {
			if cur.Value == old {
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
