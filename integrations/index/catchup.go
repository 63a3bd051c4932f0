package index

import (
	"context"
	"errors"

	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
)

// CatchUp makes a catch-up of the given users due (nil: every user of
// the store or the index) and waits until they ran. It returns the users
// it could not catch up (their errors are logged), nil when all went
// well. A CatchUp of every user that went well stands for the comparison
// at start (Run).
func (x *Indexer) CatchUp(users []string) []string {
	all := users == nil
	if all {
		users = x.everyUser()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, u := range users {
		x.markLocked(u)
	}
	for x.busy(users) {
		x.changed.Wait()
	}
	var failed []string
	for _, u := range users {
		_, retry := x.failed[u]
		if q := x.queues[u]; retry || q != nil && q.catchUp {
			failed = append(failed, u)
		}
	}
	if all && failed == nil {
		x.started = true
	}
	return failed
}

// Stale makes a catch-up of the user due without waiting for it: the
// search route (GET /v1/search) found documents the item store no longer
// has, a removal the index missed. The catch-up, on the user's worker,
// deletes them; a search writes nothing itself. A catch-up already due
// or under way stands for it.
func (x *Indexer) Stale(userID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if q := x.queues[userID]; q != nil && (q.catchUp || q.catchingUp) {
		return
	}
	x.markLocked(userID)
}

// busy reports whether a worker is on one of the users' queues. x.mu is
// held.
func (x *Indexer) busy(users []string) bool {
	for _, u := range users {
		if q := x.queues[u]; q != nil && q.running {
			return true
		}
	}
	return false
}

// catchUp runs the user's catch-up due, once the slot is free. Changes
// queued until it begins are dropped (the store it reads holds them);
// those queued after wait for it to end.
func (x *Indexer) catchUp(userID string, q *queue) {
	select {
	case x.slot <- struct{}{}:
	case <-x.ctx.Done():
		return
	}
	defer func() { <-x.slot }()
	x.mu.Lock()
	if !q.catchUp || x.ctx.Err() != nil {
		x.mu.Unlock()
		return
	}
	q.catchUp, q.catchingUp = false, true
	x.catching++
	x.mu.Unlock()

	err := x.catchUpUser(x.ctx, userID)

	x.mu.Lock()
	defer x.mu.Unlock()
	q.catchingUp = false
	x.catching--
	x.changed.Broadcast()
	switch {
	case err == nil:
		delete(x.attempts, userID)
	case x.ctx.Err() != nil:
		q.catchUp = true // stopped: still due, and CaughtUp says so
	default:
		x.log.Error("search index catch-up", "user_id", userID, "err", err)
		x.attempts[userID]++
		x.failed[userID] = x.now().Add(retryWait(x.attempts[userID]))
		select {
		case x.retry <- struct{}{}:
		default:
		}
	}
}

// catchUpUser brings one user's index level with the store: live items
// the index lacks are added, documents the store no longer has are
// deleted, and so is the index of a user the store has no live items
// for. The user's worker runs it, so no change of the user's applies
// meanwhile (see Indexer).
func (x *Indexer) catchUpUser(ctx context.Context, userID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ids := x.items.LiveIDs(userID)
	if len(ids) == 0 {
		return x.ix.DeleteUser(userID)
	}
	missing := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		missing[id] = struct{}{}
	}
	have, err := x.ix.IDs(userID)
	if err != nil {
		return err
	}
	var extra []string
	for _, id := range have {
		if _, ok := missing[id]; ok {
			delete(missing, id) // indexed already: what stays is missing
		} else {
			extra = append(extra, id)
		}
	}
	if len(extra) > 0 {
		if err := x.ix.Delete(userID, extra...); err != nil {
			return err
		}
	}
	added := 0
	docs := make([]search.Doc, 0, catchUpBatch)
	flush := func() error {
		if len(docs) == 0 {
			return nil
		}
		err := x.ix.Add(userID, docs...)
		added += len(docs)
		clear(docs)
		docs = docs[:0]
		return err
	}
	for id := range missing {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, ok := x.load(userID, id)
		if !ok {
			continue
		}
		if docs = append(docs, d); len(docs) == catchUpBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := x.ix.Rebuilt(userID); err != nil {
		return err
	}
	if added > 0 || len(extra) > 0 {
		x.log.Info("search index caught up", "user_id", userID, "added", added, "removed", len(extra))
	}
	return nil
}

// load reads a stored item as the index wants it; an item removed
// meanwhile, or whose sealed parts do not open, is left out (logged): no
// catch-up could index it either.
func (x *Indexer) load(userID, id string) (search.Doc, bool) {
	it, err := x.items.Get(userID, id)
	if err != nil || !it.Live() {
		return search.Doc{}, false
	}
	m, err := x.items.OpenMeta(&it)
	if err != nil {
		x.log.Error("open item metadata for the index", "item_id", id, "err", err)
		return search.Doc{}, false
	}
	text, err := x.items.Text(&it)
	if err != nil && !errors.Is(err, items.ErrContentMissing) {
		x.log.Error("read item text for the index", "item_id", id, "err", err)
		return search.Doc{}, false
	}
	return x.doc(Item{
		ID: it.ID, RecordID: it.RecordID, Integration: it.Integration,
		Title: m.Title, From: m.From, To: m.To, Date: it.Date, Text: text,
		Thread: m.Thread, Refs: m.Refs, Attachments: AttachmentNames(&m), Folders: FolderTerms(&m),
	}), true
}
