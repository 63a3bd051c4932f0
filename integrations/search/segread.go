package search

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// reader decodes a plaintext block; the first error sticks and every
// later read returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad varint", ErrCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad varint", ErrCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: length past the end", ErrCorrupt)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) string(limit uint64) string {
	n := r.uvarint()
	if n > limit {
		r.err = fmt.Errorf("%w: string too long", ErrCorrupt)
		return ""
	}
	return string(r.bytes(n))
}

// count reads a count of items each at least size bytes long, refusing
// one that the rest of the block cannot hold.
func (r *reader) count(size int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/size) {
		r.err = fmt.Errorf("%w: count past the end", ErrCorrupt)
		return 0
	}
	return int(n)
}

// segment is an open segment file. Everything but the postings and the
// dictionary blocks is in memory.
type segment struct {
	seq       uint64
	f         io.ReaderAt
	closer    io.Closer
	size      int64
	s         *sealer
	user      string
	key       int
	cache     *cache
	inflate   *inflaters
	offs      []int64 // file offset of each block
	kinds     []byte
	lens      []uint32
	post      []uint32 // block numbers of the postings blocks, in order
	postTotal uint64
	dict      []uint32 // block numbers of the dictionary blocks
	dictFirst []string
	dictBase  []uint64
	cols      columns
	lenSums   [numFields]uint64
	withF     [numFields]uint64 // documents with a non-empty field
}

// openSegmentFile opens and checks a segment file's footer and columns.
func openSegmentFile(path string, s *sealer, user string, seq uint64, c *cache) (*segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	seg, err := openSegment(f, st.Size(), s, user, seq, c)
	if err != nil {
		f.Close()
		return nil, err
	}
	seg.closer = f
	return seg, nil
}

func openSegment(f io.ReaderAt, size int64, s *sealer, user string, seq uint64, c *cache) (*segment, error) {
	seg := &segment{seq: seq, f: f, size: size, s: s, user: user, cache: c, inflate: &inflaters{}}
	if c != nil {
		seg.inflate = &c.inflate
	}
	const trailer = int64(4 + len(segEnd))
	if size < int64(len(segMagic)+sealedSize(0))+trailer {
		return nil, fmt.Errorf("%w: segment too short", ErrCorrupt)
	}
	var tail [trailer]byte
	if _, err := f.ReadAt(tail[:], size-trailer); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	var head [len(segMagic)]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if string(tail[4:]) != segEnd || string(head[:]) != segMagic {
		return nil, fmt.Errorf("%w: not a segment", ErrCorrupt)
	}
	flen := int64(binary.BigEndian.Uint32(tail[:4]))
	foff := size - trailer - flen - 4
	if flen < int64(sealedSize(0)-4) || foff < int64(len(segMagic)) {
		return nil, fmt.Errorf("%w: bad footer length", ErrCorrupt)
	}
	sealed := make([]byte, flen+4)
	if _, err := f.ReadAt(sealed, foff); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if int64(binary.BigEndian.Uint32(sealed)) != flen {
		return nil, fmt.Errorf("%w: footer lengths differ", ErrCorrupt)
	}
	sealed = sealed[4:]
	foot, key, err := s.open(nil, sealed, blockID{user: user, seg: seq, block: footerBlock, kind: kindFooter}, -1)
	if err != nil {
		return nil, err
	}
	seg.key = key
	r := &reader{b: foot}
	if string(r.bytes(2)) != "F1" {
		return nil, fmt.Errorf("%w: unknown footer", ErrCorrupt)
	}
	nDocs := r.uvarint()
	for f := range seg.lenSums {
		seg.lenSums[f] = r.uvarint()
	}
	seg.postTotal = r.uvarint()
	nBlocks := r.count(2)
	off := int64(len(segMagic))
	columnsBlock := -1
	for i := range nBlocks {
		kind := r.bytes(1)
		n := r.uvarint()
		if r.err != nil {
			return nil, r.err
		}
		if n < uint64(sealedSize(0)) || n > maxBlock || int64(n) > foff-off {
			return nil, fmt.Errorf("%w: bad block length", ErrCorrupt)
		}
		seg.offs = append(seg.offs, off)
		seg.lens = append(seg.lens, uint32(n))
		seg.kinds = append(seg.kinds, kind[0])
		off += int64(n)
		switch kind[0] {
		case kindPostings:
			seg.post = append(seg.post, uint32(i))
		case kindDict:
			seg.dict = append(seg.dict, uint32(i))
		case kindColumns:
			columnsBlock = i
		default:
			return nil, fmt.Errorf("%w: unknown block kind", ErrCorrupt)
		}
	}
	if off != foff || columnsBlock < 0 {
		return nil, fmt.Errorf("%w: blocks do not fill the segment", ErrCorrupt)
	}
	if uint64(len(seg.post)) != (seg.postTotal+postBlock-1)/postBlock {
		return nil, fmt.Errorf("%w: postings blocks do not match their size", ErrCorrupt)
	}
	nDict := r.count(2)
	if nDict != len(seg.dict) {
		return nil, fmt.Errorf("%w: dictionary index does not match", ErrCorrupt)
	}
	for range nDict {
		base := r.uvarint()
		t := r.string(maxTerm)
		if r.err == nil && (base > seg.postTotal || len(seg.dictFirst) > 0 && t <= seg.dictFirst[len(seg.dictFirst)-1]) {
			r.err = fmt.Errorf("%w: dictionary index out of order", ErrCorrupt)
		}
		seg.dictBase = append(seg.dictBase, base)
		seg.dictFirst = append(seg.dictFirst, t)
	}
	if r.err != nil {
		return nil, r.err
	}
	cb, err := seg.block(uint32(columnsBlock), &blockMemo{})
	if err != nil {
		return nil, err
	}
	if seg.cols, err = decodeColumns(cb); err != nil {
		return nil, err
	}
	for _, l := range seg.cols.lens {
		for f, n := range l {
			if n > 0 {
				seg.withF[f]++
			}
		}
	}
	if uint64(seg.cols.len()) != nDocs {
		return nil, fmt.Errorf("%w: document count does not match", ErrCorrupt)
	}
	return seg, nil
}

