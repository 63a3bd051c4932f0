package search

import (
	"errors"
	"os"
	"path/filepath"

	"searchsvc/storage"
)

// Add indexes documents for a user; a document whose id is already
// indexed replaces it. They are found by queries when Add returns, and
// written to disk in the background (see Flush and Checkpoint).
func (ix *Index) Add(userID string, docs ...Doc) error {
	u, err := ix.getUser(userID, true)
	if err != nil {
		return err
	}
	// One document at a time: its terms are buffered before the next is
	// analysed. Analysing a whole batch first held every mail's terms and
	// positions at once (a first sync's batch: most of a 116 MiB peak,
	// BenchmarkDovecotFirstSync), beside the buffer that FlushBytes bounds.
	s := docScratches.Get().(*docScratch)
	defer docScratches.Put(s)
	for _, d := range docs {
		a := s.analyze(d)
		if analyzed := afterAnalyze; analyzed != nil {
			analyzed(u)
		}
		err := ix.buffer(u, []*analyzed{a}) // copies what it keeps
		s.reset()
		if err != nil {
			return err
		}
	}
	// After u.mu is released: NeedsRebuild and Stats take ix.mu, then a
	// user's lock.
	ix.mu.Lock()
	ix.lastAdd = ix.cfg.Now()
	ix.mu.Unlock()
	return nil
}

// afterAnalyze, when set (by tests), is called after each document of
// an Add is analysed, before it is buffered.
var afterAnalyze func(u *user)

// buffer adds analyzed documents to u's buffer, freezing it when full.
func (ix *Index) buffer(u *user, as []*analyzed) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.gone {
		return ErrClosed
	}
	for _, a := range as {
		u.deleteID(a.doc.ID)
		u.buf.buf.add(a)
		if u.buf.buf.bytes >= ix.cfg.FlushBytes {
			// Bulk indexing: at most one buffer waits to be written
			// while the next fills.
			for u.frozen > 0 && !u.gone {
				u.flushed.Wait()
			}
			u.freeze()
			ix.kick(ix.flushKick)
		}
	}
	return nil
}

// freeze starts a new buffer; the old one waits for the flusher. The
// caller holds u.mu.
func (u *user) freeze() {
	if u.buf.docs() == 0 {
		return
	}
	u.frozen++
	u.buf = &part{buf: newBuffer()}
	u.parts = append(u.parts, u.buf)
}

// deleteID deletes the live document with this id, wherever it is.
func (u *user) deleteID(id string) bool {
	found := false
	for _, p := range u.parts {
		if d, ok := p.find(id); ok {
			p.remove(d)
			found = true
		}
	}
	if found {
		u.dirty = true
	}
	return found
}

// Delete removes documents by id; queries stop finding them when Delete
// returns.
func (ix *Index) Delete(userID string, ids ...string) error {
	u, err := ix.getUser(userID, false)
	if u == nil || err != nil {
		return err
	}
	u.mu.Lock()
	for _, id := range ids {
		u.deleteID(id)
	}
	u.mu.Unlock()
	ix.kick(ix.flushKick)
	return nil
}

// DeleteRecord removes every document of a user-integration record.
func (ix *Index) DeleteRecord(userID, recordID string) error {
	u, err := ix.getUser(userID, false)
	if u == nil || err != nil {
		return err
	}
	u.mu.Lock()
	for _, p := range u.parts {
		c := p.cols()
		for r, rec := range c.records {
			if rec != recordID {
				continue
			}
			for d := range uint32(c.tag.len()) {
				if c.recordAt(d) == uint32(r) && p.remove(d) {
					u.dirty = true
				}
			}
		}
	}
	u.mu.Unlock()
	ix.kick(ix.flushKick)
	return nil
}

// DeleteUser removes a user's whole index, on disk too, before returning.
func (ix *Index) DeleteUser(userID string) error {
	if !validUser(userID) {
		return ErrBadUser
	}
	ix.mu.Lock()
	u := ix.users[userID]
	delete(ix.users, userID)
	ix.userSnap = nil
	ix.mu.Unlock()
	if u != nil {
		u.mu.Lock()
		u.gone = true
		u.flushed.Broadcast()
		u.mergeDone.Broadcast()
		u.mu.Unlock()
		// A flush holds ioMu while it writes a manifest (manMu): taken in
		// that order here too, or a flush under way would wait on a
		// DeleteUser that waits on it.
		ix.ioMu.Lock() // no flush is under way, and none will write u
		defer ix.ioMu.Unlock()
		u.manMu.Lock() // nor a manifest write
		defer u.manMu.Unlock()
		u.mu.Lock()
		for _, p := range u.parts {
			if p.seg != nil {
				p.seg.close()
			}
		}
		u.mu.Unlock()
	}
	dir := filepath.Join(ix.cfg.Dir, userID)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	tomb := dir + ".deleted"
	if err := os.Rename(dir, tomb); err != nil {
		return err
	}
	if err := storage.SyncDir(ix.cfg.Dir); err != nil {
		return err
	}
	return os.RemoveAll(tomb)
}

// IDs returns the ids of every document indexed for the user, for the
// caller to reconcile with its store.
func (ix *Index) IDs(userID string) ([]string, error) {
	u, err := ix.getUser(userID, false)
	if u == nil || err != nil {
		return nil, err
	}
	u.mu.RLock()
	defer u.mu.RUnlock()
	var ids []string
	for _, p := range u.parts {
		c := p.cols()
		for d := range uint32(c.len()) {
			if !p.deleted(d) {
				ids = append(ids, c.id(d))
			}
		}
	}
	return ids, nil
}

// NeedsRebuild lists the users whose index lost documents to damage: the
// caller re-adds what IDs lacks, then calls Rebuilt.
// The users are listed first, under ix.mu, and each looked at after: Add
// takes a user's lock before ix.mu, so holding ix.mu while taking a
// user's lock could deadlock against it.
func (ix *Index) NeedsRebuild() []string {
	var out []string
	for _, u := range ix.userList() {
		u.mu.RLock()
		if u.rebuild && !u.gone {
			out = append(out, u.id)
		}
		u.mu.RUnlock()
	}
	return out
}

// Rebuilt clears a user's rebuild flag; it is written with the next flush.
func (ix *Index) Rebuilt(userID string) error {
	u, err := ix.getUser(userID, false)
	if u == nil || err != nil {
		return err
	}
	u.mu.Lock()
	u.rebuild, u.dirty = false, true
	u.mu.Unlock()
	ix.kick(ix.flushKick)
	return nil
}
