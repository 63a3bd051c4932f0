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

func newSecret(t testing.TB) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	rand.Read(k)
	return k
}

func newVault(t testing.TB, current []byte, previous ...[]byte) *Vault {
	t.Helper()
	v, err := New(current, previous...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

var testAAD = AAD(Credentials, "u1", "gmail", "r1")

func TestRoundTrip(t *testing.T) {
	v := newVault(t, newSecret(t))
	for _, plaintext := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("secret"), 1000)} {
		sealed := v.Seal(testAAD, plaintext)
		if len(sealed) != len(plaintext)+Overhead {
			t.Errorf("sealed %d bytes: got %d, want %d", len(plaintext), len(sealed), len(plaintext)+Overhead)
		}
		if id, ok := SealedKeyID(sealed); !ok || id != v.KeyID() {
			t.Errorf("SealedKeyID: got %q, %v; want %s", id, ok, v.KeyID())
		}
		if len(plaintext) >= 16 && bytes.Contains(sealed, plaintext[:16]) {
			t.Error("sealed value holds the plaintext")
		}
		got, err := v.Open(testAAD, sealed)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if !bytes.Equal(got, plaintext) {
			t.Errorf("Open: got %d bytes, want %d", len(got), len(plaintext))
		}
		if !v.Current(sealed) || !v.Holds(sealed) {
			t.Errorf("Current, Holds: got %v, %v; want true, true", v.Current(sealed), v.Holds(sealed))
		}
	}
}

// TestAppend: AppendSeal keeps what dst held, and AppendOpen opens in
// place, over the ciphertext, as the search index does.
func TestAppend(t *testing.T) {
	v := newVault(t, newSecret(t))
	b := v.AppendSeal([]byte("head"), testAAD, []byte("block body"))
	if string(b[:4]) != "head" {
		t.Fatalf("AppendSeal overwrote dst: %q", b[:4])
	}
	sealed := b[4:]
	got, err := v.AppendOpen(sealed[Overhead-tagSize:][:0], testAAD, sealed)
	if err != nil || string(got) != "block body" {
		t.Fatalf("AppendOpen in place: got %q, %v", got, err)
	}
}

// TestTamperFails: changing any one byte of a sealed value, or cutting it
// short, makes it fail to open, and nothing is returned with the error.
func TestTamperFails(t *testing.T) {
	v := newVault(t, newSecret(t))
	sealed := v.Seal(testAAD, []byte("top secret"))
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x01
		got, err := v.Open(testAAD, bad)
		if err == nil || got != nil {
			t.Errorf("byte %d flipped: got %q, %v; want nil and an error", i, got, err)
		}
		if i >= headerSize && !errors.Is(err, ErrCannotOpen) {
			t.Errorf("byte %d flipped: got %v, want ErrCannotOpen", i, err)
		}
	}
	for _, n := range []int{0, 1, headerSize, Overhead - 1, len(sealed) - 1} {
		if _, err := v.Open(testAAD, sealed[:n]); !errors.Is(err, ErrCannotOpen) {
			t.Errorf("cut to %d bytes: got %v, want ErrCannotOpen", n, err)
		}
	}
	if _, err := v.Open(testAAD, append(bytes.Clone(sealed), 0)); !errors.Is(err, ErrCannotOpen) {
		t.Errorf("a byte appended: got %v, want ErrCannotOpen", err)
	}
}

