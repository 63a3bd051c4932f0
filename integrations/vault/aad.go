package vault

import "encoding/binary"

// Purpose says what a sealed value holds or what a blind index is of. It
// is bound to the ciphertext with the owner's ids (see AAD), so that a
// record's sealed credentials, an item's sealed content and a task's
// sealed payload never open as one another even if an id were ever
// reused, and it keys each blind index apart.
type Purpose uint8

// The purposes. The parts each gives AAD are in its comment.
const (
	Credentials Purpose = iota + 1 // a record's credentials: user, domain, record id
	ItemContent                    // an item's content file: user, domain, item id
	ItemMeta                       // an item's personal metadata: user, domain, item id
	TaskPayload                    // a queued task's payload: user, domain, task id
	SyncState                      // what a record's sync keeps between runs: user, domain, record id
	UserSecrets                    // a user's email and name: user id
	UserEmail                      // the blind index of a user's email
	Session                        // a session's sealed fields: the session's table key
	SessionID                      // the blind index of a session id (the table key)
	SearchIndex                    // a block of the search index: user id, then the block's place
	TOTPSecret                     // a user's second factor secret: user id
)

// String names the purpose; the name is part of the additional data and
// of a blind index's key, so it never changes.
func (p Purpose) String() string {
	switch p {
	case Credentials:
		return "credentials"
	case ItemContent:
		return "item content"
	case ItemMeta:
		return "item metadata"
	case TaskPayload:
		return "task payload"
	case SyncState:
		return "sync state"
	case UserSecrets:
		return "user"
	case UserEmail:
		return "user email"
	case Session:
		return "session"
	case SessionID:
		return "session id"
	case SearchIndex:
		return "search index"
	case TOTPSecret:
		return "second factor"
	}
	return "unknown purpose"
}

// AAD returns the additional data that binds a sealed value to what it
// belongs to: the purpose and the parts the purpose names, so that a value
// copied into another record, item, user or integration does not open.
func AAD(p Purpose, parts ...string) []byte { return AppendAAD(nil, p, parts...) }

// AppendAAD appends AAD(p, parts...) to dst. Each part, the purpose's name
// first, is length-prefixed, so that no part can borrow bytes from its
// neighbour and fixed-size fields may follow the last one.
func AppendAAD(dst []byte, p Purpose, parts ...string) []byte {
	dst = appendPart(dst, p.String())
	for _, part := range parts {
		dst = appendPart(dst, part)
	}
	return dst
}

func appendPart(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}
