// Package seal keeps personal values and secrets off the disk in clear:
// it derives one key per purpose from the service's secrets (SESSION_SECRET,
// CREDENTIALS_KEY) with HKDF-SHA256, seals small values with AES-256-GCM
// bound to the record they belong to, and computes keyed blind indexes
// (HMAC-SHA256), so a value can be found or kept unique without being
// stored. It imports only the standard library and x/crypto.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"

	"golang.org/x/crypto/hkdf"
)

// KeySize is the size of every derived key.
const KeySize = 32

// ErrOpen is returned for a sealed value that does not open: damaged,
// bound to another record, or sealed under a key not given.
var ErrOpen = errors.New("seal: cannot open sealed value")

// Derive returns the key for purpose derived from secret with HKDF-SHA256
// (no salt: the secrets are uniformly random; the purpose is the info).
// Keys of different purposes are independent, so one secret serves several.
func Derive(secret []byte, purpose string) []byte {
	k := make([]byte, KeySize)
	if _, err := io.ReadFull(hkdf.New(sha256.New, secret, nil, []byte("searchsvc "+purpose)), k); err != nil {
		panic(err) // only for a length over 255 × 32 bytes
	}
	return k
}

// Box seals and opens values under the key derived for its purpose from
// the current secret, and opens values sealed under previous secrets, so
// that a rotation can re-seal them.
type Box struct {
	current boxKey
	keys    map[uint32]boxKey
}

type boxKey struct {
	id   uint32 // the first four bytes of SHA-256 of the derived key
	aead cipher.AEAD
}

// NewBox returns a Box for purpose over current and previous secrets.
func NewBox(purpose string, current []byte, previous ...[]byte) (*Box, error) {
	if len(current) == 0 {
		return nil, errors.New("seal: no secret")
	}
	b := &Box{keys: make(map[uint32]boxKey)}
	for i, secret := range append([][]byte{current}, previous...) {
		k := Derive(secret, purpose)
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(k)
		bk := boxKey{id: binary.BigEndian.Uint32(sum[:4]), aead: aead}
		if i == 0 {
			b.current = bk
		}
		if _, dup := b.keys[bk.id]; !dup {
			b.keys[bk.id] = bk
		}
	}
	return b, nil
}

// Seal returns plaintext sealed under the current key and bound to ad (the
// id of the record it belongs to): key id (4 bytes), nonce (12), then the
// ciphertext and tag.
func (b *Box) Seal(plaintext, ad []byte) []byte {
	out := make([]byte, 4+12, 4+12+len(plaintext)+16)
	binary.BigEndian.PutUint32(out, b.current.id)
	rand.Read(out[4:16]) // never fails
	return b.current.aead.Seal(out, out[4:16], plaintext, ad)
}

// Open returns what sealed holds if it was sealed for ad under one of the
// Box's keys, and whether that key is the current one.
func (b *Box) Open(sealed, ad []byte) (plaintext []byte, current bool, err error) {
	if len(sealed) < 4+12+16 {
		return nil, false, ErrOpen
	}
	k, ok := b.keys[binary.BigEndian.Uint32(sealed)]
	if !ok {
		return nil, false, fmt.Errorf("%w: unknown key", ErrOpen)
	}
	pt, err := k.aead.Open(nil, sealed[4:16], sealed[16:], ad)
	if err != nil {
		return nil, false, ErrOpen
	}
	return pt, k.id == b.current.id, nil
}

// Index computes keyed blind indexes: the same value always gives the same
// index, which tells nothing about the value without the key. It is safe
// for concurrent use.
type Index struct {
	macs sync.Pool // of hash.Hash: HMAC-SHA256 under the key, reused (an index is computed per request)
}

// NewIndex returns an Index with the key derived for purpose from secret.
func NewIndex(purpose string, secret []byte) *Index {
	key := Derive(secret, purpose)
	return &Index{macs: sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}}
}

// Sum returns the index of value: HMAC-SHA256, base64url without padding.
func (x *Index) Sum(value string) string {
	m := x.macs.Get().(hash.Hash)
	m.Reset()
	io.WriteString(m, value)
	var sum [sha256.Size]byte
	var out [43]byte // base64url of 32 bytes, unpadded
	base64.RawURLEncoding.Encode(out[:], m.Sum(sum[:0]))
	x.macs.Put(m)
	return string(out[:])
}
