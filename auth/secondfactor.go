package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"searchsvc/auth/totp"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// Errors of the second factor (docs/security.md, "Second factor").
var (
	ErrTOTPRequired    = errors.New("auth: second factor code required")
	ErrTOTPInvalid     = errors.New("auth: invalid second factor code")
	ErrTOTPEnabled     = errors.New("auth: second factor already on")
	ErrTOTPNotEnabled  = errors.New("auth: second factor not on")
	ErrTOTPNotEnrolled = errors.New("auth: no second factor enrolment started")
)

// RecoveryCodes is how many recovery codes a user gets when the second
// factor is turned on or the codes are regenerated.
const RecoveryCodes = 10

// Per-user second factor attempts: wrong or reused codes (at login, on
// confirm, on disable) are counted per user, and past totpFreeFailures
// within totpFailureWindow every further attempt is refused with 429
// until the oldest leaves the window. With three codes valid at a time,
// five guesses in five minutes give an attacker who has the password one
// chance in about 67,000 per window (docs/security.md, "Second factor").
const (
	totpFreeFailures  = 5
	totpFailureWindow = 5 * time.Minute
)

// secondFactor is a user's second factor as the users table holds it.
// The secret is sealed (vault.TOTPSecret, bound to the user's id);
// recovery codes are kept only as SHA-256 hashes, hex: each code holds 80
// random bits, so the hash alone gives nothing away.
type secondFactor struct {
	Sealed []byte `json:"sealed"`
	// LastStep is the period (totp.Step) of the last code accepted: no
	// code of that period or an earlier one is accepted again.
	LastStep  int64     `json:"lastStep"`
	Recovery  []string  `json:"recovery"`
	EnabledAt time.Time `json:"enabledAt"`
}

// secondFactorAAD binds a sealed second factor secret to its user.
func secondFactorAAD(userID string) []byte { return vault.AAD(vault.TOTPSecret, userID) }

// sealSecret seals a second factor secret for userID.
func (u *Users) sealSecret(userID string, secret []byte) []byte {
	return u.keys.vault.Seal(secondFactorAAD(userID), secret)
}

// openSecret returns the secret sealed for userID.
func (u *Users) openSecret(userID string, sealed []byte) ([]byte, error) {
	return u.keys.vault.Open(secondFactorAAD(userID), sealed)
}

// record returns the live user record with id, its second factor (TOTP,
// nil when off) and pending enrolment (TOTPPending) included.
func (u *Users) record(id string) (userRecord, bool) {
	rec, ok := u.users.Get(id)
	if !ok || !rec.live() {
		return userRecord{}, false
	}
	return rec, true
}

// beginEnrolmentOp stores sealed as the user's pending secret, replacing
// any earlier one; the second factor itself is unchanged until confirmed.
func (u *Users) beginEnrolmentOp(id string, sealed []byte, now time.Time) storage.Op {
	return u.users.Update(id, func(v *userRecord) error {
		if !v.live() {
			return ErrUserNotFound
		}
		if v.TOTP != nil {
			return ErrTOTPEnabled
		}
		v.TOTPPending = sealed
		v.UpdatedAt = now
		return nil
	})
}

// confirmOp turns the second factor on with the pending secret that was
// checked (pending, the very bytes read), the step of the code that
// confirmed it, and the hashes of the new recovery codes.
func (u *Users) confirmOp(id string, pending []byte, step int64, hashes []string, now time.Time) storage.Op {
	return u.users.Update(id, func(v *userRecord) error {
		if !v.live() {
			return ErrUserNotFound
		}
		if v.TOTP != nil {
			return ErrTOTPEnabled
		}
		if !sameBytes(v.TOTPPending, pending) {
			// Another enrolment started meanwhile: the code checked was
			// for a secret that is no longer the pending one.
			return ErrTOTPNotEnrolled
		}
		v.TOTP = &secondFactor{Sealed: pending, LastStep: step, Recovery: hashes, EnabledAt: now}
		v.TOTPPending = nil
		v.UpdatedAt = now
		return nil
	})
}

// useStepOp records that a code of step was accepted; it fails with
// ErrTOTPInvalid if a code of that step or a later one was accepted
// meanwhile (two requests racing with one code: one wins).
func (u *Users) useStepOp(id string, step int64) storage.Op {
	return u.users.Update(id, func(v *userRecord) error {
		if !v.live() {
			return ErrUserNotFound
		}
		if v.TOTP == nil {
			return ErrTOTPNotEnabled
		}
		if step <= v.TOTP.LastStep {
			return ErrTOTPInvalid
		}
		f := *v.TOTP
		f.LastStep = step
		v.TOTP = &f
		return nil
	})
}

