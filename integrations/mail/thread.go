package mail

import (
	"crypto/sha256"
	"encoding/base64"
	"net/textproto"
	"strings"
)

// Limits of the message ids Parse keeps: a References field can name
// every message of a long conversation, and a hostile one any number.
const (
	// MaxRefs is how many message ids Message.Refs keeps: the message's
	// own, the one it replies to, the conversation's first and the
	// latest references.
	MaxRefs = 12
	// maxMessageID bounds one message id, in bytes (RFC 5322's line
	// limit): a longer one is not an id.
	maxMessageID = 998
)

// threadOf reads the fields that place a message in its conversation
// (RFC 5322 §3.6.4): Message-ID, In-Reply-To and References.
func threadOf(h textproto.MIMEHeader) (root string, refs []string) {
	own := firstID(h.Get("Message-Id"))
	parent := firstID(h.Get("In-Reply-To"))
	chain := messageIDs(h.Get("References"), 64)
	switch {
	case len(chain) > 0:
		root = chain[0]
	case parent != "":
		root = parent
	default:
		root = own
	}
	add := func(id string) {
		if id != "" && len(refs) < MaxRefs && !contains(refs, id) {
			refs = append(refs, id)
		}
	}
	add(own)
	add(parent)
	add(root)
	for i := len(chain) - 1; i > 0; i-- {
		add(chain[i])
	}
	return root, refs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// firstID returns the first message id of a field, or "".
func firstID(v string) string {
	ids := messageIDs(v, 1)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// messageIDs returns up to max message ids ("<left@right>", kept with
// their brackets) of a field, in order, skipping anything else: comments,
// phrases, and ids with white space or longer than maxMessageID.
func messageIDs(v string, max int) []string {
	v = strings.TrimSpace(v)
	if len(v) > maxRawHeader {
		v = v[:maxRawHeader]
	}
	var ids []string
	for len(ids) < max {
		i := strings.IndexByte(v, '<')
		if i < 0 {
			break
		}
		v = v[i:]
		j := strings.IndexByte(v, '>')
		if j < 0 {
			break
		}
		// The id is what the last '<' before the '>' opens: "<<a@x>"
		// holds "<a@x>".
		k := strings.LastIndexByte(v[:j], '<')
		id := v[k : j+1]
		v = v[j+1:]
		if len(id) > maxMessageID || len(id) < 5 || strings.ContainsAny(id[1:len(id)-1], " \t\r\n") || !strings.Contains(id, "@") {
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// IDKey is the form a message id is kept in: 16 characters of its
// SHA-256, so that an item's thread and links have a small fixed size
// whatever the ids' length, and a thread id shown by the API names no
// host. An empty id has an empty key.
func IDKey(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// ThreadKeys returns the message's thread and links as IDKeys.
func (m *Message) ThreadKeys() (thread string, refs []string) {
	if m.Thread == "" {
		return "", nil
	}
	refs = make([]string, len(m.Refs))
	for i, id := range m.Refs {
		refs[i] = IDKey(id)
	}
	return IDKey(m.Thread), refs
}
