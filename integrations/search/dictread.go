package search

import (
	"bytes"
	"fmt"
	"slices"
)

// Reading a segment's dictionary: its blocks of prefix-compressed terms,
// walked in order from a block found by the first terms kept in memory.

// dictIter walks dictionary entries in order from one dictionary block on.
type dictIter struct {
	s    *segment
	blk  int
	r    reader
	off  uint64
	prev []byte
	memo *blockMemo
	pin  pins // the block read through the cache, when memo is nil
	lazy bool // e.term is left empty: lookups compare prev
	e    dictEntry
	err  error
}

func (s *segment) dictFrom(blk int, memo *blockMemo) *dictIter {
	it := &dictIter{s: s, blk: blk - 1, memo: memo}
	it.load()
	return it
}

func (it *dictIter) load() bool {
	it.blk++
	if it.blk >= len(it.s.dict) {
		return false
	}
	// The block before is done with: prev is a copy of its last term.
	it.pin.release()
	var b []byte
	var err error
	if it.memo == nil && it.s.cache != nil {
		b, err = it.s.cachedBlock(it.s.dict[it.blk], &it.pin)
	} else {
		b, err = it.s.block(it.s.dict[it.blk], it.memo)
	}
	if err != nil {
		it.err = err
		return false
	}
	it.r = reader{b: b}
	it.off = it.s.dictBase[it.blk]
	it.prev = it.prev[:0]
	return true
}

// next decodes the next entry into it.e; false at the end or on error.
func (it *dictIter) next() bool {
	if it.err != nil || it.blk >= len(it.s.dict) {
		return false
	}
	if len(it.r.b) == 0 && !it.load() {
		return false
	}
	r := &it.r
	shared := r.uvarint()
	suffix := r.bytes(r.uvarint())
	df := r.uvarint()
	posLen, docLen := r.uvarint(), r.uvarint()
	switch {
	case r.err != nil:
		it.err = r.err
	case shared > uint64(len(it.prev)) || shared+uint64(len(suffix)) > maxTerm:
		it.err = fmt.Errorf("%w: bad dictionary entry", ErrCorrupt)
	case df == 0 || df > uint64(it.s.cols.len()) || posLen > it.s.postTotal || docLen > it.s.postTotal || it.off+posLen+docLen > it.s.postTotal:
		it.err = fmt.Errorf("%w: dictionary entry out of range", ErrCorrupt)
	}
	if it.err != nil {
		return false
	}
	// The term shares its first bytes with the one before, so it follows
	// it exactly when its suffix follows the rest of that one; prev is
	// then rewritten in place, which a walk of a block does not allocate.
	if len(it.prev) > 0 && bytes.Compare(suffix, it.prev[shared:]) <= 0 {
		it.err = fmt.Errorf("%w: dictionary out of order", ErrCorrupt)
		return false
	}
	it.prev = append(it.prev[:shared], suffix...)
	it.e = dictEntry{df: uint32(df), off: it.off, posLen: posLen, docLen: docLen}
	if !it.lazy {
		it.e.term = string(it.prev)
	}
	it.off += posLen + docLen
	return true
}

// seek returns a lazy iterator (see dictIter.lazy), through the cache,
// positioned before the first entry that could be at or after term.
func (s *segment) seek(term string) dictIter {
	i, _ := slices.BinarySearch(s.dictFirst, term)
	if i == len(s.dictFirst) || s.dictFirst[i] != term {
		i = max(i-1, 0)
	}
	it := dictIter{s: s, blk: i - 1, lazy: true}
	it.load()
	return it
}

// lookup finds one term, through the segment's memo of lookups (see
// lookupMemo) when it has one.
func (s *segment) lookup(term string) (dictEntry, bool, error) {
	if s.memo == nil {
		return s.walkLookup(term)
	}
	if e, found, ok := s.memo.get(term); ok {
		return e, found, nil
	}
	e, found, err := s.walkLookup(term)
	if err == nil {
		s.memo.put(term, e, found)
	}
	return e, found, err
}

// walkLookup finds one term in its dictionary block. It compares
// string(it.prev), which the compiler does without a copy, as prefix
// does.
func (s *segment) walkLookup(term string) (dictEntry, bool, error) {
	it := s.seek(term)
	defer it.pin.release()
	for it.next() {
		switch {
		case string(it.prev) == term:
			it.e.term = term
			return it.e, true, nil
		case string(it.prev) > term:
			return dictEntry{}, false, nil
		}
	}
	return dictEntry{}, false, it.err
}

// prefix calls fn for each term starting with p, in order, until fn
// returns false.
func (s *segment) prefix(p string, fn func(dictEntry) bool) error {
	it := s.seek(p)
	defer it.pin.release()
	for it.next() {
		if string(it.prev) < p {
			continue
		}
		if len(it.prev) < len(p) || string(it.prev[:len(p)]) != p {
			return nil
		}
		it.e.term = string(it.prev)
		if !fn(it.e) {
			return nil
		}
	}
	return it.err
}
