package imap

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// utf7 is the base64 alphabet of modified UTF-7, with ',' for '/'.
var utf7 = base64.NewEncoding("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,").WithPadding(base64.NoPadding)

// DisplayName returns m's name for people: modified UTF-7 (RFC 3501
// section 5.1.3, "Caf&AOk-") decoded to UTF-8 ("Café"). A name that is
// not valid modified UTF-7 is returned with its invalid bytes replaced,
// as servers that speak UTF-8 send it raw.
func (m Mailbox) DisplayName() string {
	if s, ok := decodeUTF7(m.Name); ok {
		return s
	}
	return strings.ToValidUTF8(m.Name, "\uFFFD")
}

// decodeUTF7 decodes modified UTF-7; false if s is not valid.
func decodeUTF7(s string) (string, bool) {
	if !strings.Contains(s, "&") {
		return s, utf8.ValidString(s) && printableASCII(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return "", false
		}
		if c != '&' {
			b.WriteByte(c)
			continue
		}
		j := strings.IndexByte(s[i+1:], '-')
		if j < 0 {
			return "", false
		}
		enc := s[i+1 : i+1+j]
		i += j + 1
		if enc == "" {
			b.WriteByte('&')
			continue
		}
		raw, err := utf7.DecodeString(enc)
		if err != nil || len(raw)%2 != 0 {
			return "", false
		}
		units := make([]uint16, len(raw)/2)
		for k := range units {
			units[k] = uint16(raw[2*k])<<8 | uint16(raw[2*k+1])
		}
		for _, r := range utf16.Decode(units) {
			// A printable ASCII character must not be encoded, and an
			// unpaired surrogate decodes to U+FFFD.
			if r == utf8.RuneError || r >= 0x20 && r <= 0x7e {
				return "", false
			}
			b.WriteRune(r)
		}
	}
	return b.String(), true
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// FolderName is a mailbox name as a person reads it: modified UTF-7
// decoded, or as sent when it does not decode.
func FolderName(name string) string {
	if d, ok := decodeUTF7(name); ok {
		return d
	}
	return name
}