// TestAADBinds: a value sealed for one owner or purpose does not open as
// another's, and no part of the additional data borrows from another.
func TestAADBinds(t *testing.T) {
	v := newVault(t, newSecret(t))
	sealed := v.Seal(testAAD, []byte("secret"))
	others := [][]byte{
		nil,
		AAD(Credentials, "u2", "gmail", "r1"),
		AAD(Credentials, "u1", "slack", "r1"),
		AAD(Credentials, "u1", "gmail", "r2"),
		AAD(Credentials, "u1g", "mail", "r1"),
		AAD(Credentials, "u1", "gmail", "r1", ""),
		AAD(ItemMeta, "u1", "gmail", "r1"),
	}
	for _, aad := range others {
		if _, err := v.Open(aad, sealed); !errors.Is(err, ErrCannotOpen) {
			t.Errorf("Open with %q: got %v, want ErrCannotOpen", aad, err)
		}
	}
	purposes := []Purpose{Credentials, ItemContent, ItemMeta, TaskPayload, SyncState, UserSecrets, UserEmail, Session, SessionID, SearchIndex, TOTPSecret}
	names := map[string]Purpose{}
	for _, p := range purposes {
		if q, dup := names[p.String()]; dup || p.String() == "unknown purpose" {
			t.Errorf("purpose %d is named %q, as %d is", p, p, q)
		}
		names[p.String()] = p
		s := v.Seal(AAD(p, "x"), []byte("v"))
		for _, q := range purposes {
			_, err := v.Open(AAD(q, "x"), s)
			if p == q && err != nil {
				t.Errorf("%v opened as itself: got %v, want nil", p, err)
			}
			if p != q && !errors.Is(err, ErrCannotOpen) {
				t.Errorf("%v opened as %v: got %v, want ErrCannotOpen", p, q, err)
			}
		}
	}
	// The layout is what stored values were sealed with: pinned.
	if got, want := AAD(TaskPayload, "u", "ab"), []byte("\x0ctask payload\x01u\x02ab"); !bytes.Equal(got, want) {
		t.Errorf("AAD: got %q, want %q", got, want)
	}
}

// TestKeys: a previous secret opens and is reported not current, Reseal
// moves a value to the current secret, an unknown key id is told apart,
// and a wrong secret under the right key id does not open.
func TestKeys(t *testing.T) {
	oldSecret, current, strange := newSecret(t), newSecret(t), newSecret(t)
	old := newVault(t, oldSecret)
	sealedOld := old.Seal(testAAD, []byte("from before"))

	rotated := newVault(t, current, oldSecret)
	got, err := rotated.Open(testAAD, sealedOld)
	if err != nil || string(got) != "from before" {
		t.Fatalf("Open under a previous secret: got %q, %v; want the plaintext", got, err)
	}
	if rotated.Current(sealedOld) || !rotated.Holds(sealedOld) || !rotated.Stale(sealedOld) {
		t.Errorf("previous secret's value: Current %v, Holds %v, Stale %v; want false, true, true",
			rotated.Current(sealedOld), rotated.Holds(sealedOld), rotated.Stale(sealedOld))
	}
	resealed, changed, err := rotated.Reseal(testAAD, sealedOld)
	if err != nil || !changed || !rotated.Current(resealed) {
		t.Fatalf("Reseal: got changed %v, current %v, %v; want true, true, nil", changed, rotated.Current(resealed), err)
	}
	if id, _ := SealedKeyID(resealed); id != KeyID(current) {
		t.Errorf("Reseal: key id %s, want %s", id, KeyID(current))
	}
	if got, err := rotated.Open(testAAD, resealed); err != nil || string(got) != "from before" {
		t.Errorf("Open(Reseal): got %q, %v", got, err)
	}
	again, changed, err := rotated.Reseal(testAAD, resealed)
	if err != nil || changed || !bytes.Equal(again, resealed) {
		t.Errorf("Reseal of a current value: got changed %v, %v; want it unchanged", changed, err)
	}
	if _, _, err := rotated.Reseal(AAD(ItemMeta, "u1", "gmail", "r1"), sealedOld); !errors.Is(err, ErrCannotOpen) {
		t.Errorf("Reseal with the wrong aad: got %v, want ErrCannotOpen", err)
	}
	if _, err := old.Open(testAAD, resealed); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("old vault opening a resealed value: got %v, want ErrUnknownKey", err)
	}
	if old.Holds(resealed) || old.Stale(resealed) || rotated.Stale(resealed) {
		t.Error("Holds or Stale of an unknown key's value, or Stale of a current one: got true, want false")
	}
	if _, _, err := old.Reseal(testAAD, resealed); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("Reseal of an unknown key's value: got %v, want ErrUnknownKey", err)
	}

	// A wrong secret presented under the right key id still fails.
	imposter := newVault(t, strange)
	imposter.current.id = keyID(oldSecret)
	imposter.keys = map[uint32]*key{imposter.current.id: imposter.current}
	if _, err := imposter.Open(testAAD, sealedOld); !errors.Is(err, ErrCannotOpen) {
		t.Errorf("wrong secret with the right id: got %v, want ErrCannotOpen", err)
	}
	if rotated.Current([]byte("garbage")) || rotated.Holds(nil) {
		t.Error("Current or Holds of garbage: got true, want false")
	}
	if _, ok := SealedKeyID([]byte("v1.abc.def")); ok {
		t.Error("SealedKeyID of the string format: got ok")
	}
}

