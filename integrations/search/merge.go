package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Reseal rewrites every user's segments, manifest and the checkpoint
// under the current Key, so previous keys are no longer needed. Each
// user's segments become one. A merge the background merger is running
// on a user is waited for first. Reseal fails, naming the users, when a
// segment is still sealed under a previous key at the end.
func (ix *Index) Reseal() error {
	if err := ix.Flush(); err != nil {
		return err
	}
	var errs []error
	for _, u := range ix.userList() {
		if err := ix.resealUser(u); err != nil {
			errs = append(errs, fmt.Errorf("reseal user %s: %w", u.id, err))
		}
	}
	for _, u := range ix.userList() {
		u.mu.RLock()
		for _, p := range u.parts {
			if p.seg != nil && p.seg.key != 0 && !u.gone {
				errs = append(errs, fmt.Errorf("reseal user %s: segment %d is still under a previous key", u.id, p.seg.seq))
			}
		}
		u.mu.RUnlock()
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	ix.mu.Lock()
	cp := ix.cpDone
	ix.mu.Unlock()
	return ix.writeCheckpoint(cp)
}

// resealUser merges all of u's segments into one under the current key.
// A damaged segment is dropped on the way (the user is then rebuilt,
// under the current key); an attempt whose inputs changed is retried.
func (ix *Index) resealUser(u *user) error {
	for range 3 {
		u.mu.Lock()
		for u.merging && !u.gone {
			u.mergeDone.Wait()
		}
		var in []*part
		old := false
		for _, p := range u.parts {
			if p.seg != nil && !p.bad.Load() {
				in = append(in, p)
				old = old || p.seg.key != 0
			}
		}
		if u.gone {
			u.mu.Unlock()
			return nil
		}
		if len(in) == 0 || len(in) == 1 && !old {
			u.mu.Unlock()
			return ix.writeManifest(u)
		}
		err := ix.mergeLocked(u, in)
		var bp *badPart
		if err == nil || !errors.Is(err, errMergeLost) && !errors.As(err, &bp) {
			return err
		}
	}
	return errors.New("segments changed under every attempt")
}

// errMergeLost is a merge whose inputs changed under it; it is dropped.
var errMergeLost = errors.New("search: merge inputs changed")

// merge writes the live documents of in as one segment and puts it in
// their place; it does nothing when a merge of u is under way.
//
// The inputs were picked under a read lock since released: a flush may
// have merged some of them away (and closed them) meanwhile, and the
// merge then has nothing left to do.
func (ix *Index) merge(u *user, in []*part) error {
	u.mu.Lock()
	if u.merging || u.gone || !u.holdsAll(in) {
		u.mu.Unlock()
		return nil
	}
	return ix.mergeLocked(u, in)
}

// holdsAll reports whether every part of in is still one of u's. The
// caller holds u.mu.
func (u *user) holdsAll(in []*part) bool {
	for _, p := range in {
		if !slices.Contains(u.parts, p) {
			return false
		}
	}
	return true
}

// mergeLocked is merge with u.mu held and no merge of u under way; it
// unlocks u.mu.
func (ix *Index) mergeLocked(u *user, in []*part) error {
	u.merging = true
	seq := u.nextSeq
	u.nextSeq++
	dels := make([][]uint64, len(in))
	for i, p := range in {
		dels[i] = p.cloneDel()
	}
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.merging = false
		u.mergeDone.Broadcast()
		u.mu.Unlock()
	}()

	path := filepath.Join(u.dir, segName(seq))
	seg, remaps, err := ix.writeMerged(u, seq, path, in, dels)
	if err != nil {
		var bp *badPart
		if errors.As(err, &bp) {
			bp.p.bad.Store(true)
			ix.dropBad(u)
		}
		return err
	}
	u.mu.Lock()
	pos := make([]int, len(in))
	for i, p := range in {
		pos[i] = slices.Index(u.parts, p)
	}
	if u.gone || slices.Contains(pos, -1) {
		u.mu.Unlock()
		seg.close()
		os.Remove(path)
		return errMergeLost
	}
	np := &part{seg: seg}
	carryDeletes(np, in, dels, remaps)
	flushed := replaceParts(u, in, np)
	u.mu.Unlock()
	ix.stats.merges.Add(1)
	ix.stats.flushes.Add(int64(flushed))
	return ix.retire(u, in)
}

