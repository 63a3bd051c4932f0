package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// Params are Argon2id cost parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes over the memory
	Threads uint8  // lanes
	SaltLen uint32 // bytes of random salt
	KeyLen  uint32 // bytes of derived key
}

// DefaultParams returns the production parameters: 19 MiB, 2 passes, 1
// lane, a 16-byte salt and a 32-byte key (OWASP's minimum for Argon2id).
// About 19 MiB of RAM per hash in flight; see Hasher for the bound.
func DefaultParams() Params {
	return Params{Memory: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}
}

// Bounds on parameters, for the Hasher's own and for those read back from a
// stored hash. They refuse a damaged record that would make one login
// allocate gigabytes or spin for minutes on a 1 GB board.
const (
	maxMemory  = 64 * 1024 // KiB: 64 MiB, over three times the default
	maxTime    = 10
	maxThreads = 8
	minSaltLen = 8
	maxSaltLen = 64
	minKeyLen  = 16
	maxKeyLen  = 64
)

// ErrBadHash is matched by the error for a stored password hash that is not
// an Argon2id PHC string this package can verify, or whose parameters are
// outside its bounds.
var ErrBadHash = errors.New("auth: malformed password hash")

func (p Params) check() error {
	switch {
	case p.Threads < 1 || p.Threads > maxThreads:
		return fmt.Errorf("%w: p=%d outside 1..%d", ErrBadHash, p.Threads, maxThreads)
	case p.Memory < 8*uint32(p.Threads) || p.Memory > maxMemory:
		return fmt.Errorf("%w: m=%d KiB outside %d..%d", ErrBadHash, p.Memory, 8*uint32(p.Threads), maxMemory)
	case p.Time < 1 || p.Time > maxTime:
		return fmt.Errorf("%w: t=%d outside 1..%d", ErrBadHash, p.Time, maxTime)
	case p.SaltLen < minSaltLen || p.SaltLen > maxSaltLen:
		return fmt.Errorf("%w: salt of %d bytes outside %d..%d", ErrBadHash, p.SaltLen, minSaltLen, maxSaltLen)
	case p.KeyLen < minKeyLen || p.KeyLen > maxKeyLen:
		return fmt.Errorf("%w: key of %d bytes outside %d..%d", ErrBadHash, p.KeyLen, minKeyLen, maxKeyLen)
	}
	return nil
}

// Hasher hashes and verifies passwords with Argon2id. At most a fixed
// number of hashes run at once, so a burst of logins costs at most
// concurrency × Memory of RAM: 4 × 19 MiB on a 4-core Pi at the defaults.
// The rest wait their turn in arrival order (or until their request is
// cancelled), and at most queuePerSlot × concurrency wait: beyond that a
// hash is refused at once with ErrBusy, so a flood of logins cannot make
// everyone else's wait grow without end. It is safe for concurrent use.
type Hasher struct {
	params Params
	slots  *fifo
	dummy  string                                       // a hash of nothing, for unknown emails
	argon  func(password, salt []byte, p Params) []byte // argon2.IDKey; tests hold it
	// idle, if set, runs in a goroutine of its own when the last running
	// hash ends and none waits, at most one at a time: main gives the
	// memory of the finished hashes back to the system there, so a burst
	// of logins does not leave its peak resident for minutes.
	idle     func()
	idleBusy atomic.Bool
	// before, if set, runs before each hash, in its slot: main runs the
	// collector there (runtime.GC), so that the memory of the hashes that
	// ended, and whatever else is garbage, is reused by this one rather
	// than added to it while it waits to be collected.
	before func()

	// For tests: Argon2 runs so far, and the most that ran at once.
	derivations atomic.Int64
	running     atomic.Int64
	peak        atomic.Int64
}

// NewHasher returns a Hasher for p that runs at most concurrency hashes at
// once. A zero p means DefaultParams(); concurrency ≤ 0 means
// runtime.NumCPU(). Parameters outside the bounds a stored hash may have
// (memory up to 64 MiB, time up to 10, threads up to 8) are an error.
func NewHasher(p Params, concurrency int) (*Hasher, error) {
	if p == (Params{}) {
		p = DefaultParams()
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("argon2 parameters: %w", err)
	}
	if concurrency <= 0 {
		concurrency = runtime.NumCPU()
	}
	h := &Hasher{params: p, slots: newFIFO(concurrency, queuePerSlot*concurrency), argon: idKey}
	// The dummy costs nothing to make: a random salt and key in the current
	// parameters, which no password derives.
	h.dummy = encodePHC(p, randomBytes(int(p.SaltLen)), randomBytes(int(p.KeyLen)))
	return h, nil
}

// Params returns the parameters new hashes are made with.
func (h *Hasher) Params() Params { return h.params }

// Hash returns the PHC string of password with a fresh random salt:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>, both in unpadded standard
// base64. It fails only if ctx ends while the hash waits for its turn.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	salt := randomBytes(int(h.params.SaltLen))
	key, err := h.derive(ctx, password, salt, h.params)
	if err != nil {
		return "", err
	}
	return encodePHC(h.params, salt, key), nil
}

