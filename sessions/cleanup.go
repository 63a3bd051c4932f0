package sessions

import (
	"context"
	"fmt"
	"time"

	"searchsvc/storage"
)

// Cleanup deletes every session that is expired or idle beyond the idle
// timeout, in one Commit (one per 4096 sessions), and returns how many it
// deleted.
func (m *Manager) Cleanup() (int, error) {
	now := m.cfg.Now()
	// The stored lastAccessedAt is never later than the in-memory one, so a
	// session active by its record is active: only the others need a second
	// look, made outside Scan, which holds the store's lock.
	var maybe []record
	m.tab.Scan(func(r record) bool {
		if !m.active(fromSecs(r.Expires), fromSecs(r.Accessed), now) {
			maybe = append(maybe, r)
		}
		return true
	})
	var ids []string
	for _, r := range maybe {
		if !m.active(fromSecs(r.Expires), m.lastAccess(r.ID, fromSecs(r.Accessed)), now) {
			ids = append(ids, r.ID)
		}
	}
	deleted := 0
	for len(ids) > 0 {
		n := min(len(ids), maxOps)
		d, err := m.deleteAll(ids[:n])
		deleted += d
		if err != nil {
			return deleted, fmt.Errorf("clean up sessions: %w", err)
		}
		ids = ids[n:]
	}
	return deleted, nil
}

// deleteAll deletes the sessions with record ids (keys) in one Commit and returns how
// many it deleted; those deleted meanwhile by others are left alone.
func (m *Manager) deleteAll(ids []string) (int, error) {
	ops := make([]storage.Op, len(ids))
	found := make([]bool, len(ids))
	for i, id := range ids {
		ops[i] = m.tab.DeleteIfExists(id, &found[i])
	}
	if err := m.store.Commit(ops...); err != nil {
		return 0, err
	}
	m.forget(ids...)
	n := 0
	for _, f := range found {
		if f {
			n++
		}
	}
	return n, nil
}

// Cleanup time of day, local time: a low-traffic hour.
const (
	cleanupHour   = 3
	cleanupMinute = 30
)

// NextCleanup returns the first 03:30 strictly after now, in now's location
// (time.Now gives local time). On a day whose 03:30 does not exist because
// of a daylight saving change, it is the instant time.Date normalises it to.
func NextCleanup(now time.Time) time.Time {
	y, mo, d := now.Date()
	next := time.Date(y, mo, d, cleanupHour, cleanupMinute, 0, 0, now.Location())
	if !next.After(now) {
		next = time.Date(y, mo, d+1, cleanupHour, cleanupMinute, 0, 0, now.Location())
	}
	return next
}

// Run does the background work until ctx is done: every FlushEvery it
// writes the lastAccessedAt values that are at least TouchInterval ahead of
// the stored ones (one batched Commit, never on a request's path), and
// after each 03:30 it runs Cleanup. It flushes everything on exit.
//
// The cleanup time is checked on each tick against the clock rather than
// slept towards, so a clock that jumps (a Raspberry Pi boots in 1970 until
// NTP syncs) delays or advances one cleanup instead of losing it.
func (m *Manager) Run(ctx context.Context) {
	ticks, stop := m.tick(FlushEvery)
	defer stop()
	next := NextCleanup(m.cfg.Now())
	for {
		select {
		case <-ctx.Done():
			if err := m.Flush(); err != nil {
				m.log.Error("cannot write last access times", "err", err)
			}
			return
		case <-ticks:
			now := m.cfg.Now()
			if err := m.flush(m.cfg.TouchInterval); err != nil {
				m.log.Error("cannot write last access times", "err", err)
			}
			if !now.Before(next) {
				next = NextCleanup(now)
				n, err := m.Cleanup()
				if err != nil {
					m.log.Error("session cleanup failed", "deleted", n, "err", err)
				} else {
					m.log.Info("session cleanup", "deleted", n, "next", next)
				}
			}
			if m.afterTick != nil {
				m.afterTick()
			}
		}
	}
}
