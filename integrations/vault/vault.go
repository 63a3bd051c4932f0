// Package vault seals and opens the service's secrets at rest (integration
// credentials, item metadata and content, task payloads) with AES-256-GCM
// under CREDENTIALS_KEY, opens what CREDENTIALS_KEY_PREVIOUS sealed, re-seals
// under the current key (rotation) and derives subkeys for other purposes.
// It knows nothing of records or items: callers name what they seal with an
// AAD.
package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// KeySize is the length of a credentials key in bytes (AES-256).
const KeySize = 32

// sealVersion starts every sealed string; a new format gets a new version.
const sealVersion = "v1"

// sealEncoding encodes the nonce and ciphertext. Strict decoding refuses
// stray bits in the last character, so that every character of a sealed
// string is authenticated.
var sealEncoding = base64.RawURLEncoding.Strict()

// Errors of Vault.Open. Both fail closed: nothing is returned with them.
var (
	// ErrCannotOpen means a sealed string is malformed, was altered, or
	// belongs to another record.
	ErrCannotOpen = errors.New("sealed credentials cannot be opened")
	// ErrUnknownKey means a sealed string names a key that is neither
	// CREDENTIALS_KEY nor one of CREDENTIALS_KEY_PREVIOUS. Its text is the
	// one the service has always logged; Holds tells it apart up front.
	ErrUnknownKey = errors.New("sealed credentials name an unknown key")
)

// Purpose says what a sealed string holds. It is bound to the ciphertext
// with the owner's ids (see AAD), so that a record's sealed credentials,
// an item's sealed content and a task's sealed payload never open as one
// another even if an id were ever reused.
type Purpose uint8

// The purposes of sealed strings.
const (
	Credentials Purpose = iota // a user-integration record's credentials; ID is the record id
	ItemContent                // an item's content file; ID is the item id
	ItemMeta                   // an item's personal metadata; ID is the item id
	TaskPayload                // a queued task's payload; ID is the task id
	SyncState                  // a record's sync state; ID is the record id
)

// prefix is the purpose's mark in the additional data. The marks are
// those the service has always written in front of the id ("item:",
// "item-meta:", "task:", none for credentials), so that what was sealed
// before Purpose existed still opens.
func (p Purpose) prefix() string {
	switch p {
	case ItemContent:
		return "item:"
	case ItemMeta:
		return "item-meta:"
	case TaskPayload:
		return "task:"
	case SyncState:
		return "sync-state:"
	}
	return ""
}

// String names the purpose, for logs and errors.
func (p Purpose) String() string {
	switch p {
	case Credentials:
		return "credentials"
	case ItemContent:
		return "item content"
	case ItemMeta:
		return "item metadata"
	case TaskPayload:
		return "task payload"
	case SyncState:
		return "sync state"
	}
	return "unknown purpose"
}

// AAD identifies what a sealed string belongs to: its purpose, the user,
// the integration domain and the id of the record, item or task. It is
// bound to the ciphertext as additional data, so a sealed string copied
// into another record, item, user or integration does not open.
type AAD struct {
	Purpose Purpose
	UserID  string
	Domain  string // integration domain
	ID      string // the id of what is sealed: see Purpose
}

// bytes encodes a, after the sealed string's header, with each part
// length-prefixed so that no part can borrow bytes from its neighbour.
func (a AAD) bytes(header string) []byte {
	b := []byte("searchsvc credentials\x00")
	for _, part := range []string{header, a.UserID, a.Domain, a.Purpose.prefix() + a.ID} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return b
}

type vaultKey struct {
	id   string
	raw  []byte // for DeriveKey
	aead cipher.AEAD
}

// Vault seals credentials with AES-256-GCM. It seals under the current key
// and opens under the current key or a previous one, chosen by the key id
// every sealed string carries. A sealed string reads
// "v1.<key id>.<base64url(nonce | ciphertext)>", with a fresh random 96-bit
// nonce per seal. It is safe for concurrent use.
type Vault struct {
	current vaultKey
	keys    map[string]vaultKey // by id; includes current
	order   []string            // ids in the order given, current first
}

// KeyID returns the public id of a key: the first 8 bytes of a SHA-256 of
// the key, in hex.
func KeyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte("searchsvc credentials key id\x00"))
	h.Write(key)
	return hex.EncodeToString(h.Sum(nil)[:8])
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

// LoadVault builds a Vault from CREDENTIALS_KEY and the comma-separated
// CREDENTIALS_KEY_PREVIOUS, read through getenv.
func LoadVault(getenv func(string) string) (*Vault, error) {
	current, err := ParseKey("CREDENTIALS_KEY", getenv("CREDENTIALS_KEY"))
	if err != nil {
		return nil, err
	}
	var previous [][]byte
	for i, part := range strings.Split(getenv("CREDENTIALS_KEY_PREVIOUS"), ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		key, err := ParseKey(fmt.Sprintf("CREDENTIALS_KEY_PREVIOUS (entry %d)", i+1), part)
		if err != nil {
			return nil, err
		}
		previous = append(previous, key)
	}
	return NewVault(current, previous...)
}