// carryDeletes deletes in np, the merged part, the documents of in
// deleted while the merge ran: those deleted now and not in dels, the
// deletions the merge started from; remaps gives their numbers in np.
func carryDeletes(np *part, in []*part, dels [][]uint64, remaps [][]int32) {
	for i, p := range in {
		for w, word := range p.del {
			var old uint64
			if w < len(dels[i]) {
				old = dels[i][w]
			}
			for b := range 64 {
				if word&^old&(1<<b) != 0 {
					if nd := remaps[i][w*64+b]; nd >= 0 {
						np.remove(uint32(nd))
					}
				}
			}
		}
	}
}

// replaceParts puts np in u's parts where in's first was and drops in's,
// with u.mu held. It returns how many of in were flushed buffers, which
// no longer wait to be written.
func replaceParts(u *user, in []*part, np *part) (flushed int) {
	keep := u.parts[:0:0]
	for _, p := range u.parts {
		if p == in[0] {
			keep = append(keep, np)
		}
		if !slices.Contains(in, p) {
			keep = append(keep, p)
		}
	}
	u.parts = keep
	u.dirty = true
	for _, p := range in {
		if p.buf != nil {
			flushed++
		}
	}
	if flushed > 0 {
		u.frozen -= flushed
		u.flushed.Broadcast()
	}
	return flushed
}

// retire writes u's manifest without the merged inputs in, closes their
// segments and, once the manifest no longer lists them, removes their
// files.
func (ix *Index) retire(u *user, in []*part) error {
	// The inputs are no longer u's either way. Their files stay while the
	// manifest on disk may still list them (its write failed), and are
	// removed at the next start if the next manifest does not.
	err := ix.writeManifest(u)
	for _, p := range in {
		if p.seg != nil {
			p.seg.close()
			if err == nil {
				os.Remove(filepath.Join(u.dir, segName(p.seg.seq)))
			}
		}
	}
	return err
}

// badPart is an error that names the damaged input of a merge.
type badPart struct {
	p   *part
	err error
}

func (e *badPart) Error() string { return e.err.Error() }
func (e *badPart) Unwrap() error { return e.err }

// mergeIn is one input of a merge walked in dictionary order: a
// segment's dictionary, or the terms of a frozen buffer (a flush that
// merges, see flushPartners).
type mergeIn struct {
	seg   *segment
	it    *dictIter
	memo  blockMemo
	buf   *buffer
	terms []string
	at    int
	term  string
	err   error
}

func newMergeIn(p *part) *mergeIn {
	if p.buf != nil {
		return &mergeIn{buf: p.buf, terms: p.buf.sortedTerms()}
	}
	// Both walks are done with a block once they open the next: the
	// dictionary's terms are copies, and each term's postings are read
	// (or copied) before the next term's.
	return &mergeIn{seg: p.seg, it: p.seg.dictFrom(0, &blockMemo{reuse: true}), memo: blockMemo{reuse: true}}
}

// next moves to the input's next term; false at the end or on an error.
func (m *mergeIn) next() bool {
	if m.buf != nil {
		if m.at == len(m.terms) {
			return false
		}
		m.term = m.terms[m.at]
		m.at++
		return true
	}
	if !m.it.next() {
		m.err = m.it.err
		return false
	}
	m.term = m.it.e.term
	return true
}

// postings returns the current term's doc stream and positions. A
// segment's doc stream is copied into docCopy, as reading the positions
// may replace the block it was read from.
func (m *mergeIn) postings(docBuf, posBuf, docCopy *[]byte) (docs, pos []byte, err error) {
	if m.buf != nil {
		bt := m.buf.terms[m.term]
		return bt.docs, bt.pos, nil
	}
	e := m.it.e
	db, err := m.seg.postings(e.off+e.posLen, e.docLen, docBuf, &m.memo)
	if err != nil {
		return nil, nil, err
	}
	*docCopy = append((*docCopy)[:0], db...)
	pb, err := m.seg.postings(e.off, e.posLen, posBuf, &m.memo)
	if err != nil {
		return nil, nil, err
	}
	return *docCopy, pb, nil
}

