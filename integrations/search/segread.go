package search

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"

	"searchsvc/integrations/vault"
)

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
	cacheID   uint32 // the segment's number in the cache's keys
	inflate   *inflaters
	offs      []int64 // file offset of each block
	kinds     []byte
	lens      []uint32
	post      []uint32 // block numbers of the postings blocks, in order
	postTotal uint64
	dict      []uint32 // block numbers of the dictionary blocks
	// storedBlocks are the block numbers of the stored blocks, and
	// storedFirst each one's first document (stored.go); none in a
	// segment of footer F1.
	storedBlocks []uint32
	storedFirst  []uint32
	dictFirst    []string
	dictBase     []uint64
	cols         columns
	lenSums      [numFields]uint64
	withF        [numFields]uint64 // documents with a non-empty field
	memo         *lookupMemo       // nil without a cache: a segment opened for a merge or a check
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
		seg.cacheID = c.segID()
		seg.memo = newLookupMemo()
	}
	sealed, foff, err := readFooter(f, size)
	if err != nil {
		return nil, err
	}
	foot, key, err := s.open(nil, sealed, blockID{user: user, seg: seq, block: footerBlock, kind: kindFooter})
	if err != nil {
		return nil, err
	}
	seg.key = key
	r := &reader{b: foot}
	version := string(r.bytes(2))
	if version != "F1" && version != "F2" {
		return nil, fmt.Errorf("%w: unknown footer", ErrCorrupt)
	}
	nDocs := r.uvarint()
	for f := range seg.lenSums {
		seg.lenSums[f] = r.uvarint()
	}
	seg.postTotal = r.uvarint()
	columnsBlock, err := seg.readBlocks(r, foff)
	if err != nil {
		return nil, err
	}
	if err := seg.readDictIndex(r); err != nil {
		return nil, err
	}
	if version == "F2" {
		if err := seg.readStoredIndex(r, nDocs); err != nil {
			return nil, err
		}
	} else if len(seg.storedBlocks) > 0 {
		return nil, fmt.Errorf("%w: stored blocks in an F1 segment", ErrCorrupt)
	}
	if err := seg.readColumns(uint32(columnsBlock), nDocs); err != nil {
		return nil, err
	}
	return seg, nil
}

// readFooter checks a segment's magic and trailer and returns its sealed
// footer and the footer's offset, where the blocks end.
func readFooter(f io.ReaderAt, size int64) (sealed []byte, foff int64, err error) {
	const trailer = int64(4 + len(segEnd))
	if size < int64(len(segMagic)+sealedSize(0))+trailer {
		return nil, 0, fmt.Errorf("%w: segment too short", ErrCorrupt)
	}
	var tail [trailer]byte
	if _, err := f.ReadAt(tail[:], size-trailer); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	var head [len(segMagic)]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if string(tail[4:]) != segEnd || string(head[:]) != segMagic {
		return nil, 0, fmt.Errorf("%w: not a segment", ErrCorrupt)
	}
	flen := int64(binary.BigEndian.Uint32(tail[:4]))
	foff = size - trailer - flen - 4
	if flen < int64(sealedSize(0)-4) || foff < int64(len(segMagic)) {
		return nil, 0, fmt.Errorf("%w: bad footer length", ErrCorrupt)
	}
	sealed = make([]byte, flen+4)
	if _, err := f.ReadAt(sealed, foff); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if int64(binary.BigEndian.Uint32(sealed)) != flen {
		return nil, 0, fmt.Errorf("%w: footer lengths differ", ErrCorrupt)
	}
	return sealed[4:], foff, nil
}

