package syncer

import (
	"errors"
	"maps"
	"slices"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
	"searchsvc/storage"
)

// Idle polls spare the SD card (docs/operations.md, "Idle polls"). A
// scheduled start is not a stored task: after a restart the schedule
// queues it again from the record's lastSyncAt, and no one was told it
// was queued. A session that ran only such a start and found nothing new
// (no item, no follow-up, no kept value, no status to change) commits
// nothing: its lastSyncAt waits in memory and reaches the disk with the
// record's next commit, after idleSaveEvery, or at Close. A crash loses
// only those times, and the record is polled once more after the restart.
// Starts a user asked for (SyncNow) and tasks that carry work stay stored.

// idleSaveEvery bounds how long a lastSyncAt kept in memory waits for
// its commit.
const idleSaveEvery = time.Hour

// idleSync is a record's last idle poll not yet on disk.
type idleSync struct {
	at    time.Time // the poll's lastSyncAt
	since time.Time // when the first unsaved poll finished
}

// schedulePoll makes a scheduled start of rec, kept in memory, for the
// record's next session, and reports whether it made one: one already
// made stays.
func (s *Syncer) schedulePoll(rec *records.Record) (bool, error) {
	s.mu.Lock()
	_, ok := s.polls[rec.ID]
	s.mu.Unlock()
	if ok {
		return false, nil
	}
	t, err := s.newTask(rec, integrations.Task{Type: integrations.TaskStart}, s.now())
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.polls[rec.ID]; ok {
		return false, nil
	}
	s.polls[rec.ID] = t
	return true, nil
}

// takePoll removes and returns the record's scheduled start, if any.
func (s *Syncer) takePoll(recordID string) (QueuedTask, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.polls[recordID]
	delete(s.polls, recordID)
	return t, ok
}

// lastSync is rec's lastSyncAt, the one kept in memory if newer.
func (s *Syncer) lastSync(rec *records.Record) *time.Time {
	s.mu.Lock()
	is, ok := s.idle[rec.ID]
	s.mu.Unlock()
	if ok && (rec.LastSyncAt == nil || is.at.After(*rec.LastSyncAt)) {
		return &is.at
	}
	return rec.LastSyncAt
}

// LastSyncAt is the record's lastSyncAt as the record's view shows it:
// the stored one, or the time of a later idle poll not yet on disk.
func (s *Syncer) LastSyncAt(rec records.Record) *time.Time {
	return s.lastSync(&rec)
}

// noteIdle keeps in memory that the record's poll at now found nothing.
func (s *Syncer) noteIdle(recordID string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, ok := s.idle[recordID]
	if !ok {
		is.since = now
	}
	is.at = now
	s.idle[recordID] = is
}

// forgetIdle drops the record's unsaved poll time: a commit of the
// record just set a later lastSyncAt.
func (s *Syncer) forgetIdle(recordID string) {
	s.mu.Lock()
	delete(s.idle, recordID)
	s.mu.Unlock()
}

// saveIdle commits the unsaved poll times in one log line, if any is
// older than idleSaveEvery, or with all set, whatever their age.
func (s *Syncer) saveIdle(now time.Time, all bool) error {
	s.mu.Lock()
	due := all
	for _, is := range s.idle {
		if now.Sub(is.since) >= idleSaveEvery {
			due = true
		}
	}
	var pending map[string]idleSync
	if due && len(s.idle) > 0 {
		pending = maps.Clone(s.idle)
	}
	s.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	ops := make([]storage.Op, 0, len(pending))
	for _, id := range slices.Sorted(maps.Keys(pending)) {
		if _, ok := s.records.ByID(id); !ok {
			continue
		}
		ops = append(ops, s.records.SyncedAtOp(id, pending[id].at))
	}
	// A record deleted meanwhile fails the line: its time, like the
	// others', is then dropped, costing at most one early poll.
	err := s.st.Commit(ops...)
	if err != nil && !errors.Is(err, records.ErrNotFound) && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	s.mu.Lock()
	for id, is := range pending {
		if cur, ok := s.idle[id]; ok && cur.at.Equal(is.at) {
			delete(s.idle, id)
		}
	}
	s.mu.Unlock()
	return nil
}

// Close commits the times of idle polls kept in memory. Run calls it when
// it returns; a tool that ran RunOnce calls it before closing the store.
func (s *Syncer) Close() error {
	return s.saveIdle(s.now(), true)
}

// keepInMemory marks the follow-ups of t that stay in memory, as t
// does, while the batch holds nothing to store: the listing tasks of a
// scheduled start (a feed's one fetch per address). It reports whether the batch must be committed now, as it
// must when a follow-up is stored: one that downloads items carries work
// a later poll would not find again once the batch's cursor is stored.
func (r *run) keepInMemory(t QueuedTask, follow []QueuedTask) (commit bool) {
	b := &r.b
	if len(b.items) > 0 || len(b.removed) > 0 || len(b.rekeys) > 0 || r.stateChanged() {
		return len(follow) > 0 // found something: committed as any batch with follow-ups
	}
	for _, q := range follow {
		if r.mem[t.ID] && itemsOf([]QueuedTask{q}) == 0 {
			r.mem[q.ID] = true
		} else {
			commit = true
		}
	}
	return commit
}

// idleFlush reports whether the final batch holds nothing to store: only
// tasks kept in memory, finished with nothing new, on a record whose
// status they would not change. ops counts the batch's other ops.
func (r *run) idleFlush(final bool, ops int) bool {
	b := &r.b
	if !final || r.failed || len(r.mem) == 0 || len(b.done) == 0 || ops > 0 ||
		len(b.items) > 0 || len(b.removed) > 0 || len(b.rekeys) > 0 {
		return false
	}
	for _, id := range b.done {
		if !r.mem[id] {
			return false
		}
	}
	for _, t := range b.add {
		if !r.mem[t.ID] {
			return false
		}
	}
	rec, ok := r.s.records.ByID(r.rec.ID)
	return ok && rec.Status == records.StatusConnected && rec.LastError == ""
}

// stateChanged reports whether the batch sets a kept value to something
// new.
func (r *run) stateChanged() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.b.state) == 0 {
		return false
	}
	kept := r.keptLocked()
	for k, v := range r.b.state {
		if kept[k] != v {
			return true
		}
	}
	return false
}
