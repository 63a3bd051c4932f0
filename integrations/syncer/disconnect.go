package syncer

import (
	"searchsvc/integrations/records"
	"searchsvc/storage"
)

// How a record's or a user's items and tasks leave with them.

// Disconnect soft-deletes the record (records.Disconnect) together with
// its items (their personal fields cleared) and its queued tasks, in one
// log line, and tells the Indexer. From its start on, a sync in progress
// for the record commits nothing more, so the two cannot conflict. The
// items' content files are removed by the scheduler once the disconnect
// is committed (and at the next start, whatever happens).
func (s *Syncer) Disconnect(rec records.Record) error {
	ops := s.disconnectOps(rec)
	if _, err := s.records.Disconnect(rec.ID, ops...); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.totals, rec.ID)
	s.mu.Unlock()
	if s.index != nil {
		s.index.RemoveRecord(rec.UserID, rec.ID)
	}
	return nil
}

// DeleteUserOps returns the ops that soft-delete every live record of the
// user, their items and their pending tasks, for auth to commit in the
// same log line as the user's own soft delete. DeletedUser tells the
// Indexer once that line is committed.
func (s *Syncer) DeleteUserOps(userID string) []storage.Op {
	ops := s.records.DisconnectOps(userID)
	for _, r := range s.records.ForUser(userID) {
		ops = append(ops, s.disconnectOps(r)...)
	}
	return ops
}

// DeletedUser tells the Indexer that the user is gone, once the user's
// soft delete (with DeleteUserOps) is committed.
func (s *Syncer) DeletedUser(userID string) {
	if s.index != nil {
		s.index.RemoveUser(userID)
	}
}

// disconnectOps returns the ops that soft-delete the record's items and
// delete its queued tasks and kept sync state, and holds back the record's sync commits.
func (s *Syncer) disconnectOps(rec records.Record) []storage.Op {
	g := s.gate(rec.ID)
	g.Lock()
	defer g.Unlock()
	s.mu.Lock()
	s.closing[rec.ID] = s.now()
	s.mu.Unlock()
	defer s.signal()
	now := s.now().UTC()
	var ops []storage.Op
	for _, t := range s.tasks.Find(taskIndexRecord, rec.ID) {
		ops = append(ops, s.tasks.Delete(t.ID))
	}
	ops = append(ops, s.deleteStateOps(rec.ID)...)
	itemOps, _ := s.items.RemoveRecordOps(rec.ID, now)
	return append(ops, itemOps...)
}
