// Package vault is the service's one sealer. It seals what the service
// keeps at rest (integration credentials, item metadata and content files,
// task payloads, sync state, users, sessions, the search index) with
// AES-256-GCM under a key derived from one secret (CREDENTIALS_KEY for the
// main store and the index, SESSION_SECRET for the session store), opens
// what a previous secret sealed, re-seals under the current one (rotation)
// and computes keyed blind indexes (HMAC-SHA256), so that a value can be
// found or kept unique without being stored. It knows nothing of records
// or items: callers bind what they seal to its owner with AAD.
package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// KeySize is the length of a CREDENTIALS_KEY in bytes, and of every key
// the vault derives.
const KeySize = 32

// The layout of a sealed value: version (1 byte), the id of the secret it
// was sealed under (4 bytes, see KeyID), a random nonce (12 bytes), then
// the ciphertext and GCM's tag (16 bytes). A new layout gets a new version.
const (
	version    = 1
	headerSize = 1 + 4
	nonceSize  = 12
	tagSize    = 16
	// Overhead is how many bytes sealing adds to a plaintext.
	Overhead = headerSize + nonceSize + tagSize
)

// Errors of Open. Both fail closed: nothing is returned with them.
var (
	// ErrCannotOpen means a sealed value is malformed, was altered, or
	// belongs to another owner or purpose.
	ErrCannotOpen = errors.New("sealed value cannot be opened")
	// ErrUnknownKey means a sealed value names a secret the vault does not
	// hold (neither the current one nor a previous one). Its text is the
	// one the service has always logged; Holds tells it apart up front.
	ErrUnknownKey = errors.New("sealed credentials name an unknown key")
)

// key is one generation of the vault's secret.
type key struct {
	id     uint32
	secret []byte // for Index
	aead   cipher.AEAD
}

// Vault seals under the current secret and opens under the current one or
// a previous one, chosen by the key id every sealed value carries. It is
// safe for concurrent use.
type Vault struct {
	current *key
	keys    map[uint32]*key // by id; includes current
}

// New returns a Vault that seals under the key derived from current and
// also opens what was sealed under any of previous. A secret is any
// non-empty run of uniformly random bytes (CREDENTIALS_KEY, SESSION_SECRET);
// the same secret listed twice counts once.
func New(current []byte, previous ...[]byte) (*Vault, error) {
	v := &Vault{keys: make(map[uint32]*key, 1+len(previous))}
	for i, secret := range append([][]byte{current}, previous...) {
		if len(secret) == 0 {
			if i == 0 {
				return nil, errors.New("vault: no secret")
			}
			return nil, fmt.Errorf("vault: previous secret %d is empty", i)
		}
		k, err := newKey(secret)
		if err != nil {
			return nil, err
		}
		if old, dup := v.keys[k.id]; dup {
			if !bytes.Equal(old.secret, k.secret) {
				// Four bytes of id: two secrets may share one, once in
				// billions. A new secret settles it.
				return nil, fmt.Errorf("vault: two secrets share key id %s; generate another", formatID(k.id))
			}
			continue
		}
		v.keys[k.id] = k
		if i == 0 {
			v.current = k
		}
	}
	return v, nil
}

