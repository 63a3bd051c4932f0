package search

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Stored fields are what a search answers with besides the columns: a
// document's title, its sender and the first StoredTextBytes of its text,
// the source of its snippet. They let the search route answer from the
// index alone, without opening an item's metadata or content file
// (docs/search.md, "Answers from the index").
//
// A segment keeps them in stored blocks, sealed and deflated like the
// postings, each holding the records of consecutive documents; the
// footer ("F2") lists each stored block's first document. A record is a
// flag (0: the document has no stored fields, as in a segment written
// before they existed and merged since; 1: it has; 2: it has, and a
// thread) and, with 1 or 2, the title, the sender and the text's start,
// and with 2 the thread, each uvarint(length) and bytes. A segment with
// footer "F1" has none at all.

// StoredTextBytes bounds the start of the text a document keeps for its
// snippet: enough for the snippet of most mails, whose matches lie near
// the top, and small next to the text itself.
const StoredTextBytes = 768

// storedBlock is about the plain size of a stored block: a hit opens one
// block, so it stays small.
const storedBlock = 16 << 10

// kindStored is the block kind of stored fields.
const kindStored = 's'

// Stored is what a hit's document keeps for its answer.
type Stored struct {
	Title string
	From  string
	// Text is the start of the text, at most StoredTextBytes, cut at a
	// character boundary.
	Text string
	// Thread is Doc.Thread: what collapse=thread groups by.
	Thread string
}

// storedPrefix returns the start of text kept for its snippet.
func storedPrefix(text string) string {
	if len(text) <= StoredTextBytes {
		return text
	}
	n := StoredTextBytes
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}

// appendStored appends the stored record of d.
func appendStored(b []byte, d *Doc) []byte {
	flag := byte(1)
	if d.Thread != "" {
		flag = 2
	}
	b = append(b, flag)
	b = appendString(b, d.Title)
	b = appendString(b, d.From)
	b = appendString(b, storedPrefix(d.Text))
	if flag == 2 {
		b = appendString(b, d.Thread)
	}
	return b
}

// noStored is the record of a document without stored fields.
var noStored = []byte{0}

// readStored reads one record from r; ok is false for a document
// without stored fields.
func readStored(r *reader) (st Stored, ok bool) {
	flag := r.uvarint()
	switch flag {
	case 0:
		return Stored{}, false
	case 1, 2:
	default:
		r.err = fmt.Errorf("%w: stored record flag", ErrCorrupt)
		return Stored{}, false
	}
	st.Title = r.string(maxStoredField)
	st.From = r.string(maxStoredField)
	st.Text = r.string(maxStoredField)
	if flag == 2 {
		st.Thread = r.string(maxStoredField)
	}
	return st, r.err == nil
}

// maxStoredField bounds one decoded stored field.
const maxStoredField = 1 << 20

