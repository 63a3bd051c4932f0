package search

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// A segment file is immutable:
//
//	"SRCHSEG1"
//	block*        each uint32(len) then nonce and ciphertext (AES-256-GCM)
//	footer        a sealed block
//	uint32(len of the footer block) "SRCHEND1"
//
// Blocks are numbered in file order; the footer has number footerBlock.
// The postings stream (see postings.go) is cut into postBlock-byte blocks;
// the dictionary into blocks of about dictBlock bytes of entries; one
// columns block holds the per-document values. The footer lists every
// block's length and kind, and the first term of each dictionary block:
// that sparse index stays in memory, everything else is read through the
// cache when a query needs it.
const (
	segMagic    = "SRCHSEG1"
	segEnd      = "SRCHEND1"
	postBlock   = 64 << 10
	dictBlock   = 4 << 10
	footerBlock = 1<<32 - 1
)

// dictEntry locates one term's postings in the postings stream: positions
// at off, then the doc stream.
type dictEntry struct {
	term   string
	df     uint32
	off    uint64
	posLen uint64
	docLen uint64
}

// segWriter writes a segment file front to back, in large sequential
// writes.
type segWriter struct {
	f         *os.File
	bw        *bufio.Writer
	s         *sealer
	user      string
	seq       uint64
	lens      []uint32
	kinds     []byte
	post      []byte
	postTotal uint64
	termStart uint64
	dict      []byte
	prevTerm  string
	dictFirst []string
	dictBase  []uint64
	sealBuf   []byte
	comp      compressor
	written   int64
	plain     int64 // block bytes before compression and sealing
	err       error
}

func newSegWriter(path string, s *sealer, user string, seq uint64) (*segWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	w := &segWriter{f: f, bw: bufio.NewWriterSize(f, 256<<10), s: s, user: user, seq: seq}
	w.write([]byte(segMagic))
	return w, nil
}

func (w *segWriter) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(b)
	w.written += int64(n)
	w.err = err
}

func (w *segWriter) writeBlock(kind byte, plain []byte) {
	id := blockID{user: w.user, seg: w.seq, block: uint32(len(w.lens)), kind: kind}
	if kind == kindFooter {
		id.block = footerBlock
	}
	w.plain += int64(len(plain))
	if kind == kindPostings || kind == kindDict {
		plain = w.comp.compress(plain)
	}
	w.sealBuf = binary.BigEndian.AppendUint32(w.sealBuf[:0], 0)
	w.sealBuf = w.s.seal(w.sealBuf, plain, id)
	binary.BigEndian.PutUint32(w.sealBuf, uint32(len(w.sealBuf)-4))
	w.write(w.sealBuf)
	if kind != kindFooter {
		w.lens = append(w.lens, uint32(len(w.sealBuf)))
		w.kinds = append(w.kinds, kind)
	}
}

// writePostings appends bytes of the current term's postings: all its
// positions first, then its doc stream.
func (w *segWriter) writePostings(b []byte) {
	for len(b) > 0 {
		n := min(len(b), postBlock-len(w.post))
		w.post = append(w.post, b[:n]...)
		b = b[n:]
		w.postTotal += uint64(n)
		if len(w.post) == postBlock {
			w.writeBlock(kindPostings, w.post)
			w.post = w.post[:0]
		}
	}
}

// endTerm adds the dictionary entry of the term whose postings were just
// written. Terms come in strictly increasing order.
func (w *segWriter) endTerm(term string, df uint32, posLen uint64) {
	docLen := w.postTotal - w.termStart - posLen
	if len(w.dict) == 0 {
		w.dictFirst = append(w.dictFirst, term)
		w.dictBase = append(w.dictBase, w.termStart)
		w.prevTerm = ""
	}
	shared := 0
	for shared < len(term) && shared < len(w.prevTerm) && term[shared] == w.prevTerm[shared] {
		shared++
	}
	w.dict = binary.AppendUvarint(w.dict, uint64(shared))
	w.dict = binary.AppendUvarint(w.dict, uint64(len(term)-shared))
	w.dict = append(w.dict, term[shared:]...)
	w.dict = binary.AppendUvarint(w.dict, uint64(df))
	w.dict = binary.AppendUvarint(w.dict, posLen)
	w.dict = binary.AppendUvarint(w.dict, docLen)
	w.prevTerm = term
	w.termStart = w.postTotal
	if len(w.dict) >= dictBlock {
		w.writeBlock(kindDict, w.dict)
		w.dict = w.dict[:0]
	}
}

// finish writes the last blocks, the columns, the footer, syncs and closes
// the file. It returns the file's size.
func (w *segWriter) finish(c *columns, lenSums [numFields]uint64) (int64, error) {
	if len(w.post) > 0 {
		w.writeBlock(kindPostings, w.post)
	}
	if len(w.dict) > 0 {
		w.writeBlock(kindDict, w.dict)
	}
	w.writeBlock(kindColumns, encodeColumns(c))
	foot := []byte("F1")
	foot = binary.AppendUvarint(foot, uint64(c.len()))
	for _, n := range lenSums {
		foot = binary.AppendUvarint(foot, n)
	}
	foot = binary.AppendUvarint(foot, w.postTotal)
	foot = binary.AppendUvarint(foot, uint64(len(w.lens)))
	for i, n := range w.lens {
		foot = append(foot, w.kinds[i])
		foot = binary.AppendUvarint(foot, uint64(n))
	}
	foot = binary.AppendUvarint(foot, uint64(len(w.dictFirst)))
	for i, t := range w.dictFirst {
		foot = binary.AppendUvarint(foot, w.dictBase[i])
		foot = binary.AppendUvarint(foot, uint64(len(t)))
		foot = append(foot, t...)
	}
	w.writeBlock(kindFooter, foot)
	w.write(binary.BigEndian.AppendUint32(nil, uint32(len(w.sealBuf)-4)))
	w.write([]byte(segEnd))
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	if w.err == nil {
		w.err = w.f.Sync()
	}
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	return w.written, w.err
}