func newKey(secret []byte) (*key, error) {
	block, err := aes.NewCipher(derive(secret, "seal"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &key{id: keyID(secret), secret: bytes.Clone(secret), aead: aead}, nil
}

// KeyID returns the id of the secret the vault seals under.
func (v *Vault) KeyID() string { return formatID(v.current.id) }

// Seal returns plaintext sealed under the current secret and bound to aad
// (see AAD).
func (v *Vault) Seal(aad, plaintext []byte) []byte {
	return v.AppendSeal(make([]byte, 0, Overhead+len(plaintext)), aad, plaintext)
}

// AppendSeal appends plaintext sealed as Seal does to dst, which must not
// overlap plaintext. It lets the search index seal into a buffer it
// reuses.
func (v *Vault) AppendSeal(dst, aad, plaintext []byte) []byte {
	k := v.current
	n := len(dst)
	dst = append(dst, version, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[n+1:], k.id)
	dst = append(dst, make([]byte, nonceSize)...)
	nonce := dst[n+headerSize : n+headerSize+nonceSize]
	rand.Read(nonce) // never fails (crypto/rand since Go 1.24)
	return k.aead.Seal(dst, nonce, plaintext, aad)
}

// Open returns what sealed holds if it was sealed for aad under the
// current secret or a previous one. A value that is malformed, altered or
// another owner's is ErrCannotOpen; one sealed under a secret the vault
// does not hold is ErrUnknownKey.
func (v *Vault) Open(aad, sealed []byte) ([]byte, error) {
	return v.AppendOpen(nil, aad, sealed)
}

// AppendOpen appends what sealed holds, as Open opens it, to dst. dst may
// be InPlace(sealed), the place of sealed's own ciphertext, to open in
// place.
func (v *Vault) AppendOpen(dst, aad, sealed []byte) ([]byte, error) {
	k, err := v.key(sealed)
	if err != nil {
		return nil, err
	}
	if len(sealed) < Overhead {
		return nil, ErrCannotOpen
	}
	out, err := k.aead.Open(dst, sealed[headerSize:headerSize+nonceSize], sealed[headerSize+nonceSize:], aad)
	if err != nil {
		return nil, ErrCannotOpen
	}
	return out, nil
}

// key finds the key sealed names.
func (v *Vault) key(sealed []byte) (*key, error) {
	id, ok := sealedID(sealed)
	if !ok {
		return nil, ErrCannotOpen
	}
	k, ok := v.keys[id]
	if !ok {
		return nil, ErrUnknownKey
	}
	return k, nil
}

func sealedID(sealed []byte) (uint32, bool) {
	if len(sealed) < headerSize || sealed[0] != version {
		return 0, false
	}
	return binary.BigEndian.Uint32(sealed[1:]), true
}

// SealedKeyID returns the id of the secret sealed names, and false for a
// value that is not sealed in this format.
func SealedKeyID(sealed []byte) (string, bool) {
	id, ok := sealedID(sealed)
	if !ok {
		return "", false
	}
	return formatID(id), true
}

// Holds reports whether sealed names a secret the vault holds (the current
// one or a previous one). It does not check that sealed opens; it is what
// start-up uses to refuse a CREDENTIALS_KEY that cannot open the store.
func (v *Vault) Holds(sealed []byte) bool {
	_, err := v.key(sealed)
	return err == nil
}

// Current reports whether sealed names the current secret: a value that
// does not needs Reseal before the previous secrets can be dropped. It
// does not check that sealed opens.
func (v *Vault) Current(sealed []byte) bool {
	id, ok := sealedID(sealed)
	return ok && id == v.current.id
}

// Stale reports whether sealed names a previous secret the vault holds:
// what Reseal would seal again. A value under an unknown secret is not
// stale: a rotation leaves it alone (start-up refuses it, see Holds).
func (v *Vault) Stale(sealed []byte) bool {
	k, err := v.key(sealed)
	return err == nil && k != v.current
}

// Reseal is the one step of every rotation: it returns sealed unchanged if
// the current secret sealed it, and otherwise opens it (under a previous
// secret) and seals it again under the current one, with changed true.
// A value that does not open is an error: a rotation fails closed.
func (v *Vault) Reseal(aad, sealed []byte) (out []byte, changed bool, err error) {
	k, err := v.key(sealed)
	if err != nil {
		return nil, false, err
	}
	if k == v.current {
		return sealed, false, nil
	}
	plaintext, err := v.Open(aad, sealed)
	if err != nil {
		return nil, false, err
	}
	return v.Seal(aad, plaintext), true, nil
}

// ParseKey decodes a credentials key given as base64 (standard or URL
// alphabet, padded or not): 32 bytes, not all zero. It is the one parser
// of CREDENTIALS_KEY and CREDENTIALS_KEY_PREVIOUS, for the configuration
// and the vault alike. Errors name the variable, never the value.
func ParseKey(name, value string) ([]byte, error) {
	const generate = " (generate one with: head -c 32 /dev/urandom | base64)"
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, fmt.Errorf("%s is empty", name)
	}
	var key []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err = enc.DecodeString(value); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s must be base64 of exactly %d bytes, and is not base64%s", name, KeySize, generate)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("%s must be base64 of exactly %d bytes, got %d bytes%s", name, KeySize, len(key), generate)
	}
	if allZero(key) {
		return nil, fmt.Errorf("%s must not be all zero bytes%s", name, generate)
	}
	return key, nil
}

// InPlace is where AppendOpen may write the plaintext of sealed over its
// own ciphertext, which starts after the header and the nonce: a caller
// that opens a buffer it owns needs no second one.
func InPlace(sealed []byte) []byte { return sealed[Overhead-tagSize:][:0] }

// String describes v by its key ids; it holds no key material.
func (v *Vault) String() string {
	return fmt.Sprintf("Vault{keyId:%s previousKeys:%d}", v.KeyID(), len(v.keys)-1)
}

// Format makes every fmt verb print v without key material.
func (v *Vault) Format(f fmt.State, _ rune) { fmt.Fprint(f, v.String()) }

// LogValue makes slog log v without key material.
func (v *Vault) LogValue() slog.Value {
	return slog.GroupValue(slog.String("key_id", v.KeyID()), slog.Int("previous_keys", len(v.keys)-1))
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
