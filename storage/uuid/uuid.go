// Package uuid makes and checks the random ids of the service's records
// (users, sessions, integration records, items, tasks) and of its
// requests. It imports only the standard library, so that every package,
// the storage and HTTP leaves included, can name a record without
// importing another's concerns.
package uuid

import (
	"crypto/rand"
	"encoding/hex"
)

// New returns a random (version 4) UUID in its canonical 36-character
// form, drawn from crypto/rand.
func New() string {
	var b [16]byte
	rand.Read(b[:]) // never returns an error; it crashes the program instead
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// Valid reports whether s is a UUID in canonical lower-case form. It is
// the cheap check made on ids that arrive from clients (cookies, paths)
// before they are looked up.
func Valid(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}
