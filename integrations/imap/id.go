package imap

import (
	"errors"
	"strconv"
	"strings"
)

// ID identifies one message of one mailbox as long as the mailbox keeps
// its UIDVALIDITY; its String is the provider id of the message's item.
type ID struct {
	Folder      string
	UIDValidity uint32
	UID         uint32
	// Key is the MessageKey of the message's Message-ID, "" if it has
	// none: kept in the provider id so that a renumbered mailbox can be
	// matched against the stored items without reading their content.
	Key string
}

// maxIDLen bounds a provider id ParseID accepts (bytes).
const maxIDLen = 2048

// ErrBadID means a provider id was not made by ID.String.
var ErrBadID = errors.New("imap: not an IMAP message id")

// String returns the provider id: the mailbox and UIDs as in the path of
// an IMAP URL (RFC 5092), "INBOX;UIDVALIDITY=3857529045/;UID=20", then
// ";KEY=…" if the message has a Message-ID. In the mailbox name '%', ';'
// and bytes outside printable ASCII are percent-escaped, so the first ';'
// ends the name.
func (id ID) String() string {
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(id.Folder); i++ {
		c := id.Folder[i]
		if c <= ' ' || c >= 0x7f || c == '%' || c == ';' {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	b.WriteString(";UIDVALIDITY=")
	b.WriteString(strconv.FormatUint(uint64(id.UIDValidity), 10))
	b.WriteString("/;UID=")
	b.WriteString(strconv.FormatUint(uint64(id.UID), 10))
	if id.Key != "" {
		b.WriteString(";KEY=")
		b.WriteString(id.Key)
	}
	return b.String()
}

// ParseID parses a provider id made by ID.String.
func ParseID(s string) (ID, error) {
	if len(s) > maxIDLen {
		return ID{}, ErrBadID
	}
	name, rest, ok := strings.Cut(s, ";UIDVALIDITY=")
	if !ok || name == "" {
		return ID{}, ErrBadID
	}
	folder, err := unescape(name)
	if err != nil {
		return ID{}, err
	}
	v, rest, ok := strings.Cut(rest, "/;UID=")
	if !ok {
		return ID{}, ErrBadID
	}
	u, key, _ := strings.Cut(rest, ";KEY=")
	validity, err1 := parseUID(v)
	uid, err2 := parseUID(u)
	if err1 != nil || err2 != nil || strings.Contains(rest, ";KEY=") && key == "" || !validKey(key) {
		return ID{}, ErrBadID
	}
	return ID{Folder: folder, UIDValidity: validity, UID: uid, Key: key}, nil
}

func unescape(s string) (string, error) {
	if !strings.ContainsRune(s, '%') {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", ErrBadID
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", ErrBadID
		}
		b = append(b, byte(n))
		i += 2
	}
	return string(b), nil
}

// validKey reports whether k can be a MessageKey (or is empty).
func validKey(k string) bool {
	if len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
