package search

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrCorrupt is wrapped by every error about a sealed file that does not
// open: torn, tampered, sealed under an unknown key, or not ours at all.
var ErrCorrupt = errors.New("search: corrupt index file")

// Kinds of sealed block. The kind is part of each block's additional data,
// so a block of one kind cannot stand in for another.
const (
	kindPostings   = 'p'
	kindDict       = 'd'
	kindColumns    = 'c'
	kindFooter     = 'f'
	kindManifest   = 'm'
	kindCheckpoint = 'k'
)

// maxBlock bounds one sealed block on disk, in bytes: a hostile length
// field is refused before anything is allocated for it.
const maxBlock = 256 << 20

// sealer seals blocks with AES-256-GCM. The first AEAD is the current key;
// the others are previous keys, only ever used to open.
type sealer struct {
	aeads []cipher.AEAD
}

func newSealer(key []byte, previous [][]byte) (*sealer, error) {
	s := &sealer{}
	for i, k := range append([][]byte{key}, previous...) {
		if len(k) != 32 {
			return nil, fmt.Errorf("search: key %d is %d bytes, want 32", i, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, aead)
	}
	return s, nil
}

// blockID is the identity of a sealed block, its additional data: whose
// it is, which file (segment number; 0 for the manifest and checkpoint),
// its number in the file and its kind. A block moved to another user,
// file, position or role no longer opens.
type blockID struct {
	user  string
	seg   uint64
	block uint32
	kind  byte
}

func (id blockID) ad(dst []byte) []byte {
	dst = append(dst, "searchsvc-index\x00"...)
	dst = append(dst, id.user...)
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, id.seg)
	dst = binary.BigEndian.AppendUint32(dst, id.block)
	return append(dst, id.kind)
}

// seal appends nonce and ciphertext of plain, under the current key, to dst.
func (s *sealer) seal(dst, plain []byte, id blockID) []byte {
	aead := s.aeads[0]
	var nonce [12]byte
	rand.Read(nonce[:])
	dst = append(dst, nonce[:]...)
	var adBuf [96]byte
	return aead.Seal(dst, nonce[:], plain, id.ad(adBuf[:0]))
}

// open opens a sealed block with key number k, or, when k is -1, with
// whichever key opens it; it returns the plaintext and the key's number.
func (s *sealer) open(dst, sealed []byte, id blockID, k int) ([]byte, int, error) {
	if len(sealed) < 12+16 {
		return nil, -1, fmt.Errorf("%w: short block", ErrCorrupt)
	}
	var adBuf [96]byte
	ad := id.ad(adBuf[:0])
	try := func(i int) ([]byte, error) {
		return s.aeads[i].Open(dst, sealed[:12], sealed[12:], ad)
	}
	if k >= 0 && k < len(s.aeads) {
		p, err := try(k)
		if err != nil {
			return nil, -1, fmt.Errorf("%w: block %d/%c does not open", ErrCorrupt, id.block, id.kind)
		}
		return p, k, nil
	}
	for i := range s.aeads {
		if p, err := try(i); err == nil {
			return p, i, nil
		}
	}
	return nil, -1, fmt.Errorf("%w: block %d/%c does not open", ErrCorrupt, id.block, id.kind)
}

// sealedSize is the on-disk size of a block of n plaintext bytes,
// including its 4-byte length prefix.
func sealedSize(n int) int { return 4 + 12 + n + 16 }
