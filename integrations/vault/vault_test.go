package vault

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func newKey(t testing.TB) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	rand.Read(k)
	return k
}

func newVault(t testing.TB, current []byte, previous ...[]byte) *Vault {
	t.Helper()
	v, err := NewVault(current, previous...)
	if err != nil {
		t.Fatalf("NewVault: %v", err)
	}
	return v
}

var testAAD = AAD{UserID: "u1", Domain: "gmail", ID: "r1"}

func TestVaultRoundTrip(t *testing.T) {
	v := newVault(t, newKey(t))
	for _, plaintext := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("secret"), 1000)} {
		sealed, err := v.Seal(testAAD, plaintext)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sealed, "v1."+v.KeyID()+".") {
			t.Errorf("sealed %q: want prefix v1.%s.", sealed, v.KeyID())
		}
		// A short plaintext's base64 can turn up in random ciphertext by
		// chance; only a long one says anything.
		if len(plaintext) >= 16 && strings.Contains(sealed, base64.RawURLEncoding.EncodeToString(plaintext)) {
			t.Error("sealed string holds the plaintext")
		}
		got, err := v.Open(testAAD, sealed)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if !bytes.Equal(got, plaintext) {
			t.Errorf("Open: got %d bytes, want %d", len(got), len(plaintext))
		}
	}
}

func TestVaultTamperFails(t *testing.T) {
	v := newVault(t, newKey(t))
	sealed, err := v.Seal(testAAD, []byte("top secret"))
	if err != nil {
		t.Fatal(err)
	}
	// Every character of the string, and every bit of the decoded blob.
	for i := range len(sealed) {
		b := []byte(sealed)
		b[i] ^= 0x01
		if _, err := v.Open(testAAD, string(b)); err == nil {
			t.Errorf("flipping character %d (%q): Open succeeded, want failure", i, sealed[i])
		}
	}
	prefix := sealed[:strings.LastIndex(sealed, ".")+1]
	blob, _ := sealEncoding.DecodeString(sealed[len(prefix):])
	for i := range len(blob) * 8 {
		b := bytes.Clone(blob)
		b[i/8] ^= 1 << (i % 8)
		_, err := v.Open(testAAD, prefix+sealEncoding.EncodeToString(b))
		if !errors.Is(err, ErrCannotOpen) {
			t.Fatalf("flipping bit %d: got %v, want ErrCannotOpen", i, err)
		}
	}
	for _, cut := range []string{sealed[:len(sealed)-1], sealed + "A", prefix, "", "v1", "v2" + sealed[2:]} {
		if _, err := v.Open(testAAD, cut); err == nil {
			t.Errorf("Open(%q): succeeded, want failure", cut)
		}
	}
}

func TestVaultAADBinds(t *testing.T) {
	v := newVault(t, newKey(t))
	sealed, err := v.Seal(AAD{UserID: "ab", Domain: "c", ID: "r"}, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	others := []AAD{
		{UserID: "a", Domain: "bc", ID: "r"}, // same bytes, shifted part boundary
		{UserID: "ab", Domain: "c", ID: "r2"},
		{UserID: "other", Domain: "c", ID: "r"},
		{UserID: "ab", Domain: "slack", ID: "r"},
		{},
	}
	for _, aad := range others {
		if _, err := v.Open(aad, sealed); !errors.Is(err, ErrCannotOpen) {
			t.Errorf("Open with %+v: got %v, want ErrCannotOpen", aad, err)
		}
	}
}

func TestVaultKeys(t *testing.T) {
	oldKey, newK, strange := newKey(t), newKey(t), newKey(t)
	old := newVault(t, oldKey)
	sealedOld, err := old.Seal(testAAD, []byte("from before"))
	if err != nil {
		t.Fatal(err)
	}

	rotated := newVault(t, newK, oldKey)
	got, err := rotated.Open(testAAD, sealedOld)
	if err != nil || string(got) != "from before" {
		t.Fatalf("Open under a previous key: got %q, %v; want the plaintext", got, err)
	}
	if !rotated.NeedsRotation(sealedOld) {
		t.Error("NeedsRotation(sealed under previous key): got false, want true")
	}
	resealed, err := rotated.Rotate(testAAD, sealedOld)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.NeedsRotation(resealed) || !strings.HasPrefix(resealed, "v1."+KeyID(newK)+".") {
		t.Errorf("Rotate: got %q, want sealed under the current key", resealed)
	}
	if _, err := old.Open(testAAD, resealed); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("old vault opening a rotated string: got %v, want ErrUnknownKey", err)
	}

	// A wrong key presented under the right key id still fails.
	forged := "v1." + KeyID(oldKey) + sealedOld[strings.LastIndex(sealedOld, "."):]
	imposter := &Vault{keys: map[string]vaultKey{}}
	k, _ := newVaultKey(strange)
	k.id = KeyID(oldKey)
	imposter.current, imposter.keys[k.id] = k, k
	if _, err := imposter.Open(testAAD, forged); !errors.Is(err, ErrCannotOpen) {
		t.Errorf("wrong key with the right id: got %v, want ErrCannotOpen", err)
	}
	if _, err := newVault(t, strange).Open(testAAD, sealedOld); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key id: got %v, want ErrUnknownKey", err)
	}
	if newVault(t, strange).NeedsRotation("garbage") {
		t.Error("NeedsRotation(garbage): got true, want false")
	}
}