// useRecoveryOp removes the recovery code whose hash is hash; it fails
// with ErrTOTPInvalid if it is not (or no longer) there, so a recovery
// code works once even when two requests race with it.
func (u *Users) useRecoveryOp(id, hash string) storage.Op {
	return u.users.Update(id, func(v *userRecord) error {
		if !v.live() {
			return ErrUserNotFound
		}
		if v.TOTP == nil {
			return ErrTOTPNotEnabled
		}
		i := recoveryIndex(v.TOTP.Recovery, hash)
		if i < 0 {
			return ErrTOTPInvalid
		}
		f := *v.TOTP
		f.Recovery = append(append([]string(nil), f.Recovery[:i]...), f.Recovery[i+1:]...)
		v.TOTP = &f
		return nil
	})
}

// setRecoveryOp replaces the user's recovery codes by hashes.
func (u *Users) setRecoveryOp(id string, hashes []string, now time.Time) storage.Op {
	return u.users.Update(id, func(v *userRecord) error {
		if !v.live() {
			return ErrUserNotFound
		}
		if v.TOTP == nil {
			return ErrTOTPNotEnabled
		}
		f := *v.TOTP
		f.Recovery = hashes
		v.TOTP = &f
		v.UpdatedAt = now
		return nil
	})
}

// disableOp turns the second factor off and forgets any pending
// enrolment.
func (u *Users) disableOp(id string, now time.Time) storage.Op {
	return u.users.Update(id, func(v *userRecord) error {
		if !v.live() {
			return ErrUserNotFound
		}
		if v.TOTP == nil {
			return ErrTOTPNotEnabled
		}
		v.TOTP, v.TOTPPending = nil, nil
		v.UpdatedAt = now
		return nil
	})
}

// checkCode checks a code of the user's authenticator app, or else a
// recovery code, against rec's second factor: it returns the op that
// records the use (so that the code is not accepted again) or
// ErrTOTPInvalid. The op checks again, in the store's writer, that the
// code is still unused, so of two requests racing with one code one wins.
func (u *Users) checkCode(rec userRecord, code, recovery string, now time.Time) (storage.Op, error) {
	f := rec.TOTP
	if f == nil {
		return storage.Op{}, ErrTOTPNotEnabled
	}
	if code != "" {
		secret, err := u.openSecret(rec.ID, f.Sealed)
		if err != nil {
			return storage.Op{}, fmt.Errorf("open second factor secret: %w", err)
		}
		step, ok := totp.Verify(secret, code, now, f.LastStep)
		clear(secret)
		if !ok {
			return storage.Op{}, ErrTOTPInvalid
		}
		return u.useStepOp(rec.ID, step), nil
	}
	h := hashRecovery(recovery)
	if h == "" || recoveryIndex(f.Recovery, h) < 0 {
		return storage.Op{}, ErrTOTPInvalid
	}
	return u.useRecoveryOp(rec.ID, h), nil
}

// recoveryAlphabet is what recovery codes are written in: the digits and
// lower-case letters without 0, 1, l and o, which people misread.
const recoveryAlphabet = "23456789abcdefghijkmnpqrstuvwxyz"

// newRecoveryCodes returns RecoveryCodes fresh codes, each 16 characters
// of recoveryAlphabet (80 bits) written as four groups of four joined by
// dashes, and their hashes.
func newRecoveryCodes() (codes, hashes []string) {
	for range RecoveryCodes {
		var b [16]byte
		rand.Read(b[:]) // never fails
		var s strings.Builder
		for i, c := range b {
			if i > 0 && i%4 == 0 {
				s.WriteByte('-')
			}
			s.WriteByte(recoveryAlphabet[c%32])
		}
		codes = append(codes, s.String())
		hashes = append(hashes, hashRecovery(s.String()))
	}
	return codes, hashes
}

// normalizeRecovery is the form of a recovery code that is hashed: lower
// case, without the dashes and spaces people type or leave out. It is ""
// for anything that is not 16 characters of recoveryAlphabet.
func normalizeRecovery(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '-' || r == ' ':
			continue
		case r < 128 && strings.IndexByte(recoveryAlphabet, byte(r)) >= 0:
			if b.Len() == 16 {
				return ""
			}
			b.WriteRune(r)
		default:
			return ""
		}
	}
	if b.Len() != 16 {
		return ""
	}
	return b.String()
}

// hashRecovery is the stored form of a recovery code, "" for text that is
// not one.
func hashRecovery(code string) string {
	n := normalizeRecovery(code)
	if n == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(n))
	return hex.EncodeToString(sum[:])
}

// recoveryIndex is the index of hash in hashes, or -1.
func recoveryIndex(hashes []string, hash string) int {
	for i, h := range hashes {
		if subtle.ConstantTimeCompare([]byte(h), []byte(hash)) == 1 {
			return i
		}
	}
	return -1
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare(a, b) == 1
}