// writeMerged streams the merge: a k-way walk of the inputs'
// dictionaries, each term's postings renumbered and stripped of deleted
// documents. It returns, per input, old to new document numbers (-1:
// deleted).
func (ix *Index) writeMerged(u *user, seq uint64, path string, in []*part, dels [][]uint64) (*segment, [][]int32, error) {
	c, lenSums, remaps := mergedColumns(in, dels)
	w, err := newSegWriter(path+".tmp", ix.s, u.id, seq)
	if err != nil {
		return nil, nil, err
	}
	i, err := mergeStored(w, in, remaps)
	if err == nil {
		i, err = mergePostings(w, in, remaps)
	}
	if err != nil {
		w.abort()
		os.Remove(path + ".tmp")
		if i >= 0 && errors.Is(err, ErrCorrupt) {
			err = &badPart{p: in[i], err: err}
		}
		return nil, nil, err
	}
	seg, err := ix.finishSegment(w, u, seq, path, &c, lenSums)
	if err != nil {
		return nil, nil, err
	}
	return seg, remaps, nil
}

// mergedColumns lays out the documents of the merge's inputs that dels
// does not delete, in input order: their columns, their field lengths'
// sums, and for each input the new number of each of its documents (-1:
// deleted).
func mergedColumns(in []*part, dels [][]uint64) (c columns, lenSums [numFields]uint64, remaps [][]int32) {
	deleted := func(i int, d uint32) bool {
		w := int(d >> 6)
		return w < len(dels[i]) && dels[i][w]&(1<<(d&63)) != 0
	}
	remaps = make([][]int32, len(in))
	for i, p := range in {
		pc := p.cols()
		remaps[i] = make([]int32, pc.len())
		for d := range pc.len() {
			if deleted(i, uint32(d)) {
				remaps[i][d] = -1
				continue
			}
			remaps[i][d] = int32(c.len())
			c.copyID(pc, uint32(d))
			c.dates.add(pc.dates.at(uint32(d)))
			c.addNames(pc.kindAt(uint32(d)), pc.integAt(uint32(d)), pc.records[pc.recordAt(uint32(d))])
			c.lens = append(c.lens, pc.lens[d])
			for f, n := range pc.lens[d] {
				lenSums[f] += uint64(n)
			}
		}
	}
	return c, lenSums, remaps
}

// mergePostings writes to w the postings of every term of the inputs, in
// term order, each document renumbered by remaps; deleted documents are
// left out. On failure it returns the index of the input at fault (-1:
// none) with the error.
func mergePostings(w *segWriter, in []*part, remaps [][]int32) (int, error) {
	srcs := make([]*mergeIn, len(in))
	live := make([]bool, len(in))
	for i, p := range in {
		srcs[i] = newMergeIn(p)
		live[i] = srcs[i].next()
		if srcs[i].err != nil {
			return i, srcs[i].err
		}
	}
	var docs, docBuf, posBuf, docCopy []byte
	var it postingIter
	for {
		term := ""
		for i := range in {
			if live[i] && (term == "" || srcs[i].term < term) {
				term = srcs[i].term
			}
		}
		if term == "" {
			return -1, nil
		}
		docs = docs[:0]
		var df uint32
		var posLen uint64
		last := int32(-1)
		for i, src := range srcs {
			if !live[i] || src.term != term {
				continue
			}
			db, pb, err := src.postings(&docBuf, &posBuf, &docCopy)
			if err != nil {
				return i, err
			}
			it.reset(db, pb)
			for it.next() {
				var raw []byte
				if len(pb) > 0 {
					raw = it.entryPositions()
				}
				if it.err != nil {
					break
				}
				if int(it.doc) >= len(remaps[i]) {
					it.err = fmt.Errorf("%w: posting past the documents", ErrCorrupt)
					break
				}
				nd := remaps[i][it.doc]
				if nd < 0 {
					continue
				}
				delta := nd - last
				if last < 0 {
					delta = nd
				}
				docs = appendEntry(docs, uint32(delta), &it.tf)
				last = nd
				df++
				w.writePostings(raw)
				posLen += uint64(len(raw))
			}
			if it.err != nil {
				return i, it.err
			}
			live[i] = src.next()
			if src.err != nil {
				return i, src.err
			}
		}
		if df > 0 {
			w.writePostings(docs)
			w.endTerm(term, df, posLen)
		}
	}
}
