package integrations

import "strings"

// Checks and cuts of a provider's strings that every integration makes
// the same way: an error code, a cursor or page token, a task type put in
// an error message.

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

// Clip shortens s to at most n bytes, cut at a character: a cut in the
// middle of one drops its bytes rather than leave invalid UTF-8.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// ClipName shortens a name (a task type) for an error message: at most
// 40 bytes, then "…".
func ClipName(s string) string {
	if len(s) <= 40 {
		return s
	}
	return Clip(s, 40) + "…"
}
