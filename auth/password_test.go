package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func newTestHasher(t testing.TB, p Params, n int) *Hasher {
	t.Helper()
	h, err := NewHasher(p, n)
	if err != nil {
		t.Fatalf("NewHasher: %v", err)
	}
	return h
}

func TestHashVerify(t *testing.T) {
	h := newTestHasher(t, tinyParams, 1)
	ctx := context.Background()
	enc, err := h.Hash(ctx, "a password")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("got %q, want the PHC form", enc)
	}
	if enc2, _ := h.Hash(ctx, "a password"); enc2 == enc {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{{"a password", true}, {"a passwore", false}, {"", false}, {"A PASSWORD", false}} {
		match, rehash, err := h.Verify(ctx, tc.pw, enc)
		if err != nil || match != tc.want || rehash {
			t.Errorf("Verify(%q) = %v, %v, %v; want %v, false, nil", tc.pw, match, rehash, err, tc.want)
		}
	}
}

func TestDefaultParamsPHC(t *testing.T) {
	p := DefaultParams()
	if p.Memory < 19*1024 || p.Time < 2 || p.Threads < 1 || p.SaltLen != 16 || p.KeyLen != 32 {
		t.Fatalf("defaults %+v weaker than m=19 MiB, t=2, p=1, 16-byte salt, 32-byte key", p)
	}
	enc := encodePHC(p, make([]byte, 16), make([]byte, 32))
	const want = "$argon2id$v=19$m=19456,t=2,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	if enc != want {
		t.Fatalf("got %s, want %s", enc, want)
	}
	got, salt, key, err := parsePHC(enc)
	if err != nil || got != p || len(salt) != 16 || len(key) != 32 {
		t.Fatalf("parsePHC = %+v, %d, %d, %v", got, len(salt), len(key), err)
	}
}

func TestVerifyRehashFlag(t *testing.T) {
	old := newTestHasher(t, tinyParams, 1)
	enc, _ := old.Hash(context.Background(), "pw-pw-pw-pw")
	stronger := tinyParams
	stronger.Time = 2
	cur := newTestHasher(t, stronger, 1)
	match, rehash, err := cur.Verify(context.Background(), "pw-pw-pw-pw", enc)
	if err != nil || !match || !rehash {
		t.Fatalf("got %v, %v, %v; want true, true, nil", match, rehash, err)
	}
}

func TestParsePHCRefuses(t *testing.T) {
	salt := "AAAAAAAAAAAAAAAAAAAAAA"
	key := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	for _, s := range []string{
		"",
		"$argon2i$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=16$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=4194304,t=1,p=1$" + salt + "$" + key, // 4 GiB: a damaged record
		"$argon2id$v=19$m=65537,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1000000,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=0,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=255$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=0$" + salt + "$" + key,
		"$argon2id$v=19$m=4,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=064,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=+64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$t=1,m=64,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "$",
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "==$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$AAAA$" + key,                    // 3-byte salt
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$AAAA",              // 3-byte key
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key[:42] + "B", // non-canonical last char
		"$argon2id$v=19$m=64,t=1,p=1$" + strings.Repeat("A", 10000) + "$" + key,
	} {
		if _, _, _, err := parsePHC(s); !errors.Is(err, ErrBadHash) {
			t.Errorf("parsePHC(%.80q) = %v, want ErrBadHash", s, err)
		}
	}
}

func TestNewHasherRefusesAbsurdParams(t *testing.T) {
	for _, p := range []Params{
		{Memory: 1 << 20, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32},
		{Memory: 64, Time: 0, Threads: 1, SaltLen: 16, KeyLen: 32},
		{Memory: 64, Time: 1, Threads: 1, SaltLen: 4, KeyLen: 32},
	} {
		if _, err := NewHasher(p, 1); err == nil {
			t.Errorf("NewHasher(%+v) succeeded, want an error", p)
		}
	}
	h, err := NewHasher(Params{}, 0)
	if err != nil || h.Params() != DefaultParams() {
		t.Fatalf("NewHasher(zero) = %+v, %v; want the defaults", h.Params(), err)
	}
}

// The concurrency limit queues hashes, and a queued hash gives up when its
// request does. It runs in a testing/synctest bubble: the request's
// deadline passes on the bubble's clock, and synctest.Wait shows the
// queued hash waiting for a slot, where a wall-clock window could miss a
// hash that ran anyway.
func TestHasherQueueRespectsContext(t *testing.T) {
	synctest.Test(t, testHasherQueueRespectsContext)
}

func testHasherQueueRespectsContext(t *testing.T) {
	h := newTestHasher(t, tinyParams, 2)
	h.slots.acquire(context.Background())
	h.slots.acquire(context.Background()) // both slots taken
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := h.Hash(ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	if n := h.derivations.Load(); n != 0 {
		t.Fatalf("got %d derivations while full, want 0", n)
	}
	done := make(chan error)
	go func() {
		_, err := h.Hash(context.Background(), "x")
		done <- err
	}()
	synctest.Wait() // the hash has run, or waits for a slot
	select {
	case <-done:
		t.Fatal("hash ran while both slots were taken")
	default:
	}
	h.slots.release() // a slot frees
	if err := <-done; err != nil {
		t.Fatalf("queued hash: %v", err)
	}
}

func FuzzParsePHC(f *testing.F) {
	h, _ := NewHasher(tinyParams, 1)
	enc, _ := h.Hash(context.Background(), "seed")
	f.Add(enc)
	f.Add(encodePHC(DefaultParams(), make([]byte, 16), make([]byte, 32)))
	f.Add("$argon2id$v=19$m=4294967295,t=4294967295,p=255$AAAA$AAAA")
	f.Add("$argon2id$v=19$m=,t=,p=$$")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		p, salt, key, err := parsePHC(s)
		if err != nil {
			if !errors.Is(err, ErrBadHash) {
				t.Fatalf("error %v does not match ErrBadHash", err)
			}
			return
		}
		if p.check() != nil {
			t.Fatalf("accepted out-of-bounds %+v", p)
		}
		// Only the canonical form is accepted, so it round-trips.
		if back := encodePHC(p, salt, key); back != s {
			t.Fatalf("round trip: got %q, want %q", back, s)
		}
	})
}

// A burst of hashes never runs more than the limit at once.
func TestHasherBoundsConcurrency(t *testing.T) {
	p := tinyParams
	p.Memory = 1024
	h := newTestHasher(t, p, 3)
	h.slots.maxWaiting = 32 // all queue: the bound on waiting has its own test
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if _, err := h.Hash(context.Background(), "burst burst"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := h.peak.Load(); got < 1 || got > 3 {
		t.Fatalf("peak concurrent hashes %d, want 1..3", got)
	}
	if got := h.derivations.Load(); got != 32 {
		t.Fatalf("%d derivations, want 32", got)
	}
}
