package syncer

import (
	"cmp"
	"errors"
	"maps"
	"slices"
	"time"

	"searchsvc/integrations/records"
	"searchsvc/storage"
)

// The scheduler's passes over the queue, and the clean-up of what
// disconnected records leave behind.

// pass is one look at the queue: it removes what disconnected or
// re-authorization-needing records left behind, queues the starts that
// are due (when schedule is set), and returns the records whose next task
// is due and that no worker holds, least recently served first, and when
// the next one will be due.
func (s *Syncer) pass(schedule bool) (due []string, next time.Time) {
	now := s.now()
	s.purge(now)
	if err := s.saveIdle(now, false); err != nil {
		s.log.Error("store the times of idle polls", "err", err)
	}

	heads := s.heads()
	var recs []records.Record
	s.records.ScanAll(func(r records.Record) bool {
		recs = append(recs, r)
		return true
	})
	byID := make(map[string]*records.Record, len(recs))
	for i := range recs {
		byID[recs[i].ID] = &recs[i]
	}
	s.mu.Lock()
	busy := make(map[string]bool, len(s.busy))
	for id := range s.busy {
		busy[id] = true
	}
	s.mu.Unlock()

	soon := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	var orphans []storage.Op
	for id, h := range heads {
		rec := byID[id]
		if rec == nil || !rec.Live() || rec.Status == records.StatusNeedsReauth {
			if !busy[id] {
				for _, t := range s.tasks.Find(taskIndexRecord, id) {
					orphans = append(orphans, s.tasks.Delete(t.ID))
				}
			}
			continue
		}
		if busy[id] {
			continue
		}
		if _, next, ok := s.restingUntil(id, now); ok {
			soon(next)
			continue
		}
		if h.NotBefore.After(now) {
			soon(h.NotBefore)
			continue
		}
		due = append(due, id)
	}
	if len(orphans) > 0 {
		if err := s.st.Commit(orphans...); err != nil && !errors.Is(err, storage.ErrNotFound) {
			s.log.Error("drop tasks of disconnected records", "err", err)
		}
	}

	// Scheduled starts not yet taken (no worker was free) are due as
	// stored tasks are.
	s.mu.Lock()
	polls := slices.Collect(maps.Keys(s.polls))
	s.mu.Unlock()
	for _, id := range polls {
		if _, queued := heads[id]; queued || busy[id] {
			continue
		}
		if _, _, ok := s.restingUntil(id, now); !ok {
			due = append(due, id)
		}
	}
	if schedule {
		due = append(due, s.startIdle(recs, heads, busy, now, soon)...)
	}

	s.mu.Lock()
	slices.SortFunc(due, func(a, b string) int { return cmp.Compare(s.served[a], s.served[b]) })
	s.mu.Unlock()
	return due, next
}

// heads returns each record's head: its first task, which holds back the
// others.
func (s *Syncer) heads() map[string]QueuedTask {
	heads := make(map[string]QueuedTask)
	s.tasks.Scan(func(t QueuedTask) bool {
		if h, ok := heads[t.RecordID]; !ok || t.Seq < h.Seq {
			heads[t.RecordID] = t
		}
		return true
	})
	return heads
}

// startIdle makes a scheduled start (in memory, idle.go) for each of
// recs that has no task (heads), is not busy or resting, and whose sync
// is due, and returns their ids. It tells soon when the others become due.
func (s *Syncer) startIdle(recs []records.Record, heads map[string]QueuedTask, busy map[string]bool, now time.Time, soon func(time.Time)) []string {
	var due []string
	for i := range recs {
		rec := &recs[i]
		if _, queued := heads[rec.ID]; queued || busy[rec.ID] {
			continue
		}
		if _, next, ok := s.restingUntil(rec.ID, now); ok {
			soon(next)
			continue
		}
		ok, at := s.startDue(rec, now)
		if !ok {
			if !at.IsZero() {
				soon(at)
			}
			continue
		}
		made, err := s.schedulePoll(rec)
		if err != nil {
			s.log.Error("schedule sync", "record_id", rec.ID, "err", err)
			continue
		}
		if made { // else pass counted it already
			due = append(due, rec.ID)
		}
	}
	return due
}

