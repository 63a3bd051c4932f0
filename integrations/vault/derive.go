package vault

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"sync"

	"golang.org/x/crypto/hkdf"
)

// deriveInfo starts HKDF's info for every key the vault derives, so that
// its keys never equal another program's from the same secret.
const deriveInfo = "searchsvc vault\x00"

// derive is the one key derivation: HKDF-SHA256 of secret with no salt
// (the secrets are uniformly random) and the label as the info. Keys of
// different labels are independent, so one secret serves several uses:
// "seal" (the AEAD key), "key id", and "index\x00" + a purpose (a blind
// index's HMAC key).
func derive(secret []byte, label string) []byte {
	k := make([]byte, KeySize)
	io.ReadFull(hkdf.New(sha256.New, secret, nil, []byte(deriveInfo+label)), k) // 32 bytes cannot fail
	return k
}

// keyID is the one key id: the first four bytes of the secret's "key id"
// subkey. It names a secret in every sealed value and in messages, and
// tells nothing of the secret.
func keyID(secret []byte) uint32 {
	return binary.BigEndian.Uint32(derive(secret, "key id"))
}

func formatID(id uint32) string { return fmt.Sprintf("%08x", id) }

// KeyID returns the public id of a secret, as sealed values and messages
// name it: eight hex digits.
func KeyID(secret []byte) string { return formatID(keyID(secret)) }

// Index computes keyed blind indexes: the same value always gives the same
// index, which tells nothing about the value without the key. It is safe
// for concurrent use.
type Index struct {
	macs sync.Pool // of hash.Hash: HMAC-SHA256 under the key, reused (an index is computed per request)
}

// Index returns the blind index of purpose under the current secret.
// Indexes follow the current secret only: after a rotation, whoever keeps
// them computes them again (see Reseal).
func (v *Vault) Index(p Purpose) *Index {
	k := derive(v.current.secret, "index\x00"+p.String())
	return &Index{macs: sync.Pool{New: func() any { return hmac.New(sha256.New, k) }}}
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
