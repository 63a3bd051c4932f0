package records

import (
	"bytes"
	"time"

	"searchsvc/storage"
)

// The ops a sync commits together with its own (finished tasks, stored
// items), so that a record's progress and the work it counts land in one
// log line. Each checks, when it is applied, that the record is still
// live, and fails the commit with ErrNotFound otherwise. now is the
// caller's clock.

// RefreshedOp stores sealed, credentials a sync refreshed, in the live
// record id, unless the record's sealed credentials are no longer prev
// (the user reconnected during the sync): then ErrCredentialsChanged, and
// the new grant is kept.
func (rs *Records) RefreshedOp(id string, prev, sealed []byte, now time.Time) storage.Op {
	now = now.UTC()
	return rs.t.Update(id, func(cur *Record) error {
		if !cur.Live() {
			return ErrNotFound
		}
		if !bytes.Equal(cur.Credentials, prev) {
			return ErrCredentialsChanged
		}
		cur.Credentials, cur.UpdatedAt = sealed, now
		return nil
	})
}

// Progress is what one committed batch of a sync did.
type Progress struct {
	Succeeded bool  // at least one task finished: the record is connected again
	Items     int64 // items stored less items removed, added to ItemsSynced
	Finished  bool  // the record has no task left: LastSyncAt is set
}

// ProgressOp records p on the live record id.
func (rs *Records) ProgressOp(id string, p Progress, now time.Time) storage.Op {
	now = now.UTC()
	return rs.t.Update(id, func(cur *Record) error {
		if !cur.Live() {
			return ErrNotFound
		}
		if p.Succeeded {
			cur.Status, cur.LastError = StatusConnected, ""
		}
		cur.ItemsSynced = max(cur.ItemsSynced+p.Items, 0)
		if p.Finished {
			cur.LastSyncAt = &now
		}
		cur.UpdatedAt = now
		return nil
	})
}

// FailureOp records a failed sync step on the live record id: its status
// (StatusError or StatusNeedsReauth) and lastError, a sentence safe to show
// the user. A needs_reauth made for credentials that are no longer the
// record's (prev) fails with ErrCredentialsChanged: the user reconnected
// meanwhile, and the new grant gets its chance.
func (rs *Records) FailureOp(id, status, lastError string, prev []byte, now time.Time) storage.Op {
	now = now.UTC()
	return rs.t.Update(id, func(cur *Record) error {
		if !cur.Live() {
			return ErrNotFound
		}
		if status == StatusNeedsReauth && !bytes.Equal(cur.Credentials, prev) {
			return ErrCredentialsChanged
		}
		cur.Status, cur.LastError, cur.UpdatedAt = status, lastError, now
		return nil
	})
}

// CountOp sets the live record id's ItemsSynced to n, the items it holds
// (the syncer's recount at start, for counts that never went down).
func (rs *Records) CountOp(id string, n int64) storage.Op {
	return rs.t.Update(id, func(cur *Record) error {
		if !cur.Live() {
			return ErrNotFound
		}
		cur.ItemsSynced = n
		return nil
	})
}

// SyncedAtOp sets the lastSyncAt of the record id to at, unless it holds
// a later one: the syncer's idle polls, kept in memory until then. A
// record no longer live is left as it is.
func (rs *Records) SyncedAtOp(id string, at time.Time) storage.Op {
	at = at.UTC()
	return rs.t.Update(id, func(cur *Record) error {
		if cur.Live() && (cur.LastSyncAt == nil || at.After(*cur.LastSyncAt)) {
			cur.LastSyncAt = &at
		}
		return nil
	})
}
