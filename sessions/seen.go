package sessions

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"searchsvc/storage"
)

// A shutdown writes the last-access times that are newer than the log's
// in "seen" records: each holds, packed, a 12-byte prefix of a record's
// key and a time in Unix seconds (16 bytes a session, where the whole
// sealed record is about 500), up to seenPerRecord of them. They replace
// the seen records of the shutdown before in the same Commit, and are
// taken back into memory at the next start (LoadSeen), so that a restart
// keeps the idle clocks at the cost of a few bytes a session. The
// periodic flush still writes whole records, at most once per session per
// TouchInterval.
const (
	seenTable     = "sessions_seen"
	seenPrefix    = 12 // bytes of a key's HMAC: 96 bits, under a secret key
	seenEntry     = seenPrefix + 4
	seenPerRecord = 4096
)

// seenRecord is one record of the seen table. Times holds seenEntry bytes
// per session: the prefix of its key, then its last access in Unix
// seconds (big endian).
type seenRecord struct {
	ID    string `json:"id"`
	Times []byte `json:"times"`
}

// keyPrefix is the seen table's prefix of a record key (base64url of the
// HMAC: its first 16 characters are the first 12 bytes).
func keyPrefix(key string) ([seenPrefix]byte, bool) {
	var p [seenPrefix]byte
	if len(key) < 16 {
		return p, false
	}
	n, err := base64.RawURLEncoding.Decode(p[:], []byte(key[:16]))
	return p, err == nil && n == seenPrefix
}

// LoadSeen takes the last-access times the last shutdown wrote back into
// memory, so the idle clocks go on from where they were; call it once
// after the store opens. Times of sessions gone since are ignored. It
// returns how many sessions it updated.
func (m *Manager) LoadSeen() int {
	times := make(map[[seenPrefix]byte]int64)
	m.seen.Scan(func(r seenRecord) bool {
		for b := r.Times; len(b) >= seenEntry; b = b[seenEntry:] {
			p := [seenPrefix]byte(b[:seenPrefix])
			t := int64(binary.BigEndian.Uint32(b[seenPrefix:seenEntry])) * int64(time.Second)
			times[p] = max(times[p], t)
		}
		return true
	})
	if len(times) == 0 {
		return 0
	}
	var keys []string
	var at []int64
	m.tab.Scan(func(r record) bool {
		if p, ok := keyPrefix(r.ID); ok {
			if t, ok := times[p]; ok && t > nanosOfSecs(r.Accessed) {
				keys, at = append(keys, r.ID), append(at, t)
			}
		}
		return true
	})
	for i, k := range keys {
		e := m.entry(k)
		e.touch(time.Unix(0, at[i]))
		e.logged.Store(at[i])
	}
	return len(keys)
}

// writeSeen writes, as seen records, the last access (to the second) of
// every session whose in-memory time is newer than its record's, replacing
// the seen records there were, and notes in each entry what the log now
// says. It writes nothing when no time differs from what the log says. A
// session deleted meanwhile is in them for nothing: LoadSeen ignores it.
func (m *Manager) writeSeen(snap []idEntry) error {
	type written struct {
		e  *entry
		ns int64
	}
	var buf []byte
	var done []written
	changed := false
	var gone []string
	for _, r := range snap {
		s, ok := m.tab.Get(r.id)
		if !ok {
			gone = append(gone, r.id)
			continue
		}
		ns := r.e.last.Load() / int64(time.Second) * int64(time.Second)
		if ns <= nanosOfSecs(s.Accessed) {
			continue // the record says as much
		}
		p, ok := keyPrefix(r.id)
		if !ok {
			continue
		}
		// Those only the last seen records hold go in again, as the new
		// records replace them.
		changed = changed || ns > r.e.logged.Load()
		buf = append(buf, p[:]...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(ns/int64(time.Second)))
		done = append(done, written{r.e, ns})
	}
	if len(gone) > 0 {
		m.forget(gone...)
	}
	if !changed {
		return nil
	}
	var ops []storage.Op
	for i := 0; len(buf) > 0; i++ {
		k := min(len(buf), seenPerRecord*seenEntry)
		ops = append(ops, m.seen.Put(seenRecord{ID: strconv.Itoa(i), Times: buf[:k:k]}))
		buf = buf[k:]
	}
	puts := len(ops)
	m.seen.Scan(func(r seenRecord) bool {
		if i, err := strconv.Atoi(r.ID); err != nil || i >= puts {
			ops = append(ops, m.seen.DeleteIfExists(r.ID, nil))
		}
		return true
	})
	if err := m.store.Commit(ops...); err != nil {
		return fmt.Errorf("write last access times: %w", err)
	}
	for _, w := range done {
		w.e.logged.Store(w.ns)
	}
	m.log.Debug("wrote last access times", "sessions", len(done))
	return nil
}
