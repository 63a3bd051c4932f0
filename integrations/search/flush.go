package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"searchsvc/storage"
)

// flusher writes buffers to segments: a full buffer at once, everything
// once no document was added for FlushAfter, and then the checkpoint.
func (ix *Index) flusher() {
	defer ix.wg.Done()
	t := time.NewTicker(max(ix.cfg.FlushAfter/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ix.stop:
			return
		case <-ix.flushKick:
		case <-t.C:
		}
		ix.flushDue()
	}
}

func (ix *Index) flushDue() {
	ix.mu.Lock()
	quiet := ix.cfg.Now().Sub(ix.lastAdd) >= ix.cfg.FlushAfter
	cpPending := ix.cpWant != ix.cpDone
	ix.mu.Unlock()
	pending := false
	for _, u := range ix.userList() {
		u.mu.RLock()
		frozen, dirty, buffered := u.frozen > 0, u.dirty, u.buf.docs() > 0
		u.mu.RUnlock()
		if frozen {
			ix.ioMu.Lock()
			err := ix.writeFrozen(u)
			ix.ioMu.Unlock()
			if err != nil {
				ix.log.Error("search flush failed", "user_id", u.id, "err", err)
			}
			ix.kick(ix.mergeKick)
		}
		pending = pending || dirty || buffered
	}
	if quiet && (pending || cpPending) {
		if err := ix.flushAll(); err != nil {
			ix.log.Error("search flush failed", "err", err)
		}
	}
}

// Flush writes every buffered document and deletion to disk, and then the
// checkpoint.
func (ix *Index) Flush() error {
	ix.mu.Lock()
	closed := ix.closed
	ix.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return ix.flushAll()
}