// readBlocks reads the footer's list of blocks, which must fill the
// segment up to foff, and returns the index of the columns block.
func (s *segment) readBlocks(r *reader, foff int64) (columnsBlock int, err error) {
	nBlocks := r.count(2)
	off := int64(len(segMagic))
	columnsBlock = -1
	for i := range nBlocks {
		kind := r.bytes(1)
		n := r.uvarint()
		if r.err != nil {
			return 0, r.err
		}
		if n < uint64(sealedSize(0)) || n > maxBlock || int64(n) > foff-off {
			return 0, fmt.Errorf("%w: bad block length", ErrCorrupt)
		}
		s.offs = append(s.offs, off)
		s.lens = append(s.lens, uint32(n))
		s.kinds = append(s.kinds, kind[0])
		off += int64(n)
		switch kind[0] {
		case kindPostings:
			s.post = append(s.post, uint32(i))
		case kindDict:
			s.dict = append(s.dict, uint32(i))
		case kindColumns:
			columnsBlock = i
		case kindStored:
			s.storedBlocks = append(s.storedBlocks, uint32(i))
		default:
			return 0, fmt.Errorf("%w: unknown block kind", ErrCorrupt)
		}
	}
	if off != foff || columnsBlock < 0 {
		return 0, fmt.Errorf("%w: blocks do not fill the segment", ErrCorrupt)
	}
	if uint64(len(s.post)) != (s.postTotal+postBlock-1)/postBlock {
		return 0, fmt.Errorf("%w: postings blocks do not match their size", ErrCorrupt)
	}
	return columnsBlock, nil
}

// readDictIndex reads the footer's dictionary index: each dictionary
// block's first term and postings base, in term order.
func (s *segment) readDictIndex(r *reader) error {
	nDict := r.count(2)
	if nDict != len(s.dict) {
		return fmt.Errorf("%w: dictionary index does not match", ErrCorrupt)
	}
	for range nDict {
		base := r.uvarint()
		t := r.string(maxTerm)
		if r.err == nil && (base > s.postTotal || len(s.dictFirst) > 0 && t <= s.dictFirst[len(s.dictFirst)-1]) {
			r.err = fmt.Errorf("%w: dictionary index out of order", ErrCorrupt)
		}
		s.dictBase = append(s.dictBase, base)
		s.dictFirst = append(s.dictFirst, t)
	}
	return r.err
}

// readColumns opens the columns block, which must hold nDocs documents,
// and counts the documents that have each field.
func (s *segment) readColumns(block uint32, nDocs uint64) error {
	cb, err := s.block(block, &blockMemo{})
	if err != nil {
		return err
	}
	if s.cols, err = decodeColumns(cb); err != nil {
		return err
	}
	for _, l := range s.cols.lens {
		for f, n := range l {
			if n > 0 {
				s.withF[f]++
			}
		}
	}
	if uint64(s.cols.len()) != nDocs {
		return fmt.Errorf("%w: document count does not match", ErrCorrupt)
	}
	return nil
}

