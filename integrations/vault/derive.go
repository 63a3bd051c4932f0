package vault

import (
	"crypto/sha256"
	"io"

	"golang.org/x/crypto/hkdf"
)

// DerivedKey is a subkey derived from one generation of the credentials
// key, named by that key's id.
type DerivedKey struct {
	KeyID string // the id of the credentials key it was derived from (see KeyID)
	Key   []byte // KeySize bytes
}

// DeriveKey returns a KeySize-byte subkey of the current key for purpose
// (a name such as "search index"), with HKDF-SHA-256: the same key and
// purpose always give the same subkey, two purposes give independent
// ones, and a subkey reveals nothing of the key. It lets another part of
// the service (the search index) seal its own data under CREDENTIALS_KEY
// without sharing the key itself.
func (v *Vault) DeriveKey(purpose string) []byte {
	return derive(v.current.raw, purpose)
}

// DerivedKeys returns the subkeys for purpose of every key the vault
// holds, the current key's first, so that data sealed under a subkey of
// CREDENTIALS_KEY_PREVIOUS still opens after a rotation.
func (v *Vault) DerivedKeys(purpose string) []DerivedKey {
	out := []DerivedKey{{KeyID: v.current.id, Key: derive(v.current.raw, purpose)}}
	for _, k := range v.previous() {
		out = append(out, DerivedKey{KeyID: k.id, Key: derive(k.raw, purpose)})
	}
	return out
}

// previous returns the previous keys in the order they were given.
func (v *Vault) previous() []vaultKey {
	out := make([]vaultKey, 0, len(v.order))
	for _, id := range v.order {
		if id != v.current.id {
			out = append(out, v.keys[id])
		}
	}
	return out
}

// deriveInfo prefixes the purpose in HKDF's info, so that the subkeys of
// this service never equal another program's from the same key.
const deriveInfo = "searchsvc derived key\x00"

func derive(key []byte, purpose string) []byte {
	r := hkdf.New(sha256.New, key, nil, []byte(deriveInfo+purpose))
	out := make([]byte, KeySize)
	io.ReadFull(r, out) // HKDF-SHA-256 gives up to 8160 bytes; 32 cannot fail
	return out
}
