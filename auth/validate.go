package auth

import (
	_ "embed"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"searchsvc/httpx"
)

// Input limits. Lengths of names and passwords are in characters (runes),
// the email's in bytes.
const (
	maxEmailBytes  = 254
	maxNameChars   = 200
	minPasswordLen = 10
	maxPasswordLen = 1024
	maxUserAgent   = 512 // bytes of User-Agent kept with a session
)

//go:embed common_passwords.txt
var commonPasswordsFile string

// commonPasswords is the set of the embedded list, built on first use.
var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	set := make(map[string]struct{}, 1024)
	for line := range strings.Lines(commonPasswordsFile) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			set[line] = struct{}{}
		}
	}
	return set
})

// validator collects field errors in the order fields are checked.
type validator struct{ fields []httpx.FieldError }

func (v *validator) add(field, msg string) {
	v.fields = append(v.fields, httpx.FieldError{Field: field, Message: msg})
}

func (v *validator) err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return &ValidationError{Fields: v.fields}
}

// checkEmail validates an email already normalized (trimmed, lower case).
// The rule is deliberately loose, as the only real test of an address is
// mail reaching it: one @, something before it, a dot inside the domain
// with no empty label, no spaces or control characters, at most 254 bytes.
func checkEmail(v *validator, email string) {
	switch {
	case email == "":
		v.add("email", "is required")
		return
	case len(email) > maxEmailBytes:
		v.add("email", "must be at most 254 bytes")
		return
	}
	local, domain, ok := strings.Cut(email, "@")
	if !ok || local == "" || strings.Contains(domain, "@") || !validDomain(domain) ||
		!utf8.ValidString(email) || strings.IndexFunc(email, unicode.IsSpace) >= 0 ||
		strings.IndexFunc(email, unicode.IsControl) >= 0 {
		v.add("email", "must be a valid email address")
	}
}

func validDomain(d string) bool {
	if !strings.Contains(d, ".") {
		return false
	}
	for label := range strings.SplitSeq(d, ".") {
		if label == "" {
			return false
		}
	}
	return true
}

// checkName validates a name already trimmed.
func checkName(v *validator, name string) {
	switch {
	case name == "":
		v.add("name", "is required")
	case utf8.RuneCountInString(name) > maxNameChars:
		v.add("name", "must be at most 200 characters")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		v.add("name", "must not contain control characters")
	}
}

// checkPassword applies the password rule: 10 to 1024 characters, not the
// email or the name (ignoring case), not in the list of very common
// passwords (ignoring case). field names the input in errors.
func checkPassword(v *validator, field, password, email, name string) {
	n := utf8.RuneCountInString(password)
	switch {
	case password == "":
		v.add(field, "is required")
	case n < minPasswordLen:
		v.add(field, "must be at least 10 characters")
	case n > maxPasswordLen:
		v.add(field, "must be at most 1024 characters")
	case email != "" && strings.EqualFold(password, email):
		v.add(field, "must not be the email address")
	case name != "" && strings.EqualFold(password, name):
		v.add(field, "must not be the name")
	case isCommonPassword(password):
		v.add(field, "is too common")
	}
}

func isCommonPassword(p string) bool {
	if len(p) > 64 {
		return false // the list has nothing this long; skip lower-casing it
	}
	_, ok := commonPasswords()[strings.ToLower(p)]
	return ok
}
