package syncer

import (
	"errors"
	"fmt"

	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/storage"
)

// A batch of finished tasks is committed, with the items and follow-ups
// they produced, when it holds batchTasks tasks or batchBytes of content,
// when a task queued follow-ups, or when the session ends. Batching spares
// the SD card: a batch's content files are fsynced together (so their
// journal commits are shared), then one directory fsync and one log line,
// where committing each task alone would cost all three per item. A crash
// loses at most one batch's work, which runs again.
const (
	batchTasks = 32
	batchBytes = 8 << 20
)

// batch is the finished work waiting for its commit.
type batch struct {
	done  []string     // ids of finished tasks
	add   []QueuedTask // their follow-ups
	items []items.ItemRecord
	files []items.Staged
	// texts are the items' extracted texts, kept for the Indexer until
	// the batch is committed; nil without an Indexer.
	texts   []string
	removed []string          // provider ids the provider reported deleted
	state   map[string]string // TaskResult.State of the batch's tasks
	rekeys  []integrations.Rekey
	bytes   int64
	seen    map[string]bool // provider ids of items
}

// stage writes the content of a finished task's new items and adds the
// task, its items and its follow-ups to the batch. It returns the
// follow-ups.
func (r *run) stage(t QueuedTask, res integrations.TaskResult) ([]QueuedTask, error) {
	now := r.s.now()
	owner := items.Owner{UserID: r.rec.UserID, RecordID: r.rec.ID, Integration: r.rec.Integration}
	for i := range res.Output {
		out := &res.Output[i]
		if out.ProviderID == "" || len(out.ProviderID) > items.MaxProviderID {
			r.log.Warn("item without a usable provider id skipped", "task", t.Type)
			continue
		}
		if r.known(out.ProviderID) {
			continue
		}
		it, err := r.s.items.NewItem(owner, out, now)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errStoreContent, err)
		}
		f, err := r.s.items.Stage(&it, out.Text)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errStoreContent, err)
		}
		r.mu.Lock()
		r.b.seen[out.ProviderID] = true
		r.mu.Unlock()
		r.b.items = append(r.b.items, it)
		r.b.files = append(r.b.files, f)
		r.b.bytes += int64(len(out.Raw) + len(out.Text))
		if r.s.index != nil {
			r.b.texts = append(r.b.texts, out.Text)
		}
		out.Raw, out.Text = nil, "" // sealed and on disk: let them go
	}
	for _, pid := range res.Removed {
		if pid != "" && len(pid) <= items.MaxProviderID {
			r.b.removed = append(r.b.removed, pid)
		}
	}
	r.stageState(res.State)
	r.stageRekeys(res.Rekeyed)
	r.b.done = append(r.b.done, t.ID)
	follow := make([]QueuedTask, 0, len(res.Tasks))
	for _, ft := range res.Tasks {
		if ft.Type == "" {
			continue
		}
		q, err := r.s.newTask(&r.rec, ft, now)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errStoreContent, err)
		}
		follow = append(follow, q)
	}
	r.b.add = append(r.b.add, follow...)
	return follow, nil
}

// discard forgets the batch and removes its files.
func (r *run) discard() {
	r.s.items.Discard(r.b.files)
	r.reset()
}

func (r *run) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.b.seen)
	r.b = batch{seen: r.b.seen}
}

// flush commits the batch in one log line: the finished tasks deleted,
// their follow-ups and items inserted (their files made durable first),
// the record's progress updated and, with final (the record has no task
// left), its lastSyncAt set.
func (r *run) flush(final bool) error {
	if r.broken {
		return errors.New("sync commit failed earlier")
	}
	b := &r.b
	if len(b.done) == 0 && !final {
		return nil
	}
	if err := r.s.items.Publish(b.files); err != nil {
		r.log.Error("publish item content", "err", err)
		r.discard()
		r.breakOn(err)
		return err
	}
	now := r.s.now().UTC()
	ops, stored := r.taskOps()
	for _, it := range b.items {
		ops = append(ops, r.s.items.InsertOp(it))
	}
	rekeyOps, rerr := r.rekeyOps()
	if rerr != nil {
		r.discard()
		r.breakOn(rerr)
		return rerr
	}
	ops = append(ops, rekeyOps...)
	removeOps, gone := r.s.items.RemoveProviderOps(r.rec.ID, b.removed, now)
	ops = append(ops, removeOps...)
	stateOps, kept, err := r.stateOps(now)
	if err != nil {
		r.log.Error("seal sync state", "err", err)
		r.discard()
		r.breakOn(err)
		return err
	}
	ops = append(ops, stateOps...)
	if r.idleFlush(final, len(rekeyOps)+len(removeOps)+len(stateOps)) {
		r.s.noteIdle(r.rec.ID, now)
		r.s.count(r.rec.ID, nil, true)
		r.reset()
		return nil
	}
	n := int64(len(b.items))
	// ItemsSynced is what the record holds: items the provider reported
	// deleted leave the count as they leave the store.
	p := records.Progress{Succeeded: len(b.done) > 0 && !r.failed, Items: n - int64(len(gone)), Finished: final}
	ops = append(ops, r.s.records.ProgressOp(r.rec.ID, p, now))
	err = r.s.commitFor(r.rec.ID, ops...)
	if err != nil {
		// After a write error the line may be on disk: leave the files
		// for the start-up sweep to judge against what was committed.
		if !errors.Is(err, storage.ErrFailed) {
			r.s.items.Discard(b.files)
		}
		r.reset()
		r.breakOn(err)
		if !errors.Is(err, records.ErrNotFound) {
			r.log.Error("commit sync progress", "err", err)
		}
		return err
	}
	r.committed(n, stored, final, kept, gone)
	return nil
}

// taskOps returns the batch's task operations: the finished tasks
// deleted and their follow-ups inserted, with the ids of tasks kept in
// memory until now that this commit stores.
func (r *run) taskOps() (ops []storage.Op, stored []string) {
	b := &r.b
	ops = make([]storage.Op, 0, len(b.done)+len(b.add)+len(b.items)+1)
	done := make(map[string]bool, len(b.done))
	for _, id := range b.done {
		done[id] = true
		if !r.mem[id] {
			ops = append(ops, r.s.tasks.Delete(id))
		}
	}
	for _, t := range b.add {
		if r.mem[t.ID] {
			if done[t.ID] {
				continue
			}
			stored = append(stored, t.ID)
		}
		ops = append(ops, r.s.tasks.Insert(t))
	}
	return ops, stored
}

// committed brings the run up to a batch flush committed: n items
// stored, the tasks of stored no longer only in memory, the sync state
// kept, the content of items gone removed and the indexer told.
func (r *run) committed(n int64, stored []string, final bool, kept map[string]string, gone []items.ItemRecord) {
	r.stored += n
	for _, id := range stored {
		delete(r.mem, id)
	}
	if final {
		r.s.forgetIdle(r.rec.ID) // the commit set a later lastSyncAt
	}
	r.s.count(r.rec.ID, r.b.add, final)
	if kept != nil {
		r.mu.Lock()
		r.kept = kept
		r.mu.Unlock()
	}
	if err := r.s.items.RemoveFiles(gone); err != nil {
		r.log.Warn("remove content of items deleted at the provider", "err", err)
	}
	r.tellIndex(gone)
	r.reset()
}