// NewVault returns a Vault that seals under current and also opens what
// was sealed under any of previous. Each key is KeySize bytes.
func NewVault(current []byte, previous ...[]byte) (*Vault, error) {
	v := &Vault{keys: make(map[string]vaultKey, 1+len(previous))}
	for i, raw := range append([][]byte{current}, previous...) {
		k, err := newVaultKey(raw)
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("credentials key: %w", err)
			}
			return nil, fmt.Errorf("previous credentials key %d: %w", i, err)
		}
		if _, dup := v.keys[k.id]; dup {
			continue // the same key listed twice
		}
		v.keys[k.id] = k
		v.order = append(v.order, k.id)
		if i == 0 {
			v.current = k
		}
	}
	return v, nil
}

func newVaultKey(key []byte) (vaultKey, error) {
	if len(key) != KeySize {
		return vaultKey{}, fmt.Errorf("%d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return vaultKey{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return vaultKey{}, err
	}
	return vaultKey{id: KeyID(key), raw: bytes.Clone(key), aead: aead}, nil
}

// KeyID returns the id of the key the vault seals under.
func (v *Vault) KeyID() string { return v.current.id }

// Seal encrypts plaintext for the record aad under the current key.
func (v *Vault) Seal(aad AAD, plaintext []byte) (string, error) {
	k := v.current
	header := sealVersion + "." + k.id
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: nonce: %w", err)
	}
	blob := k.aead.Seal(nonce, nonce, plaintext, aad.bytes(header))
	return header + "." + sealEncoding.EncodeToString(blob), nil
}

// Open decrypts a sealed string of the record aad. A string that is
// malformed, altered or another record's is ErrCannotOpen; one sealed
// under a key the vault does not hold is ErrUnknownKey.
func (v *Vault) Open(aad AAD, sealed string) ([]byte, error) {
	k, header, payload, err := v.split(sealed)
	if err != nil {
		return nil, err
	}
	blob, err := sealEncoding.DecodeString(payload)
	ns := k.aead.NonceSize()
	if err != nil || len(blob) < ns+k.aead.Overhead() {
		return nil, ErrCannotOpen
	}
	plaintext, err := k.aead.Open(nil, blob[:ns], blob[ns:], aad.bytes(header))
	if err != nil {
		return nil, ErrCannotOpen
	}
	return plaintext, nil
}

// split parses a sealed string's header and finds its key.
func (v *Vault) split(sealed string) (k vaultKey, header, payload string, err error) {
	version, rest, ok1 := strings.Cut(sealed, ".")
	id, payload, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || version != sealVersion {
		return vaultKey{}, "", "", ErrCannotOpen
	}
	k, ok := v.keys[id]
	if !ok {
		return vaultKey{}, "", "", ErrUnknownKey
	}
	return k, version + "." + id, payload, nil
}

// SealedKeyID returns the id of the key sealed names in its header, and
// false for a string that is not a sealed string of this format.
func SealedKeyID(sealed string) (string, bool) {
	version, rest, ok1 := strings.Cut(sealed, ".")
	id, _, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || version != sealVersion {
		return "", false
	}
	return id, true
}

// Holds reports whether sealed names a key the vault holds (the current
// one or a previous one). It does not check that sealed opens; it is what
// start-up uses to refuse a CREDENTIALS_KEY that cannot open the store.
func (v *Vault) Holds(sealed string) bool {
	_, _, _, err := v.split(sealed)
	return err == nil
}

// NeedsRotation reports whether sealed was sealed under a previous key and
// should be sealed again under the current one (see Rotate). It does not
// check that sealed opens.
func (v *Vault) NeedsRotation(sealed string) bool {
	k, _, _, err := v.split(sealed)
	return err == nil && k.id != v.current.id
}

// Rotate opens sealed and seals it again under the current key.
func (v *Vault) Rotate(aad AAD, sealed string) (string, error) {
	plaintext, err := v.Open(aad, sealed)
	if err != nil {
		return "", err
	}
	return v.Seal(aad, plaintext)
}

// String describes v by its key ids; it holds no key material.
func (v *Vault) String() string {
	return fmt.Sprintf("Vault{keyId:%s previousKeys:%d}", v.current.id, len(v.keys)-1)
}

// Format makes every fmt verb print v without key material.
func (v *Vault) Format(f fmt.State, _ rune) { fmt.Fprint(f, v.String()) }

// LogValue makes slog log v without key material.
func (v *Vault) LogValue() slog.Value {
	return slog.GroupValue(slog.String("key_id", v.current.id), slog.Int("previous_keys", len(v.keys)-1))
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