func (s *segment) close() {
	if s.cache != nil {
		s.cache.drop(s.cacheID)
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
	// reuse opens each block in the arrays raw and out, those of the
	// block before: for a reader that is done with a block once it
	// opens the next, as a merge is with each input's postings (each
	// term's read, or copied, before the next). A fresh pair of arrays
	// for every block a merge read was a fifth of what a first sync
	// allocated (BenchmarkDovecotFirstSync).
	reuse    bool
	raw, out []byte
}

// block returns block n opened, through memo when there is one. It does
// not use the cache: queries read through cachedBlock and cachedPostings.
func (s *segment) block(n uint32, memo *blockMemo) ([]byte, error) {
	if memo != nil && memo.data != nil && memo.n == n {
		return memo.data, nil
	}
	var raw, out []byte
	if memo != nil && memo.reuse && int(n) < len(s.lens) {
		if cap(memo.raw) < int(s.lens[n]) {
			memo.raw = make([]byte, s.lens[n])
		}
		if memo.out == nil {
			memo.out = make([]byte, 0, maxInflated)
		}
		raw, out = memo.raw, memo.out
	}
	plain, err := s.openBlock(n, raw, out)
	if err != nil {
		if memo != nil {
			memo.data = nil // raw and out may hold part of another block
		}
		return nil, err
	}
	if memo != nil {
		memo.n, memo.data = n, plain
	}
	return plain, nil
}

// cachedBlock returns block n through the cache, pinned in p.
func (s *segment) cachedBlock(n uint32, p *pins) ([]byte, error) {
	k := cacheKey{seg: s.cacheID, block: n}
	if b, at, ok := s.cache.get(k); ok {
		p.add(s.cache, at, ok)
		return b, nil
	}
	plain, err := s.openBlock(n, nil, nil)
	if err != nil {
		return nil, err
	}
	b, at, ok := s.cache.put(k, plain)
	p.add(s.cache, at, ok)
	return b, nil
}

// openBlock reads, opens and decompresses block n, reading into raw's
// array and decompressing into out's when they are large enough. The
// block returned may lie in either.
func (s *segment) openBlock(n uint32, raw, out []byte) ([]byte, error) {
	if int(n) >= len(s.offs) {
		return nil, fmt.Errorf("%w: no block %d", ErrCorrupt, n)
	}
	if cap(raw) < int(s.lens[n]) {
		raw = make([]byte, s.lens[n])
	}
	raw = raw[:s.lens[n]]
	if _, err := s.f.ReadAt(raw, s.offs[n]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if int(binary.BigEndian.Uint32(raw)) != len(raw)-4 {
		return nil, fmt.Errorf("%w: block %d length", ErrCorrupt, n)
	}
	kind := s.kinds[n]
	plain, _, err := s.s.open(vault.InPlace(raw[4:]), raw[4:], blockID{user: s.user, seg: s.seq, block: n, kind: kind})
	if err != nil {
		return nil, err
	}
	if kind == kindPostings || kind == kindDict || kind == kindStored {
		if plain, err = s.inflate.decompress(out, plain); err != nil {
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
	return plain, nil
}

// blockScratch is one query's buffers for opening postings blocks on a
// cache miss, and the block last opened in them: the words of a prefix
// lie side by side, so the next miss is often in the same block.
// It holds the pins of the cached streams the query reads.
type blockScratch struct {
	seg      *segment // nil: nothing opened
	n        uint32
	plain    []byte
	raw, out []byte
	pins     pins
}

// release unpins the streams read and lets go of the segment last read,
// so a scratch kept between queries holds no closed segment. The streams
// are not read after.
func (bs *blockScratch) release() {
	bs.pins.release()
	bs.seg, bs.plain = nil, nil
}

func (bs *blockScratch) block(s *segment, n uint32) ([]byte, error) {
	if bs.seg == s && bs.n == n {
		return bs.plain, nil
	}
	bs.seg = nil
	if int(n) < len(s.lens) && cap(bs.raw) < int(s.lens[n]) {
		bs.raw = make([]byte, s.lens[n])
	}
	if bs.out == nil {
		// One byte more than a postings block, so reading one to its end
		// does not grow the array.
		bs.out = make([]byte, 0, postBlock+1)
	}
	plain, err := s.openBlock(n, bs.raw, bs.out)
	if err != nil {
		return nil, err
	}
	bs.seg, bs.n, bs.plain = s, n, plain
	return plain, nil
}

// cachedPostings returns n bytes of the postings stream at off, as a
// query reads them: the cache keeps those bytes alone, copied out of
// their blocks, which are opened in bs and not kept. They stay pinned in
// bs until its release.
func (s *segment) cachedPostings(off, n uint64, bs *blockScratch) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if off > s.postTotal || n > s.postTotal-off {
		return nil, fmt.Errorf("%w: postings past the end", ErrCorrupt)
	}
	k := cacheKey{seg: s.cacheID, block: streamBlock, off: off, n: n}
	if b, at, ok := s.cache.get(k); ok {
		bs.pins.add(s.cache, at, ok)
		return b, nil
	}
	out := make([]byte, 0, n)
	first, last := off/postBlock, (off+n-1)/postBlock
	for i := first; i <= last; i++ {
		b, err := bs.block(s, s.post[i])
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
	b, at, ok := s.cache.put(k, out)
	bs.pins.add(s.cache, at, ok)
	return b, nil
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