func (s *segment) close() {
	if s.cache != nil {
		s.cache.drop(s)
	}
	if s.closer != nil {
		s.closer.Close()
	}
}

// blockMemo keeps the last block read by a sequential reader (a merge),
// which bypasses the cache so as not to evict what queries use.
type blockMemo struct {
	n    uint32
	data []byte
}

// block returns block n opened: through the cache when memo is nil, else
// through the memo.
func (s *segment) block(n uint32, memo *blockMemo) ([]byte, error) {
	k := cacheKey{seg: s, block: n}
	if memo != nil && memo.data != nil && memo.n == n {
		return memo.data, nil
	}
	if memo == nil && s.cache != nil {
		if b, ok := s.cache.get(k); ok {
			return b, nil
		}
	}
	if int(n) >= len(s.offs) {
		return nil, fmt.Errorf("%w: no block %d", ErrCorrupt, n)
	}
	raw := make([]byte, s.lens[n])
	if _, err := s.f.ReadAt(raw, s.offs[n]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if int(binary.BigEndian.Uint32(raw)) != len(raw)-4 {
		return nil, fmt.Errorf("%w: block %d length", ErrCorrupt, n)
	}
	kind := s.kinds[n]
	plain, _, err := s.s.open(raw[4+12:4+12], raw[4:], blockID{user: s.user, seg: s.seq, block: n, kind: kind}, s.key)
	if err != nil {
		return nil, err
	}
	if kind == kindPostings || kind == kindDict {
		if plain, err = s.inflate.decompress(plain); err != nil {
			return nil, err
		}
	}
	if kind == kindPostings {
		i, _ := slices.BinarySearch(s.post, n)
		want := uint64(postBlock)
		if i == len(s.post)-1 {
			want = s.postTotal - uint64(i)*postBlock
		}
		if uint64(len(plain)) != want {
			return nil, fmt.Errorf("%w: postings block %d size", ErrCorrupt, n)
		}
	}
	if memo != nil {
		memo.n, memo.data = n, plain
	} else if s.cache != nil {
		s.cache.put(k, plain)
	}
	return plain, nil
}

// postings returns n bytes of the postings stream at off: a slice of one
// cached block when they lie in one, else a copy in *buf.
func (s *segment) postings(off, n uint64, buf *[]byte, memo *blockMemo) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if off > s.postTotal || n > s.postTotal-off {
		return nil, fmt.Errorf("%w: postings past the end", ErrCorrupt)
	}
	first, last := off/postBlock, (off+n-1)/postBlock
	if first == last {
		b, err := s.block(s.post[first], memo)
		if err != nil {
			return nil, err
		}
		o := off - first*postBlock
		return b[o : o+n], nil
	}
	out := (*buf)[:0]
	for i := first; i <= last; i++ {
		b, err := s.block(s.post[i], memo)
		if err != nil {
			return nil, err
		}
		lo, hi := uint64(0), uint64(len(b))
		if i == first {
			lo = off - first*postBlock
		}
		if i == last {
			hi = off + n - last*postBlock
		}
		out = append(out, b[lo:hi]...)
	}
	*buf = out
	return out, nil
}

// dictIter walks dictionary entries in order from one dictionary block on.
type dictIter struct {
	s    *segment
	blk  int
	r    reader
	off  uint64
	prev []byte
	memo *blockMemo
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
	b, err := it.s.block(it.s.dict[it.blk], it.memo)
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
	term := append(it.prev[:shared:shared], suffix...)
	if len(it.prev) > 0 && bytes.Compare(term, it.prev) <= 0 {
		it.err = fmt.Errorf("%w: dictionary out of order", ErrCorrupt)
		return false
	}
	it.prev = term
	it.e = dictEntry{df: uint32(df), off: it.off, posLen: posLen, docLen: docLen}
	if !it.lazy {
		it.e.term = string(term)
	}
	it.off += posLen + docLen
	return true
}

// seek returns an iterator positioned before the first entry that could be
// at or after term.
// seek returns a lazy iterator (see dictIter.lazy), through the cache.
func (s *segment) seek(term string) *dictIter {
	i, _ := slices.BinarySearch(s.dictFirst, term)
	if i == len(s.dictFirst) || s.dictFirst[i] != term {
		i = max(i-1, 0)
	}
	it := &dictIter{s: s, blk: i - 1, lazy: true}
	it.load()
	return it
}

// lookup finds one term.
func (s *segment) lookup(term string) (dictEntry, bool, error) {
	it := s.seek(term)
	for it.next() {
		switch c := strings.Compare(string(it.prev), term); {
		case c == 0:
			it.e.term = term
			return it.e, true, nil
		case c > 0:
			return dictEntry{}, false, nil
		}
	}
	return dictEntry{}, false, it.err
}

// prefix calls fn for each term starting with p, in order, until fn
// returns false.
func (s *segment) prefix(p string, fn func(dictEntry) bool) error {
	it := s.seek(p)
	for it.next() {
		if string(it.prev) < p {
			continue
		}
		if !strings.HasPrefix(string(it.prev), p) {
			return nil
		}
		it.e.term = string(it.prev)
		if !fn(it.e) {
			return nil
		}
	}
	return it.err
}