// skipStored returns the bytes of the next record of b, and the rest.
// It copies nothing: a hit walks past the records before its own in the
// block, and copying each field out as a string was a tenth of a
// search's time (BenchmarkAnswers).
func skipStored(b []byte) (rec, rest []byte, err error) {
	r := &reader{b: b}
	if flag := r.uvarint(); flag != 0 {
		n := 3
		if flag == 2 {
			n = 4
		}
		for range n {
			r.skipString(maxStoredField)
		}
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	n := len(b) - len(r.b)
	return b[:n], b[n:], nil
}

// addStored appends document's stored record to the segment being
// written; documents come in order, before any postings are written.
func (w *segWriter) addStored(rec []byte) {
	if w.f1 {
		return
	}
	if len(w.stored) == 0 {
		w.storedFirst = append(w.storedFirst, w.storedDocs)
	}
	w.stored = append(w.stored, rec...)
	w.storedDocs++
	if len(w.stored) >= storedBlock {
		w.writeBlock(kindStored, w.stored)
		w.stored = w.stored[:0]
	}
}

// endStored writes the last stored block.
func (w *segWriter) endStored() {
	if len(w.stored) > 0 {
		w.writeBlock(kindStored, w.stored)
		w.stored = w.stored[:0]
	}
}

// storedRecord returns the bytes of document d's stored record in the
// segment (nil when it has no stored blocks), through the cache, pinned
// in p, or through memo when there is one (a merge).
func (s *segment) storedRecord(d uint32, p *pins, memo *blockMemo) ([]byte, error) {
	if len(s.storedBlocks) == 0 {
		return nil, nil
	}
	i, found := slices.BinarySearch(s.storedFirst, d)
	if !found {
		i--
	}
	if i < 0 {
		return nil, fmt.Errorf("%w: no stored block for document %d", ErrCorrupt, d)
	}
	var b []byte
	var err error
	if memo != nil || s.cache == nil {
		b, err = s.block(s.storedBlocks[i], memo)
	} else {
		b, err = s.cachedBlock(s.storedBlocks[i], p)
	}
	if err != nil {
		return nil, err
	}
	for at := s.storedFirst[i]; ; at++ {
		rec, rest, err := skipStored(b)
		if err != nil {
			return nil, err
		}
		if len(rec) == 0 {
			return nil, fmt.Errorf("%w: stored block ends before document %d", ErrCorrupt, d)
		}
		if at == d {
			return rec, nil
		}
		b = rest
	}
}

// readStoredIndex reads the footer's list of each stored block's first
// document, which must match the stored blocks.
func (s *segment) readStoredIndex(r *reader, nDocs uint64) error {
	n := r.count(1)
	if r.err == nil && n != len(s.storedBlocks) {
		return fmt.Errorf("%w: stored index does not match", ErrCorrupt)
	}
	for range n {
		first := r.uvarint()
		if r.err == nil && (first >= nDocs || len(s.storedFirst) > 0 && uint32(first) <= s.storedFirst[len(s.storedFirst)-1] || len(s.storedFirst) == 0 && first != 0) {
			r.err = fmt.Errorf("%w: stored index out of order", ErrCorrupt)
		}
		s.storedFirst = append(s.storedFirst, uint32(first))
	}
	return r.err
}

// appendStoredIndex appends the footer's stored index.
func (w *segWriter) appendStoredIndex(foot []byte) []byte {
	foot = binary.AppendUvarint(foot, uint64(len(w.storedFirst)))
	for _, f := range w.storedFirst {
		foot = binary.AppendUvarint(foot, uint64(f))
	}
	return foot
}

// stored returns document d of part p's stored fields; ok is false when
// it has none (a segment written before stored fields existed).
func (p *part) stored(d uint32, pn *pins) (Stored, bool, error) {
	var rec []byte
	if p.buf != nil {
		if int(d) < len(p.buf.stored) {
			rec = p.buf.stored[d]
		}
	} else {
		var err error
		if rec, err = p.seg.storedRecord(d, pn, nil); err != nil {
			return Stored{}, false, err
		}
	}
	if rec == nil {
		return Stored{}, false, nil
	}
	r := &reader{b: rec}
	st, ok := readStored(r)
	return st, ok, r.err
}

// mergeStored writes to w the stored records of the inputs' documents
// that remaps keeps, in their new order. On failure it returns the index
// of the input at fault with the error.
func mergeStored(w *segWriter, in []*part, remaps [][]int32) (int, error) {
	// Each record is copied (addStored) before the next block is
	// opened: the blocks are opened in the arrays of the one before.
	memo := &blockMemo{reuse: true}
	for i, p := range in {
		memo.data = nil // the last input's block
		for d, nd := range remaps[i] {
			if nd < 0 {
				continue
			}
			var rec []byte
			if p.buf != nil {
				rec = p.buf.stored[d]
			} else {
				var err error
				if rec, err = p.seg.storedRecord(uint32(d), nil, memo); err != nil {
					return i, err
				}
			}
			if rec == nil {
				rec = noStored
			}
			w.addStored(rec)
		}
	}
	return -1, nil
}
