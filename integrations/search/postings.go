package search

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// A term's postings are two byte streams, the same in the in-memory buffer
// and in a segment.
//
// The doc stream has one entry per document containing the term, in
// increasing document number; delta is the document number minus the
// previous entry's (the first entry's is the document number itself).
// The common entry, one occurrence in one field, is one uvarint:
// delta<<3 | field<<1 | 1. Any other is uvarint(delta<<1), then
// uvarint(h), where the low four bits of h are the fields the term occurs
// in; with one field, h>>4 is its frequency minus one; with several, h>>4
// is zero and a uvarint frequency per field follows, in field order.
//
// The position stream has, per entry and per field in order, the term's
// positions in that field, delta-coded (the first one absolute). Words
// (the unstemmed forms kept for prefix queries) have no position stream.

// wordMark starts the dictionary key of an unstemmed word, so words sort
// apart from the stemmed terms and are never taken for one.
const wordMark = "\x01"

// refMark starts the dictionary key of a link between the items of a
// conversation (Doc.Refs). The analyzer never makes a term with a control
// character, so a query's words, prefixes and fuzzy terms never reach
// one, and "did you mean" never offers one.
const refMark = "\x02"

// RefTerm is the term under which the documents linked by ref are found:
// a query Term{Field: FieldTitle, Text: RefTerm(ref)} matches them.
func RefTerm(ref string) string { return refMark + ref }

// nameMark starts the dictionary key of a word of a file's or an
// attachment's name (Doc.Names), which filename: searches; like refMark,
// no typed word reaches one.
const nameMark = "\x03"

// folderMark starts the dictionary key of a folder an item lies in
// (Doc.Folders), which in: searches.
const folderMark = "\x05"

// UseValue is the Doc.Folders value of a mailbox's special use (inbox,
// sent, drafts, archive, junk, trash): marked, so that a folder named
// "sent" by the person and the server's sent mail stay apart.
func UseValue(use string) string {
	if use == "" {
		return ""
	}
	return "\x00" + use
}

// attachedTerm is the term of every document with an attachment
// (Doc.Attached), which has:attachment searches.
const attachedTerm = "\x04attachment"

// maxTerm bounds a term read from a segment, in bytes.
const maxTerm = 1024

// appendEntry appends one doc-stream entry.
func appendEntry(dst []byte, delta uint32, tf *[numFields]uint32) []byte {
	var mask uint64
	for f, n := range tf {
		if n > 0 {
			mask |= 1 << f
		}
	}
	if bits.OnesCount64(mask) == 1 {
		f := bits.TrailingZeros64(mask)
		if tf[f] == 1 {
			return binary.AppendUvarint(dst, uint64(delta)<<3|uint64(f)<<1|1)
		}
		dst = binary.AppendUvarint(dst, uint64(delta)<<1)
		return binary.AppendUvarint(dst, mask|uint64(tf[f]-1)<<4)
	}
	dst = binary.AppendUvarint(dst, uint64(delta)<<1)
	dst = binary.AppendUvarint(dst, mask)
	for _, n := range tf {
		if n > 0 {
			dst = binary.AppendUvarint(dst, uint64(n))
		}
	}
	return dst
}

// appendPositions appends one field's positions of one entry.
func appendPositions(dst []byte, pos []uint32) []byte {
	prev := uint32(0)
	for _, p := range pos {
		dst = binary.AppendUvarint(dst, uint64(p-prev))
		prev = p
	}
	return dst
}

// postingIter walks a term's doc stream, and on demand its positions.
// Hostile bytes end the walk with err set; they never panic.
type postingIter struct {
	docs, pos []byte
	di, pi    int
	doc       uint32
	tf        [numFields]uint32
	started   bool
	skip      int // positions of earlier entries not read yet
	err       error
}

func (it *postingIter) reset(docs, pos []byte) {
	*it = postingIter{docs: docs, pos: pos}
}

func (it *postingIter) uvarint() uint64 {
	v, n := binary.Uvarint(it.docs[it.di:])
	if n <= 0 {
		it.err = fmt.Errorf("%w: bad posting", ErrCorrupt)
		it.di = len(it.docs)
		return 0
	}
	it.di += n
	return v
}

