package sessions

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"searchsvc/storage"
)

// entry is the in-memory state of one session. last is exact; the record's
// LastAccessedAt lags it until the next flush. Only last and renewing are
// touched on the request path, atomically, so validations of one session
// never wait for each other.
type entry struct {
	last     atomic.Int64 // Unix ns of the latest access seen since start; 0: none
	renewing atomic.Bool  // a sliding renewal of this session is being written
	// logged is the last access (Unix ns) the seen records hold for this
	// session, when newer than its record's; 0: none.
	logged atomic.Int64
	// opened is the record's sealed part once opened: it never changes for
	// a session, so a request opens it once, not every time.
	opened atomic.Pointer[secretFields]

	mu        sync.Mutex
	warned    netip.Prefix // the foreign network last logged as suspicious
	warnedAny bool         // whether one was
}

// touch moves last forward to t. It never moves it back, so a request that
// read the clock earlier but arrives later cannot undo a newer touch.
func (e *entry) touch(t time.Time) {
	n := t.UnixNano()
	for {
		old := e.last.Load()
		if old >= n || e.last.CompareAndSwap(old, n) {
			return
		}
	}
}

// lookup returns the entry of id, or nil.
func (m *Manager) lookup(id string) *entry {
	m.mu.RLock()
	e := m.entries[id]
	m.mu.RUnlock()
	return e
}

// entry returns the entry of id, making it if needed. id must be the
// record's own id, not a caller's string, which may be a slice of a large
// header that the map would then keep alive.
func (m *Manager) entry(id string) *entry {
	if e := m.lookup(id); e != nil {
		return e
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[id]
	if e == nil {
		e = new(entry)
		m.entries[id] = e
	}
	return e
}

// forget drops the in-memory state of deleted sessions. A validation racing
// with the delete may make the entry again; the next flush finds its record
// gone and drops it for good.
func (m *Manager) forget(ids ...string) {
	m.mu.Lock()
	for _, id := range ids {
		if e := m.entries[id]; e != nil {
			if f := e.opened.Load(); f != nil {
				delete(m.keyOf, f.ID)
			}
		}
		delete(m.entries, id)
	}
	m.mu.Unlock()
}

// cachedKey returns the record key of session id if Validate met it.
func (m *Manager) cachedKey(id string) (string, bool) {
	m.mu.RLock()
	k, ok := m.keyOf[id]
	m.mu.RUnlock()
	return k, ok
}

// remember caches key as the record key of f.ID, for the entry of key.
// f.ID is the opened record's own string, never a slice of a header.
func (m *Manager) remember(key string, f *secretFields) {
	m.mu.Lock()
	if _, live := m.entries[key]; live {
		m.keyOf[f.ID] = key
	}
	m.mu.Unlock()
}

// lastAccess returns the later of the stored lastAccessedAt of the
// record with key and the in-memory one.
func (m *Manager) lastAccess(key string, stored time.Time) time.Time {
	if e := m.lookup(key); e != nil {
		if n := e.last.Load(); n > stored.UnixNano() {
			return time.Unix(0, n).UTC()
		}
	}
	return stored
}

// Touch sets the in-memory lastAccessedAt of the session with id to now. It
// writes nothing: Flush does. It returns ErrNotFound if there is no such
// session.
func (m *Manager) Touch(id string) error {
	r, ok := m.tab.Get(m.key(id))
	if !ok {
		return ErrNotFound
	}
	m.entry(r.ID).touch(m.cfg.Now())
	return nil
}

// Flush writes every in-memory lastAccessedAt that is newer than the
// stored one, to the second, packed in seen records (16 bytes a session,
// see LoadSeen) in one Commit, and nothing if none is. main calls it at
// shutdown, and Run on exit.
func (m *Manager) Flush() error {
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	snap := m.snapshot()
	defer m.release(snap)
	return m.writeSeen(snap)
}

// snapshot copies the entries, so that the store's lock is never taken
// under m.mu (see Manager.mu). The caller holds flushMu, and gives the
// snapshot back with release.
func (m *Manager) snapshot() []idEntry {
	m.mu.RLock()
	snap := m.scratch[:0]
	for id, e := range m.entries {
		snap = append(snap, idEntry{id, e})
	}
	m.mu.RUnlock()
	return snap
}

func (m *Manager) release(snap []idEntry) {
	clear(snap)
	m.scratch = snap[:0]
}

// idEntry is one row of flush's snapshot of the entries.
type idEntry struct {
	id string
	e  *entry
}

// flushUpdate is one lastAccessedAt to write.
type flushUpdate struct {
	id string
	at int64 // Unix ns
}

// flush writes the in-memory lastAccessedAt of every session whose value is
// at least lag ahead of the stored one, and drops the entries of sessions
// that are gone. Writes go through UpdateIfExists, which leaves a missing
// record alone, so a flush racing with a delete never brings a session
// back and is never failed by it.
func (m *Manager) flush(lag time.Duration) error {
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	snap := m.snapshot()
	defer m.release(snap)

	var todo []flushUpdate
	var gone []string
	for _, r := range snap {
		s, ok := m.tab.Get(r.id)
		if !ok {
			gone = append(gone, r.id)
			continue
		}
		at := r.e.last.Load()
		if ahead := at - max(nanosOfSecs(s.Accessed), r.e.logged.Load()); ahead > 0 && ahead >= int64(lag) {
			todo = append(todo, flushUpdate{r.id, at})
		}
	}
	if len(gone) > 0 {
		m.forget(gone...)
	}
	for len(todo) > 0 {
		n := min(len(todo), maxOps)
		if err := m.writeAccess(todo[:n]); err != nil {
			return err
		}
		todo = todo[n:]
	}
	return nil
}

// writeAccess writes lastAccessedAt values in one Commit. A session
// deleted meanwhile is left alone (UpdateIfExists), so no number of
// deletions racing with it can fail the write. A session whose record
// does not read back from the log (damaged since it was written) would
// fail the Commit at every flush, and with it every other session's
// write: it is ended instead, in the same Commit, and logged.
func (m *Manager) writeAccess(todo []flushUpdate) error {
	err := m.store.Commit(m.accessOps(todo, nil)...)
	var damage *storage.CorruptError
	if errors.As(err, &damage) {
		damaged := make(map[string]bool)
		for _, u := range todo {
			if _, lerr := m.tab.Load(u.id); errors.As(lerr, &damage) {
				damaged[u.id] = true
				r, _ := m.tab.Get(u.id)
				m.log.Error("session record damaged in the log: the session is ended", "user_id", r.UserID, "err", lerr)
			}
		}
		if len(damaged) > 0 {
			if err = m.store.Commit(m.accessOps(todo, damaged)...); err == nil {
				m.forget(slices.Collect(maps.Keys(damaged))...)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("write last access times: %w", err)
	}
	m.log.Debug("wrote last access times", "sessions", len(todo)) // those deleted meanwhile included
	return nil
}

// accessOps are the ops of writeAccess: an update of each session in
// todo, or its deletion if it is damaged.
func (m *Manager) accessOps(todo []flushUpdate, damaged map[string]bool) []storage.Op {
	ops := make([]storage.Op, 0, len(todo))
	for _, u := range todo {
		if damaged[u.id] {
			ops = append(ops, m.tab.DeleteIfExists(u.id, nil))
			continue
		}
		ops = append(ops, m.tab.UpdateIfExists(u.id, func(s *record) error {
			if n := secsOfNanos(u.at); n > s.Accessed {
				s.Accessed = n
			}
			return nil
		}))
	}
	return ops
}