// startDue reports whether a start of rec is due, and if not, when it
// will be (zero: not while its status stays).
func (s *Syncer) startDue(rec *records.Record, now time.Time) (bool, time.Time) {
	if !rec.Live() || (rec.Status != records.StatusConnected && rec.Status != records.StatusError) {
		return false, time.Time{}
	}
	last := s.lastSync(rec)
	if last == nil && rec.Status == records.StatusConnected {
		return true, time.Time{}
	}
	base := rec.ConnectedAt
	if last != nil {
		base = *last
	}
	// A failed run waits a whole interval from its failure.
	if rec.Status == records.StatusError && rec.UpdatedAt.After(base) {
		base = rec.UpdatedAt
	}
	at := base.Add(s.cfg.PollInterval)
	// A base in the future means the clock went back (a Pi before NTP):
	// do not wait for it to catch up.
	if !now.Before(at) || base.After(now.Add(s.cfg.PollInterval)) {
		return true, time.Time{}
	}
	return false, at
}

// purge finishes disconnects: the content directories of records that
// are no longer live are removed, after their items' soft delete (which
// the disconnect itself committed, or is committed here).
func (s *Syncer) purge(now time.Time) {
	s.mu.Lock()
	for id, since := range s.closing {
		if _, live := s.records.ByID(id); !live || now.Sub(since) > disconnectHold {
			delete(s.closing, id)
		}
	}
	busy := make(map[string]bool, len(s.busy))
	for id := range s.busy {
		busy[id] = true
	}
	s.mu.Unlock()
	names, err := s.items.RecordDirs()
	if err != nil {
		s.log.Error("list item content", "err", err)
		return
	}
	for _, id := range names {
		if busy[id] {
			continue
		}
		if _, ok := s.records.ByID(id); ok {
			continue
		}
		if err := s.dropItems(id, now); err != nil {
			s.log.Error("soft-delete items of a disconnected record", "record_id", id, "err", err)
			continue
		}
		if err := s.items.RemoveRecordFiles(id); err != nil {
			s.log.Error("remove item content of a disconnected record", "record_id", id, "err", err)
		}
	}
}

// dropItems soft-deletes the live items of a record that is gone, and
// tells the Indexer if there were any.
func (s *Syncer) dropItems(recordID string, now time.Time) error {
	ops, ids := s.items.RemoveRecordOps(recordID, now)
	if err := s.st.Commit(ops...); err != nil {
		return err
	}
	if s.index != nil && len(ids) > 0 {
		if it, ok := s.itemOwner(recordID); ok {
			s.index.RemoveRecord(it, recordID)
		}
	}
	return nil
}

// itemOwner returns the user whose record recordID was, from its items.
func (s *Syncer) itemOwner(recordID string) (string, bool) {
	for _, it := range s.items.ForRecord(recordID) {
		return it.UserID, true
	}
	return "", false
}

// sweep runs once before the first pass: it removes content files that no
// live item names (a crash between writing them and committing their
// metadata, or between a soft delete and the files' removal) and reports
// live items whose file is missing.
func (s *Syncer) sweep() {
	s.purge(s.now())
	s.recount()
	removed, missing, err := s.items.Sweep()
	if err != nil {
		s.log.Error("sweep item content", "err", err)
	}
	if removed > 0 {
		s.log.Info("removed orphaned item content files", "files", removed)
	}
	if missing > 0 {
		s.log.Warn("items without a content file", "items", missing)
	}
}

// recount sets each live record's ItemsSynced to the items it holds, where
// they differ: counts kept before deletions were subtracted only ever
// went up. Run once at start, before any sync.
func (s *Syncer) recount() {
	live := s.items.LiveCounts()
	var fixed []records.Record
	s.records.All(func(r records.Record) bool {
		if r.ItemsSynced != live[r.ID] {
			fixed = append(fixed, r)
		}
		return true
	})
	for _, r := range fixed {
		if err := s.commitFor(r.ID, s.records.CountOp(r.ID, live[r.ID])); err != nil && !errors.Is(err, records.ErrNotFound) {
			s.log.Error("recount a record's items", "record_id", r.ID, "err", err)
		}
	}
	if len(fixed) > 0 {
		s.log.Info("recounted the items of records", "records", len(fixed))
	}
}
