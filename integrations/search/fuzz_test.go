package search

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// exercise reads everything of an opened segment, as queries and merges
// would: every dictionary entry, its postings, its positions. A stream
// read through the cache is the one read block by block.
func exercise(t *testing.T, seg *segment) {
	it := seg.dictFrom(0, &blockMemo{})
	var buf, pbuf []byte
	var bs blockScratch
	defer bs.release()
	var p postingIter
	for n := 0; it.next() && n < 10_000; n++ {
		e := it.e
		docs, err := seg.postings(e.off+e.posLen, e.docLen, &buf, nil)
		if err != nil {
			continue
		}
		docs = bytes.Clone(docs)
		if cached, err := seg.cachedPostings(e.off+e.posLen, e.docLen, &bs); err == nil && !bytes.Equal(cached, docs) {
			t.Fatalf("%q: got %d bytes through the cache, want %d", e.term, len(cached), len(docs))
		}
		pos, _ := seg.postings(e.off, e.posLen, &pbuf, nil)
		p.reset(docs, pos)
		for p.next() {
			for f := range numFields {
				p.positions(nil, Field(f))
			}
		}
		seg.lookup(e.term)
		seg.prefix(e.term[:len(e.term)/2], func(dictEntry) bool { return true })
	}
	seg.cols.find("d1", func(uint32) bool { return false })
}

// segmentSeeds are the files of small real segments.
func segmentSeeds(f *testing.F) [][]byte {
	dir := f.TempDir()
	ix, err := Open(Config{Dir: dir, Vault: testVault})
	if err != nil {
		f.Fatal(err)
	}
	ix.Add(userA, handDocs()...)
	ix.Flush()
	ix.Add(userA, handDocs()[:2]...)
	ix.Close()
	paths, _ := filepath.Glob(filepath.Join(dir, userA, "*.seg"))
	var out [][]byte
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		out = append(out, b)
	}
	return out
}

// FuzzSegmentFile opens hostile segment files: an error, never a panic or
// an allocation beyond the file's size.
func FuzzSegmentFile(f *testing.F) {
	for _, b := range segmentSeeds(f) {
		f.Add(b, uint64(1))
		f.Add(b, uint64(2))
	}
	s, _ := newSealer(testVault)
	f.Fuzz(func(t *testing.T, b []byte, seq uint64) {
		seg, err := openSegment(bytes.NewReader(b), int64(len(b)), s, userA, seq, newCache(1<<20))
		if err != nil {
			return
		}
		exercise(t, seg)
	})
}

// FuzzSegmentBlocks seals hostile plaintexts with the right key, so the
// decoders behind the seal are fuzzed too: the footer, the columns, the
// dictionary and the postings. The input is a list of blocks, each a kind
// byte, a uint16 length and the plaintext; the last one is the footer.
func FuzzSegmentBlocks(f *testing.F) {
	s, _ := newSealer(testVault)
	for _, b := range segmentSeeds(f) {
		seg, err := openSegment(bytes.NewReader(b), int64(len(b)), s, userA, 1, nil)
		if err != nil {
			continue
		}
		var in []byte
		for n := range seg.offs {
			plain, err := seg.block(uint32(n), &blockMemo{})
			if err != nil || len(plain) > 0xffff {
				continue
			}
			in = append(in, seg.kinds[n])
			in = binary.BigEndian.AppendUint16(in, uint16(len(plain)))
			in = append(in, plain...)
		}
		flen := int(binary.BigEndian.Uint32(b[len(b)-12:]))
		sealed := b[len(b)-12-flen : len(b)-12]
		foot, _, err := s.open(nil, sealed, blockID{user: userA, seg: 1, block: footerBlock, kind: kindFooter})
		if err != nil {
			f.Fatal(err)
		}
		in = append(in, kindFooter)
		in = binary.BigEndian.AppendUint16(in, uint16(len(foot)))
		f.Add(append(in, foot...))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		type blk struct {
			kind  byte
			plain []byte
		}
		var blocks []blk
		for len(in) >= 3 {
			n := int(binary.BigEndian.Uint16(in[1:]))
			k := in[0]
			in = in[3:]
			n = min(n, len(in))
			blocks = append(blocks, blk{k, in[:n]})
			in = in[n:]
		}
		if len(blocks) == 0 {
			return
		}
		// Rebuild a file: the blocks, then a footer listing them.
		var file bytes.Buffer
		file.WriteString(segMagic)
		for i, b := range blocks[:len(blocks)-1] {
			sealed := s.seal(nil, b.plain, blockID{user: userA, seg: 1, block: uint32(i), kind: b.kind})
			binary.Write(&file, binary.BigEndian, uint32(len(sealed)))
			file.Write(sealed)
		}
		sealed := s.seal(nil, blocks[len(blocks)-1].plain, blockID{user: userA, seg: 1, block: footerBlock, kind: kindFooter})
		binary.Write(&file, binary.BigEndian, uint32(len(sealed)))
		file.Write(sealed)
		binary.Write(&file, binary.BigEndian, uint32(len(sealed)))
		file.WriteString(segEnd)
		b := file.Bytes()
		seg, err := openSegment(bytes.NewReader(b), int64(len(b)), s, userA, 1, newCache(1<<20))
		if err != nil {
			return
		}
		exercise(t, seg)
	})
}

// FuzzManifest decodes hostile manifests, sealed and plain.
func FuzzManifest(f *testing.F) {
	s, _ := newSealer(testVault)
	good := encodeManifest(&manifest{nextSeq: 9, rebuild: true, segs: []manSeg{{seq: 3, deleted: []uint32{1, 5, 700}}, {seq: 8}}})
	f.Add(good)
	f.Add(sealFile(s, manMagic, good, blockID{user: userA, kind: kindManifest}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := decodeManifest(b); err == nil {
			again := encodeManifest(m)
			if m2, err := decodeManifest(again); err != nil || !bytes.Equal(encodeManifest(m2), again) {
				t.Errorf("manifest does not round-trip: %v", err)
			}
		}
		if plain, _, err := openFile(s, manMagic, b, blockID{user: userA, kind: kindManifest}); err == nil {
			decodeManifest(plain)
		}
	})
}

// FuzzCursor decodes hostile cursors: an error or a cursor that encodes
// back to itself, never a panic.
func FuzzCursor(f *testing.F) {
	f.Add(encodeCursor('r', cursor{k: key{score: 1.5, date: 7, id: "d1"}, stats: true, n: 40, dfs: []int{3, 40}}), byte('r'))
	f.Add(encodeCursor('d', cursor{k: key{date: 7, id: "d1"}}), byte('d'))
	f.Fuzz(func(t *testing.T, s string, sort byte) {
		c, err := decodeCursor(s, sort)
		if err != nil {
			return
		}
		if len(c.dfs) > MaxTerms {
			t.Fatalf("%d dfs", len(c.dfs))
		}
		if c2, err := decodeCursor(encodeCursor(sort, c), sort); err != nil || c2.k != c.k || c2.n != c.n {
			t.Fatalf("round trip: %+v, %v; want %+v", c2, err, c)
		}
	})
}