// Verify reports whether password matches the PHC string encoded, and
// whether encoded was made with parameters other than the current ones and
// so should be replaced by a new Hash. The keys are compared in constant
// time. err matches ErrBadHash for a string it cannot use, or is ctx's
// error.
func (h *Hasher) Verify(ctx context.Context, password, encoded string) (match, rehash bool, err error) {
	p, salt, key, err := parsePHC(encoded)
	if err != nil {
		return false, false, err
	}
	got, err := h.derive(ctx, password, salt, p)
	if err != nil {
		return false, false, err
	}
	return subtle.ConstantTimeCompare(got, key) == 1, p != h.params, nil
}

// verifyDummy spends the time a Verify of a real hash would, so that an
// unknown email is not told apart by the answer's delay.
func (h *Hasher) verifyDummy(ctx context.Context, password string) error {
	_, _, err := h.Verify(ctx, password, h.dummy)
	return err
}

// derive runs Argon2id once a slot is free.
func (h *Hasher) derive(ctx context.Context, password string, salt []byte, p Params) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := h.slots.acquire(ctx); err != nil {
		return nil, err
	}
	defer h.release()
	if h.before != nil {
		h.before()
	}
	h.derivations.Add(1)
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for old := h.peak.Load(); n > old && !h.peak.CompareAndSwap(old, n); old = h.peak.Load() {
	}
	return h.argon([]byte(password), salt, p), nil
}

func idKey(password, salt []byte, p Params) []byte {
	return argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, p.KeyLen)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails; it crashes the program instead
	return b
}

var b64 = base64.RawStdEncoding.Strict()

const phcPrefix = "$argon2id$v=19$"

func encodePHC(p Params, salt, key []byte) string {
	var sb strings.Builder
	sb.Grow(len(phcPrefix) + 32 + b64.EncodedLen(len(salt)) + b64.EncodedLen(len(key)))
	sb.WriteString(phcPrefix)
	sb.WriteString("m=")
	sb.WriteString(strconv.FormatUint(uint64(p.Memory), 10))
	sb.WriteString(",t=")
	sb.WriteString(strconv.FormatUint(uint64(p.Time), 10))
	sb.WriteString(",p=")
	sb.WriteString(strconv.FormatUint(uint64(p.Threads), 10))
	sb.WriteByte('$')
	sb.WriteString(b64.EncodeToString(salt))
	sb.WriteByte('$')
	sb.WriteString(b64.EncodeToString(key))
	return sb.String()
}

// parsePHC reads an Argon2id PHC string in the one canonical form
// encodePHC writes: version 19, parameters m, t, p in that order as decimal
// numbers without leading zeros, strict unpadded base64. Anything else,
// and any parameter outside the bounds, is ErrBadHash, before anything is
// allocated for the hash itself.
func parsePHC(s string) (p Params, salt, key []byte, err error) {
	bad := func(why string) (Params, []byte, []byte, error) {
		return Params{}, nil, nil, fmt.Errorf("%w: %s", ErrBadHash, why)
	}
	rest, ok := strings.CutPrefix(s, phcPrefix)
	if !ok {
		return bad("not $argon2id$v=19$")
	}
	var m, t, th uint64
	if m, rest, ok = cutParam(rest, "m=", ',', maxMemory); !ok {
		return bad("bad m")
	}
	if t, rest, ok = cutParam(rest, "t=", ',', maxTime); !ok {
		return bad("bad t")
	}
	if th, rest, ok = cutParam(rest, "p=", '$', maxThreads); !ok {
		return bad("bad p")
	}
	saltB64, keyB64, ok := strings.Cut(rest, "$")
	if !ok {
		return bad("no key")
	}
	if len(saltB64) > b64.EncodedLen(maxSaltLen) || len(keyB64) > b64.EncodedLen(maxKeyLen) {
		return bad("salt or key too long")
	}
	if salt, err = b64.DecodeString(saltB64); err != nil {
		return bad("salt is not base64")
	}
	if key, err = b64.DecodeString(keyB64); err != nil {
		return bad("key is not base64")
	}
	p = Params{Memory: uint32(m), Time: uint32(t), Threads: uint8(th), SaltLen: uint32(len(salt)), KeyLen: uint32(len(key))}
	if err := p.check(); err != nil {
		return Params{}, nil, nil, err
	}
	return p, salt, key, nil
}

// cutParam reads name, a canonical decimal number no larger than max, and
// the separator sep from the front of s.
func cutParam(s, name string, sep byte, max uint64) (n uint64, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, name)
	if !ok {
		return 0, "", false
	}
	i := strings.IndexByte(s, sep)
	if i <= 0 || i > 10 || (s[0] == '0' && i > 1) {
		return 0, "", false
	}
	for j := 0; j < i; j++ {
		if s[j] < '0' || s[j] > '9' {
			return 0, "", false
		}
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil || n > max {
		return 0, "", false
	}
	return n, s[i+1:], true
}

// release frees the caller's slot and, if that leaves the hasher idle,
// runs idle.
func (h *Hasher) release() {
	if !h.slots.release() || h.idle == nil || !h.idleBusy.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer h.idleBusy.Store(false)
		h.idle()
	}()
}
