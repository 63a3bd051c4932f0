package search

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// A user's manifest lists the live segments and their deleted documents.
// It is one sealed block after a magic, replaced atomically:
//
//	"SRCHMAN1" uint32(len) nonce+ciphertext
//
// Plaintext: "M1", uvarint next segment number, a rebuild byte (1: data
// was lost and the caller must reconcile), uvarint segment count, then
// per segment uvarint number, uvarint deleted count and the deleted
// document numbers, delta-coded.
const (
	manMagic     = "SRCHMAN1"
	manifestName = "MANIFEST"
)

type manifest struct {
	nextSeq uint64
	rebuild bool
	segs    []manSeg
}

type manSeg struct {
	seq     uint64
	deleted []uint32
}

func encodeManifest(m *manifest) []byte {
	b := []byte("M1")
	b = binary.AppendUvarint(b, m.nextSeq)
	if m.rebuild {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(m.segs)))
	for _, s := range m.segs {
		b = binary.AppendUvarint(b, s.seq)
		b = binary.AppendUvarint(b, uint64(len(s.deleted)))
		prev := uint32(0)
		for _, d := range s.deleted {
			b = binary.AppendUvarint(b, uint64(d-prev))
			prev = d
		}
	}
	return b
}

// maxDocs bounds the documents of one segment, and so a deleted number.
const maxDocs = 1 << 30

func decodeManifest(b []byte) (*manifest, error) {
	r := &reader{b: b}
	if string(r.bytes(2)) != "M1" {
		return nil, fmt.Errorf("%w: unknown manifest", ErrCorrupt)
	}
	m := &manifest{nextSeq: r.uvarint()}
	if rb := r.bytes(1); r.err == nil {
		if rb[0] > 1 {
			return nil, fmt.Errorf("%w: bad rebuild flag", ErrCorrupt)
		}
		m.rebuild = rb[0] == 1
	}
	n := r.count(2)
	seen := map[uint64]bool{}
	for range n {
		s := manSeg{seq: r.uvarint()}
		if r.err == nil && (s.seq >= m.nextSeq || seen[s.seq]) {
			r.err = fmt.Errorf("%w: bad segment number", ErrCorrupt)
		}
		seen[s.seq] = true
		k := r.count(1)
		d := uint64(0)
		for j := range k {
			v := r.uvarint()
			if j > 0 && v == 0 {
				r.err = fmt.Errorf("%w: deleted list out of order", ErrCorrupt)
			}
			d += v
			if d >= maxDocs {
				r.err = fmt.Errorf("%w: deleted document out of range", ErrCorrupt)
			}
			if r.err != nil {
				return nil, r.err
			}
			s.deleted = append(s.deleted, uint32(d))
		}
		m.segs = append(m.segs, s)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: trailing bytes in manifest", ErrCorrupt)
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

// sealFile is the on-disk form of a one-block file: magic, length, block.
func sealFile(s *sealer, magic string, plain []byte, id blockID) []byte {
	b := append([]byte(magic), 0, 0, 0, 0)
	b = s.seal(b, plain, id)
	binary.BigEndian.PutUint32(b[len(magic):], uint32(len(b)-len(magic)-4))
	return b
}

// openFile opens what sealFile wrote.
func openFile(s *sealer, magic string, b []byte, id blockID) ([]byte, int, error) {
	if len(b) < len(magic)+4 || string(b[:len(magic)]) != magic {
		return nil, -1, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	n := binary.BigEndian.Uint32(b[len(magic):])
	if uint64(n) != uint64(len(b)-len(magic)-4) {
		return nil, -1, fmt.Errorf("%w: bad length", ErrCorrupt)
	}
	return s.open(nil, b[len(magic)+4:], id)
}

func readManifest(s *sealer, dir, user string) (*manifest, error) {
	b, err := readBounded(filepath.Join(dir, manifestName), 64<<20)
	if err != nil {
		return nil, err
	}
	plain, _, err := openFile(s, manMagic, b, blockID{user: user, kind: kindManifest})
	if err != nil {
		return nil, err
	}
	return decodeManifest(plain)
}

// readBounded reads a whole file that must not exceed limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%w: %s is too large", ErrCorrupt, filepath.Base(path))
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, err
	}
	return b, nil
}
