package search

import (
	"encoding/binary"
	"errors"
	"fmt"

	"searchsvc/integrations/vault"
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

// sealer seals and opens blocks with the service's vault: the index
// does no cryptography of its own. A block's key id says whether the
// current key sealed it (Reseal rewrites those it did not).
type sealer struct {
	v *vault.Vault
}

func newSealer(v *vault.Vault) (*sealer, error) {
	if v == nil {
		return nil, errors.New("search: no vault")
	}
	return &sealer{v: v}, nil
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
	dst = vault.AppendAAD(dst, vault.SearchIndex, id.user)
	dst = binary.BigEndian.AppendUint64(dst, id.seg)
	dst = binary.BigEndian.AppendUint32(dst, id.block)
	return append(dst, id.kind)
}

// seal appends plain, sealed under the current key, to dst.
func (s *sealer) seal(dst, plain []byte, id blockID) []byte {
	var adBuf [96]byte
	return s.v.AppendSeal(dst, id.ad(adBuf[:0]), plain)
}

// open appends the plaintext of a sealed block to dst (which may be the
// block's own ciphertext, see inPlace) and says which key sealed it:
// 0 the current one, 1 a previous one.
func (s *sealer) open(dst, sealed []byte, id blockID) ([]byte, int, error) {
	var adBuf [96]byte
	p, err := s.v.AppendOpen(dst, id.ad(adBuf[:0]), sealed)
	if err != nil {
		return nil, -1, fmt.Errorf("%w: block %d/%c does not open: %w", ErrCorrupt, id.block, id.kind, err)
	}
	if !s.v.Current(sealed) {
		return p, 1, nil
	}
	return p, 0, nil
}

// sealedSize is the on-disk size of a block of n plaintext bytes,
// including its 4-byte length prefix.
func sealedSize(n int) int { return 4 + vault.Overhead + n }