// abort gives up on the file; the caller removes it.
func (w *segWriter) abort() { w.f.Close() }

func encodeColumns(c *columns) []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(c.len()))
	for _, t := range [][]string{c.kinds, c.integs, c.records} {
		b = binary.AppendUvarint(b, uint64(len(t)))
		for _, s := range t {
			b = appendString(b, s)
		}
	}
	for i := range c.ids {
		b = appendID(b, c.ids[i])
		b = binary.AppendVarint(b, c.dates[i])
		b = binary.AppendUvarint(b, uint64(c.kind[i]))
		b = binary.AppendUvarint(b, uint64(c.integ[i]))
		b = binary.AppendUvarint(b, uint64(c.record[i]))
		for _, n := range c.lens[i] {
			b = binary.AppendUvarint(b, uint64(n))
		}
	}
	return b
}

// appendID appends an id: a UUID in its canonical lower-case form as a
// zero byte and its 16 bytes, any other id as uvarint(length+1) and bytes.
func appendID(b []byte, id string) []byte {
	if u, ok := parseUUID(id); ok {
		b = append(b, 0)
		return append(b, u[:]...)
	}
	b = binary.AppendUvarint(b, uint64(len(id))+1)
	return append(b, id...)
}

func readID(r *reader, out *strings.Builder) {
	n := r.uvarint()
	if n == 0 {
		u := r.bytes(16)
		if r.err == nil {
			out.WriteString(formatUUID(u))
		}
		return
	}
	if n-1 > maxTerm {
		r.err = fmt.Errorf("%w: id too long", ErrCorrupt)
		return
	}
	out.Write(r.bytes(n - 1))
}

func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) != 36 {
		return u, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return u, false
			}
			i++
			continue
		}
		hi, ok1 := hexVal(s[i])
		lo, ok2 := hexVal(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func formatUUID(u []byte) string {
	const hex = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hex[c>>4], hex[c&15]
		j += 2
	}
	return string(b[:])
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

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

func decodeColumns(b []byte) (columns, error) {
	r := &reader{b: b}
	var c columns
	n := r.count(9)
	tables := []*[]string{&c.kinds, &c.integs, &c.records}
	for _, t := range tables {
		m := r.count(1)
		for range m {
			*t = append(*t, r.string(maxTerm))
		}
	}
	c.ids = make([]string, 0, n)
	var ids strings.Builder // one allocation for every id
	c.dates = make([]int64, 0, n)
	c.kind = make([]uint32, 0, n)
	c.integ = make([]uint32, 0, n)
	c.record = make([]uint32, 0, n)
	c.lens = make([][numFields]uint32, 0, n)
	idEnd := make([]int, 0, n)
	for range n {
		readID(r, &ids)
		idEnd = append(idEnd, ids.Len())
		c.dates = append(c.dates, r.varint())
		k, in, rec := r.uvarint(), r.uvarint(), r.uvarint()
		if r.err == nil && (k >= uint64(len(c.kinds)) || in >= uint64(len(c.integs)) || rec >= uint64(len(c.records))) {
			r.err = fmt.Errorf("%w: column value out of range", ErrCorrupt)
		}
		c.kind = append(c.kind, uint32(k))
		c.integ = append(c.integ, uint32(in))
		c.record = append(c.record, uint32(rec))
		var l [numFields]uint32
		for f := range l {
			l[f] = uint32(min(r.uvarint(), 1<<31))
		}
		c.lens = append(c.lens, l)
		if r.err != nil {
			return columns{}, r.err
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: trailing bytes in columns", ErrCorrupt)
	}
	if r.err != nil {
		return columns{}, r.err
	}
	all, start := ids.String(), 0
	for _, end := range idEnd {
		c.ids = append(c.ids, all[start:end])
		start = end
	}
	c.sortByID()
	return c, nil
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
	it.e = dictEntry{term: string(term), df: uint32(df), off: it.off, posLen: posLen, docLen: docLen}
	it.off += posLen + docLen
	return true
}

// seek returns an iterator positioned before the first entry that could be
// at or after term.
func (s *segment) seek(term string) *dictIter {
	i, _ := slices.BinarySearch(s.dictFirst, term)
	if i < len(s.dictFirst) && s.dictFirst[i] == term {
		return s.dictFrom(i, nil)
	}
	return s.dictFrom(max(i-1, 0), nil)
}

// lookup finds one term.
func (s *segment) lookup(term string) (dictEntry, bool, error) {
	it := s.seek(term)
	for it.next() {
		switch {
		case it.e.term == term:
			return it.e, true, nil
		case it.e.term > term:
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
		if it.e.term < p {
			continue
		}
		if !strings.HasPrefix(it.e.term, p) || !fn(it.e) {
			return nil
		}
	}
	return it.err
}