// TestDerive pins the key derivation and the key id: every stored value
// depends on them.
func TestDerive(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, KeySize)
	if got, want := KeyID(secret), "14017815"; got != want {
		t.Errorf("KeyID: got %s, want %s", got, want)
	}
	if got := newVault(t, secret).KeyID(); got != KeyID(secret) {
		t.Errorf("Vault.KeyID: got %s, want %s", got, KeyID(secret))
	}
	if KeyID(secret) == KeyID(newSecret(t)) {
		t.Error("two secrets share a key id")
	}
	if bytes.Equal(derive(secret, "seal"), derive(secret, "key id")) || bytes.Equal(derive(secret, "seal"), derive(newSecret(t), "seal")) {
		t.Error("derived keys are not independent")
	}
	if _, err := New(nil); err == nil {
		t.Error("New without a secret: got nil error")
	}
	if _, err := New(secret, nil); err == nil {
		t.Error("New with an empty previous secret: got nil error")
	}
	if v := newVault(t, secret, secret); len(v.keys) != 1 {
		t.Errorf("the same secret twice: got %d keys, want 1", len(v.keys))
	}
}

func TestIndex(t *testing.T) {
	k1, k2 := newSecret(t), newSecret(t)
	a, b := newVault(t, k1).Index(UserEmail), newVault(t, k2).Index(UserEmail)
	if newVault(t, k1).Index(UserEmail).Sum("x@y") != a.Sum("x@y") || a.Sum("x@y") == a.Sum("x@z") || a.Sum("x@y") == b.Sum("x@y") {
		t.Error("an index must be stable per secret and value (across restarts), and differ across secrets and values")
	}
	if newVault(t, k1).Index(SessionID).Sum("x@y") == a.Sum("x@y") {
		t.Error("two purposes share an index key")
	}
	if newVault(t, k2, k1).Index(UserEmail).Sum("x@y") != b.Sum("x@y") {
		t.Error("an index does not follow the current secret")
	}
	if got := a.Sum("x@y"); len(got) != 43 || strings.Contains(got, "x@y") {
		t.Errorf("Sum: got %q, want 43 characters of base64url", got)
	}
}

func TestNoncesUnique(t *testing.T) {
	v := newVault(t, newSecret(t))
	const n = 20000
	seen := make(map[string]bool, n)
	for range n {
		sealed := v.Seal(testAAD, []byte("same plaintext"))
		nonce := string(sealed[headerSize : headerSize+nonceSize])
		if seen[nonce] {
			t.Fatalf("nonce repeated after %d seals", len(seen))
		}
		seen[nonce] = true
	}
}

func TestParseKey(t *testing.T) {
	key := newSecret(t)
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

func TestRedacts(t *testing.T) {
	key := newSecret(t)
	v := newVault(t, key, newSecret(t))
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

func FuzzOpen(f *testing.F) {
	v := newVault(f, bytes.Repeat([]byte{7}, KeySize))
	sealed := v.Seal(testAAD, []byte("seed"))
	for _, s := range [][]byte{sealed, nil, {version}, sealed[:headerSize], sealed[:Overhead], append(bytes.Clone(sealed), 0), []byte("v1.x.y")} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		got, err := v.Open(testAAD, s)
		if err == nil && string(got) != "seed" {
			// Only genuine seals of "seed" open; anything else would be a
			// GCM forgery.
			t.Fatalf("Open(%q) = %q, want an error", s, got)
		}
		if err != nil && got != nil {
			t.Fatalf("Open(%q) returned data with error %v", s, err)
		}
		v.Current(s)
		v.Reseal(testAAD, s)
	})
}
