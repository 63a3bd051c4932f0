package dropbox

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// BlockSize is the block of Dropbox's content hash: 4 MiB.
const BlockSize = 4 << 20

// contentHash is Dropbox's content hash: the file is cut into 4 MiB
// blocks (the last may be shorter), each block hashed with SHA-256, and
// the concatenation of those hashes hashed with SHA-256 again. An empty
// file has no block: its hash is the SHA-256 of nothing.
type contentHash struct {
	blocks  []byte    // the hashes of the full blocks so far, 32 bytes per 4 MiB
	block   hash.Hash // over the current block
	inBlock int       // bytes in the current block
}

// NewContentHash returns a hash.Hash computing Dropbox's content hash;
// Sum appends the 32-byte digest (Entry.ContentHash is its lower-case
// hex).
func NewContentHash() hash.Hash {
	return &contentHash{block: sha256.New()}
}

func (h *contentHash) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		take := min(len(p), BlockSize-h.inBlock)
		h.block.Write(p[:take])
		h.inBlock += take
		p = p[take:]
		if h.inBlock == BlockSize {
			h.blocks = h.block.Sum(h.blocks)
			h.block.Reset()
			h.inBlock = 0
		}
	}
	return n, nil
}

// Sum appends the hash of what was written so far, the block in progress
// counted as the last; it does not change the state.
func (h *contentHash) Sum(b []byte) []byte {
	overall := sha256.New()
	overall.Write(h.blocks)
	if h.inBlock > 0 {
		overall.Write(h.block.Sum(nil))
	}
	return overall.Sum(b)
}

func (h *contentHash) Reset() {
	h.blocks = h.blocks[:0]
	h.block.Reset()
	h.inBlock = 0
}

func (h *contentHash) Size() int      { return sha256.Size }
func (h *contentHash) BlockSize() int { return sha256.BlockSize }

// ContentHash returns Dropbox's content hash of data, in lower-case hex,
// as Entry.ContentHash has it.
func ContentHash(data []byte) string {
	h := NewContentHash()
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