// next moves to the next entry; false at the end or on error.
func (it *postingIter) next() bool {
	if it.di >= len(it.docs) || it.err != nil {
		return false
	}
	if len(it.pos) > 0 { // positions are read on demand: count what to skip
		for _, n := range it.tf {
			it.skip += int(n)
		}
	}
	var v uint64
	if c := it.docs[it.di]; c < 0x80 { // the common one-byte entry
		v = uint64(c)
		it.di++
	} else {
		v = it.uvarint()
	}
	d := v >> 1
	if v&1 == 1 {
		d = v >> 3
	}
	if it.started && d == 0 || d > 1<<31 || uint64(it.doc)+d > 1<<31 {
		it.err = fmt.Errorf("%w: bad posting delta", ErrCorrupt)
		return false
	}
	it.doc += uint32(d)
	it.started = true
	it.tf = [numFields]uint32{}
	if v&1 == 1 {
		it.tf[v>>1&3] = 1
		return it.err == nil
	}
	h := it.uvarint()
	mask := h & 15
	if mask == 0 {
		it.err = fmt.Errorf("%w: posting without field", ErrCorrupt)
		return false
	}
	if bits.OnesCount64(mask) == 1 {
		it.tf[bits.TrailingZeros64(mask)] = uint32(min(h>>4, 1<<30)) + 1
	} else {
		for f := range numFields {
			if mask&(1<<f) != 0 {
				it.tf[f] = uint32(min(it.uvarint(), 1<<30))
			}
		}
	}
	return it.err == nil
}

// nextOne is next with a fast way through the common entry of a doc
// stream read without positions (one occurrence in one field, in one
// byte): it returns that field, leaving tf as it was, which the caller
// must not read then. For any other entry it returns -1 and next's
// answer, tf set. A long Or's scoring loops spend most of their time
// here, and the common entry is most of a common word's postings.
func (it *postingIter) nextOne() (field int, ok bool) {
	if it.started && it.err == nil && it.di < len(it.docs) && len(it.pos) == 0 {
		if c := it.docs[it.di]; c < 0x80 && c&1 == 1 && c >= 8 && it.doc < 1<<31-15 {
			it.di++
			it.doc += uint32(c >> 3)
			return int(c >> 1 & 3), true
		}
	}
	return -1, it.next()
}

// inField reports whether the entry nextOne read, g its one field or -1,
// is in field f (any, for FieldAny).
func (it *postingIter) inField(g int, f Field) bool {
	return f == FieldAny || g >= 0 && Field(g) == f || g < 0 && it.tf[f] != 0
}

// advance moves to the first entry at or after doc.
func (it *postingIter) advance(doc uint32) bool {
	for !it.started || it.doc < doc {
		if !it.next() {
			return false
		}
	}
	return true
}

// positions appends the current entry's positions in field f to dst.
func (it *postingIter) positions(dst []uint32, f Field) []uint32 {
	for ; it.skip > 0; it.skip-- {
		if !it.skipVarint() {
			return dst
		}
	}
	// it.skip is now zero; the current entry's positions follow in field
	// order. Reading them leaves the stream mid-entry, so remember how
	// many remain in order to rewind to a clean state for the next call.
	save := it.pi
	for g := range numFields {
		n := int(it.tf[g])
		if Field(g) != f {
			for range n {
				if !it.skipVarint() {
					it.pi = save
					return dst
				}
			}
			continue
		}
		p := uint32(0)
		for range n {
			v, k := binary.Uvarint(it.pos[it.pi:])
			if k <= 0 {
				it.err = fmt.Errorf("%w: bad position", ErrCorrupt)
				it.pi = save
				return dst
			}
			it.pi += k
			p += uint32(v)
			dst = append(dst, p)
		}
	}
	it.pi = save
	return dst
}

func (it *postingIter) skipVarint() bool {
	for it.pi < len(it.pos) {
		c := it.pos[it.pi]
		it.pi++
		if c < 0x80 {
			return true
		}
	}
	it.err = fmt.Errorf("%w: positions end early", ErrCorrupt)
	return false
}

// entryPositions returns the raw bytes of the current entry's positions,
// every field, and moves past them. A merge calls it for every entry.
func (it *postingIter) entryPositions() []byte {
	for ; it.skip > 0; it.skip-- {
		if !it.skipVarint() {
			return nil
		}
	}
	start := it.pi
	n := 0
	for _, k := range it.tf {
		n += int(k)
	}
	for range n {
		if !it.skipVarint() {
			return nil
		}
	}
	it.skip = -n // next adds this entry's count back to zero
	return it.pos[start:it.pi]
}
