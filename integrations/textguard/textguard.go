// Package textguard checks and cuts strings that come from outside (a
// provider's answer, a user agent, a mail header) before they are stored
// or put in an error's text. It holds the service's one truncator,
// Truncate, and imports only the standard library, so that every package
// may use it.
package textguard

import (
	"strings"
	"unicode/utf8"
)

// Truncate returns s cut to at most n bytes, never in the middle of a
// character: when the cut splits one, its leading bytes go too. Bytes
// that are not UTF-8 are kept as they are (a raw mail header is decoded
// from its charset after the cut); only a character the cut splits is
// dropped. A limit of 0 or less gives "". Callers that need valid UTF-8
// pass the result through strings.ToValidUTF8, which gives what it would
// give for s[:n].
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	// The character the cut may split starts at most utf8.UTFMax-1 bytes
	// before it.
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	if r, size := utf8.DecodeRuneInString(s[i:]); i < n && i+size > n && (r != utf8.RuneError || size > 1) {
		return s[:i]
	}
	return s[:n]
}

// Word reports whether s is a plausible error code or id part: 1 to 64
// ASCII letters, digits, '_', '-' or '.', safe to put in an error's text.
func Word(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Token reports whether s can be a provider's cursor or page token: up to
// max printable ASCII characters, no space; empty is one.
func Token(s string, max int) bool {
	if len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Name shortens a name (a task type) for an error message: valid UTF-8,
// at most 40 bytes, then "…".
func Name(s string) string {
	if len(s) <= 40 {
		return s
	}
	return strings.ToValidUTF8(Truncate(s, 40), "") + "…"
}
