// Package totp computes and checks the one-time codes of a second factor
// (RFC 6238, over HOTP of RFC 4226): a secret shared once with the user's
// authenticator app, and a code from it every period that proves the user
// holds the app. The service uses SHA-1, 6 digits and 30 seconds, what
// every authenticator app reads from an otpauth:// address; other hashes
// and lengths exist for the RFC's test vectors.
package totp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"hash"
	"net/url"
	"strings"
	"time"
)

// The parameters the service uses, as its otpauth:// address states them.
const (
	Digits = 6
	Period = 30 * time.Second
	// Skew is how many periods a code may be early or late: a phone's
	// clock a little off, or a code typed as it changed.
	Skew = 1
	// SecretSize is the secret's length in bytes: 160 bits, the size of
	// a SHA-1 output, as RFC 4226 recommends.
	SecretSize = 20
)

// Encoding is how a secret is written for people and apps: base32
// without padding (RFC 4648), upper case.
var Encoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewSecret returns a random secret from crypto/rand.
func NewSecret() []byte {
	s := make([]byte, SecretSize)
	rand.Read(s) // never fails
	return s
}

// URI is the otpauth:// address of secret for account (the user's email),
// which an authenticator app reads from a QR code.
func URI(issuer, account string, secret []byte) string {
	return "otpauth://totp/" + url.PathEscape(issuer) + ":" + url.PathEscape(account) +
		"?secret=" + Encoding.EncodeToString(secret) + "&issuer=" + url.QueryEscape(issuer) +
		"&algorithm=SHA1&digits=6&period=30"
}

// Step is the period number of t: seconds since the Unix epoch over the
// period, the counter of HOTP.
func Step(t time.Time) int64 { return t.Unix() / int64(Period/time.Second) }

// Code returns the service's code for secret at period step.
func Code(secret []byte, step int64) string { return HOTP(sha1.New, secret, step, Digits) }

// HOTP returns the code of RFC 4226 for counter under key with the given
// hash, digits long: the HMAC of the counter, dynamically truncated to 31
// bits, its last digits zero-padded.
func HOTP(h func() hash.Hash, key []byte, counter int64, digits int) string {
	mac := hmac.New(h, key)
	var c [8]byte
	binary.BigEndian.PutUint64(c[:], uint64(counter))
	mac.Write(c[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:]) & 0x7fffffff
	out := make([]byte, digits)
	for i := digits - 1; i >= 0; i-- {
		out[i] = byte('0' + v%10)
		v /= 10
	}
	return string(out)
}

// Verify checks code against secret at now, within Skew periods either
// side, and returns the period it matched. A period at or before
// lastUsed (the period of the code that last signed in) never matches, so
// a code works once: replayed, or seen over a shoulder, it is refused
// for the rest of its window. Every candidate is compared in constant
// time.
func Verify(secret []byte, code string, now time.Time, lastUsed int64) (step int64, ok bool) {
	code = strings.TrimSpace(code)
	if len(code) != Digits {
		return 0, false
	}
	cur := Step(now)
	for s := cur - Skew; s <= cur+Skew; s++ {
		match := subtle.ConstantTimeCompare([]byte(Code(secret, s)), []byte(code)) == 1
		if match && s > lastUsed && !ok {
			step, ok = s, true
		}
	}
	return step, ok
}