func (ix *Index) flushAll() error {
	ix.ioMu.Lock()
	defer ix.ioMu.Unlock()
	ix.mu.Lock()
	cp := ix.cpWant
	ix.mu.Unlock()
	users := ix.userList()
	for _, u := range users {
		u.mu.Lock()
		u.freeze()
		u.mu.Unlock()
	}
	var errs []error
	for _, u := range users {
		if err := ix.writeFrozen(u); err != nil {
			errs = append(errs, err)
			continue
		}
		u.mu.RLock()
		dirty := u.dirty
		u.mu.RUnlock()
		if dirty {
			errs = append(errs, ix.writeManifest(u))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	ix.kick(ix.mergeKick)
	ix.mu.Lock()
	done := ix.cpDone
	ix.mu.Unlock()
	if cp == done {
		return nil
	}
	if err := ix.writeCheckpoint(cp); err != nil {
		return err
	}
	ix.mu.Lock()
	ix.cpDone = cp
	ix.mu.Unlock()
	return nil
}

// writeFrozen turns each frozen buffer of u into a segment. The caller
// holds ix.ioMu.
func (ix *Index) writeFrozen(u *user) error {
	for {
		u.mu.Lock()
		var p *part
		for _, q := range u.parts {
			if q.buf != nil && q != u.buf {
				p = q
				break
			}
		}
		if p == nil || u.gone {
			u.mu.Unlock()
			return nil
		}
		if in := ix.flushPartners(u, p); in != nil {
			err := ix.mergeLocked(u, append(in, p)) // unlocks u.mu
			if err == nil {
				continue
			}
			ix.log.Warn("search flush with a merge failed, flushing alone", "user_id", u.id, "err", err)
			u.mu.Lock()
			if u.gone || !slices.Contains(u.parts, p) {
				u.mu.Unlock()
				continue
			}
		}
		seq := u.nextSeq
		u.nextSeq++
		u.mu.Unlock()

		seg, err := ix.writeBuffer(u, seq, p.buf)
		if err != nil {
			return err
		}
		u.mu.Lock()
		np := &part{seg: seg, del: p.cloneDel(), ndel: p.ndel}
		i := slices.Index(u.parts, p)
		u.parts[i] = np
		u.frozen--
		u.dirty = true
		u.flushed.Broadcast()
		u.mu.Unlock()
		ix.stats.flushes.Add(1)
		if err := ix.writeManifest(u); err != nil {
			return err
		}
	}
}

// writeBuffer writes a buffer as segment seq and opens it.
func (ix *Index) writeBuffer(u *user, seq uint64, b *buffer) (*segment, error) {
	if err := os.MkdirAll(u.dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(u.dir, segName(seq))
	w, err := newSegWriter(path+".tmp", ix.s, u.id, seq)
	if err != nil {
		return nil, err
	}
	w.f1 = ix.f1
	for _, rec := range b.stored {
		w.addStored(rec)
	}
	for _, t := range b.sortedTerms() {
		bt := b.terms[t]
		w.writePostings(bt.pos)
		w.writePostings(bt.docs)
		w.endTerm(t, bt.df, uint64(len(bt.pos)))
	}
	return ix.finishSegment(w, u, seq, path, &b.cols, b.lenSums)
}

// finishSegment completes a segment file, moves it into place and opens it.
func (ix *Index) finishSegment(w *segWriter, u *user, seq uint64, path string, c *columns, lenSums [numFields]uint64) (*segment, error) {
	n, err := w.finish(c, lenSums)
	ix.stats.written.Add(n)
	ix.stats.plainWritten.Add(w.plain)
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err == nil {
		err = storage.SyncDir(u.dir)
	}
	if err != nil {
		os.Remove(path + ".tmp")
		return nil, fmt.Errorf("write segment: %w", err)
	}
	seg, err := openSegmentFile(path, ix.s, u.id, seq, ix.cache)
	if err != nil {
		return nil, fmt.Errorf("reopen segment: %w", err)
	}
	return seg, nil
}

// writeManifest writes u's manifest as it is now.
func (ix *Index) writeManifest(u *user) error {
	u.manMu.Lock()
	defer u.manMu.Unlock()
	u.mu.Lock()
	if u.gone {
		u.mu.Unlock()
		return nil
	}
	m := &manifest{nextSeq: u.nextSeq, rebuild: u.rebuild}
	for _, p := range u.parts {
		if p.seg != nil {
			m.segs = append(m.segs, manSeg{seq: p.seg.seq, deleted: p.deletedList()})
		}
	}
	u.dirty = false
	u.mu.Unlock()
	b := sealFile(ix.s, manMagic, encodeManifest(m), blockID{user: u.id, kind: kindManifest})
	err := os.MkdirAll(u.dir, 0o700)
	if err == nil {
		err = storage.ReplaceFile(filepath.Join(u.dir, manifestName), ".tmp", b, 0o600)
	}
	if err != nil {
		u.mu.Lock()
		u.dirty = true
		u.mu.Unlock()
		return fmt.Errorf("write manifest: %w", err)
	}
	ix.stats.written.Add(int64(len(b)))
	return nil
}

// dropBad removes u's segments found damaged, flags the user for a
// rebuild and reports it.
func (ix *Index) dropBad(u *user) {
	u.mu.Lock()
	var bad []*part
	keep := u.parts[:0:0]
	for _, p := range u.parts {
		if p.bad.Load() && p.seg != nil {
			bad = append(bad, p)
		} else {
			keep = append(keep, p)
		}
	}
	if len(bad) == 0 || u.gone {
		u.mu.Unlock()
		return
	}
	u.parts = keep
	u.rebuild, u.dirty = true, true
	u.mu.Unlock()
	for _, p := range bad {
		ix.log.Error("search segment damaged, dropped", "user_id", u.id, "segment", p.seg.seq)
	}
	if err := ix.writeManifest(u); err != nil {
		ix.log.Error("search manifest write failed", "user_id", u.id, "err", err)
	}
	for _, p := range bad {
		p.seg.close()
		os.Remove(filepath.Join(u.dir, segName(p.seg.seq)))
	}
	if ix.cfg.OnDamage != nil {
		ix.cfg.OnDamage(u.id)
	}
}

// Verify opens every block of every segment, so damage a query has not
// come across yet is found (and dropped and reported as a query would).
// It reads without the cache and writes nothing unless damage is found;
// run it in the background after Open. It is safe beside queries, adds,
// flushes and merges: it holds no lock while it reads.
func (ix *Index) Verify() error {
	for _, u := range ix.userList() {
		u.mu.RLock()
		var segs []*part
		for _, p := range u.parts {
			if p.seg != nil {
				segs = append(segs, p)
			}
		}
		u.mu.RUnlock()
		damaged := false
		for _, p := range segs {
			memo := &blockMemo{}
			for n := range p.seg.offs {
				if _, err := p.seg.block(uint32(n), memo); err != nil {
					// A merge may have replaced and closed the segment
					// meanwhile: only one still listed is damaged.
					u.mu.RLock()
					listed := !u.gone && slices.Contains(u.parts, p)
					u.mu.RUnlock()
					if listed {
						p.bad.Store(true)
						damaged = true
					}
					break
				}
			}
		}
		if damaged {
			ix.dropBad(u)
		}
	}
	return nil
}