func TestVaultNoncesUnique(t *testing.T) {
	v := newVault(t, newKey(t))
	const n = 20000
	seen := make(map[string]bool, n)
	for range n {
		sealed, err := v.Seal(testAAD, []byte("same plaintext"))
		if err != nil {
			t.Fatal(err)
		}
		blob, _ := sealEncoding.DecodeString(sealed[strings.LastIndex(sealed, ".")+1:])
		nonce := string(blob[:12])
		if seen[nonce] {
			t.Fatalf("nonce repeated after %d seals", len(seen))
		}
		seen[nonce] = true
	}
}

func TestParseKey(t *testing.T) {
	key := newKey(t)
	good := []string{
		base64.StdEncoding.EncodeToString(key),
		base64.RawStdEncoding.EncodeToString(key),
		base64.URLEncoding.EncodeToString(key),
		base64.RawURLEncoding.EncodeToString(key) + "\n",
	}
	for _, s := range good {
		got, err := ParseKey("CREDENTIALS_KEY", s)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("ParseKey(%q): got %v, want the key", s, err)
		}
	}
	bad := map[string]string{
		"empty":      "",
		"not base64": "this is not base64!!",
		"too short":  base64.StdEncoding.EncodeToString(key[:16]),
		"too long":   base64.StdEncoding.EncodeToString(append(key, 1)),
		"all zero":   base64.StdEncoding.EncodeToString(make([]byte, KeySize)),
	}
	for name, s := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := ParseKey("CREDENTIALS_KEY", s)
			if err == nil || !strings.Contains(err.Error(), "CREDENTIALS_KEY") {
				t.Fatalf("got %v, want an error naming CREDENTIALS_KEY", err)
			}
			if s != "" && strings.Contains(err.Error(), s) {
				t.Errorf("error %q repeats the value", err)
			}
		})
	}
}

func TestLoadVault(t *testing.T) {
	cur, prev1, prev2 := newKey(t), newKey(t), newKey(t)
	enc := base64.StdEncoding.EncodeToString
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	v, err := LoadVault(env(map[string]string{
		"CREDENTIALS_KEY":          enc(cur),
		"CREDENTIALS_KEY_PREVIOUS": enc(prev1) + ", " + enc(prev2) + ",," + enc(cur),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if v.KeyID() != KeyID(cur) || len(v.keys) != 3 {
		t.Errorf("LoadVault: got key %s with %d keys, want %s with 3", v.KeyID(), len(v.keys), KeyID(cur))
	}

	tests := []struct {
		name, errHas string
		env          map[string]string
	}{
		{"missing", "CREDENTIALS_KEY is empty", map[string]string{}},
		{"bad current", "CREDENTIALS_KEY ", map[string]string{"CREDENTIALS_KEY": "AAAA"}},
		{"bad previous", "CREDENTIALS_KEY_PREVIOUS (entry 2)", map[string]string{
			"CREDENTIALS_KEY": enc(cur), "CREDENTIALS_KEY_PREVIOUS": enc(prev1) + ",nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadVault(env(tt.env))
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("got %v, want an error containing %q", err, tt.errHas)
			}
		})
	}
	if _, err := NewVault(cur[:31]); err == nil {
		t.Error("NewVault with a 31-byte key: got nil error")
	}
}

func TestVaultRedacts(t *testing.T) {
	key := newKey(t)
	v := newVault(t, key, newKey(t))
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("vault", "vault", v)
	outs := []string{buf.String(), fmt.Sprintf("%v %+v %#v %s %x", v, v, v, v, v)}
	for _, out := range outs {
		if !strings.Contains(out, v.KeyID()) {
			t.Errorf("output %q lacks the key id", out)
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
			if strings.Contains(out, enc.EncodeToString(key)[:8]) {
				t.Errorf("output %q holds key material", out)
			}
		}
	}
}

func FuzzVaultOpen(f *testing.F) {
	v := newVault(f, bytes.Repeat([]byte{7}, KeySize))
	sealed, _ := v.Seal(testAAD, []byte("seed"))
	for _, s := range []string{sealed, "", "v1..", "v1." + v.KeyID() + ".", "v1." + v.KeyID() + ".AAAA", sealed + "=", "v1.x.y.z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := v.Open(testAAD, s)
		if err == nil && string(got) != "seed" {
			// Only genuine seals of "seed" open; anything else would be a
			// GCM forgery.
			t.Fatalf("Open(%q) = %q, want an error", s, got)
		}
		if err != nil && got != nil {
			t.Fatalf("Open(%q) returned data with error %v", s, err)
		}
		v.NeedsRotation(s)
	})
}
