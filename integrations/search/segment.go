package search

import (
	"bufio"
	"encoding/binary"
	"os"
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
// columns block holds the per-document values; stored blocks hold the
// stored fields (stored.go). The footer lists every
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
	// The stored fields (stored.go): the block being filled, each
	// block's first document, and the documents added so far.
	stored      []byte
	storedFirst []uint32
	storedDocs  uint32
	f1          bool // no stored fields, footer F1 (Index.f1)
	written     int64
	plain       int64 // block bytes before compression and sealing
	err         error
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
	if kind == kindPostings || kind == kindDict || kind == kindStored {
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
	w.endStored()
	if len(w.post) > 0 {
		w.writeBlock(kindPostings, w.post)
	}
	if len(w.dict) > 0 {
		w.writeBlock(kindDict, w.dict)
	}
	w.writeBlock(kindColumns, encodeColumns(c))
	foot := []byte("F2")
	if w.f1 {
		foot = []byte("F1")
	}
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
	if !w.f1 {
		foot = w.appendStoredIndex(foot)
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
