package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unique"

	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// record is a session as the session store holds it. Nothing in it is a
// credential or personal in clear: the table id is a keyed HMAC of the
// session id (a stolen log or backup yields no cookie to present), and the
// id itself, the CSRF token, the client address, the user agent and the
// device are sealed, bound to that key. What stays in clear is what
// expiry, the per-user index and the idle clock need.
//
// A Pi may hold a hundred thousand of them, so in memory a record is 80
// bytes plus its key: times as Unix seconds in 32 bits (a session's times
// are kept to the second), not time.Time (24 bytes each); the user id
// interned (one copy per user, not per session); the login method a
// number; and the sealed part, most of a record's size, only in the log:
// the table is cold (storage.Cold), so the records it holds are stripped
// of it, and it is read back when a session is first met, listed or
// rewritten. Its JSON is unchanged (recordJSON).
type record struct {
	ID       string // index.Sum(session id)
	UserID   string // interned
	Sealed   string // secretFields, sealed; "" in a stripped record
	Cold     storage.ColdRef
	Created  uint32 // Unix s
	Accessed uint32 // Unix s: lastAccessedAt as the log holds it
	Expires  uint32 // Unix s
	Method   uint8  // index in loginMethods
}

// loginMethods are the values of Metadata.LoginMethod a record can hold,
// by record.Method.
var loginMethods = [...]string{LoginPassword, LoginOAuth}

func methodIndex(m string) uint8 {
	if m == LoginOAuth {
		return 1
	}
	return 0
}

// recordJSON is a record as the log holds it.
type recordJSON struct {
	ID             string    `json:"key"`
	UserID         string    `json:"userId"`
	CreatedAt      time.Time `json:"createdAt"`
	LastAccessedAt time.Time `json:"lastAccessedAt"`
	ExpiresAt      time.Time `json:"expiresAt"`
	LoginMethod    string    `json:"loginMethod"`
	Sealed         []byte    `json:"sealed"`
}

// errStripped refuses to encode a stripped record, which would lose its
// sealed part.
var errStripped = errors.New("sessions: a stripped record has no sealed part to write")

func (r record) MarshalJSON() ([]byte, error) {
	if r.Cold.Stripped() {
		return nil, errStripped
	}
	return json.Marshal(recordJSON{ID: r.ID, UserID: r.UserID, CreatedAt: fromSecs(r.Created),
		LastAccessedAt: fromSecs(r.Accessed), ExpiresAt: fromSecs(r.Expires),
		LoginMethod: loginMethods[r.Method%uint8(len(loginMethods))], Sealed: []byte(r.Sealed)})
}

func (r *record) UnmarshalJSON(b []byte) error {
	var j recordJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.LoginMethod != LoginPassword && j.LoginMethod != LoginOAuth {
		return fmt.Errorf("unknown login method %q", j.LoginMethod)
	}
	*r = record{ID: j.ID, UserID: unique.Make(j.UserID).Value(), Created: secs(j.CreatedAt),
		Accessed: secs(j.LastAccessedAt), Expires: secs(j.ExpiresAt), Method: methodIndex(j.LoginMethod),
		Sealed: string(j.Sealed)}
	return nil
}

// pack moves the keys, the user ids (one copy per user) and the sealed
// parts of records kept whole, of the records a replay keeps, into one
// allocation (storage.TableConfig.Pack): a hundred thousand sessions then
// leave no small strings scattered among the replay's garbage, each
// holding a page of it, and the start-up's memory goes back to the
// system. The block lives until the last of those sessions is gone; new
// sessions are allocated apart.
func pack(rs []record) {
	at := make(map[string]int) // user id -> its offset in the block; -1 until written
	n := 0
	for i := range rs {
		n += len(rs[i].ID) + len(rs[i].Sealed)
		if _, ok := at[rs[i].UserID]; !ok {
			at[rs[i].UserID] = -1
			n += len(rs[i].UserID)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i := range rs {
		b.WriteString(rs[i].ID)
		b.WriteString(rs[i].Sealed)
		if at[rs[i].UserID] < 0 {
			at[rs[i].UserID] = b.Len()
			b.WriteString(rs[i].UserID)
		}
	}
	block, off := b.String(), 0
	for i := range rs {
		r := &rs[i]
		r.ID, off = block[off:off+len(r.ID)], off+len(r.ID)
		r.Sealed, off = block[off:off+len(r.Sealed)], off+len(r.Sealed)
		u := at[r.UserID]
		if u == off { // written after this record
			off += len(r.UserID)
		}
		r.UserID = block[u : u+len(r.UserID)]
	}
}

// secs is t in Unix seconds as a record holds them: the zero time is 0,
// and times outside 1970 to 2106 are held at those bounds.
func secs(t time.Time) uint32 {
	if t.IsZero() {
		return 0
	}
	return unixSecs(t.Unix())
}

// unixSecs is s Unix seconds held at the bounds of a record's times.
func unixSecs(s int64) uint32 { return uint32(min(max(s, 1), math.MaxUint32)) }

// secsOfNanos is secs of a time in Unix nanoseconds, as entries keep it.
func secsOfNanos(ns int64) uint32 { return unixSecs(ns / int64(time.Second)) }

// nanosOfSecs is the Unix nanoseconds of a record's time, 0 for the zero
// time.
func nanosOfSecs(s uint32) int64 { return int64(s) * int64(time.Second) }

// fromSecs is the UTC time of Unix seconds s; 0 is the zero time.
func fromSecs(s uint32) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(int64(s), 0).UTC()
}

// toSecond is t as a record keeps it.
func toSecond(t time.Time) time.Time { return fromSecs(secs(t)) }

// secretFields are the sealed part of a record.
type secretFields struct {
	ID         string `json:"i"`
	CSRFToken  string `json:"c,omitempty"`
	IPAddress  string `json:"a,omitempty"`
	UserAgent  string `json:"u,omitempty"`
	DeviceName string `json:"d,omitempty"`
	Location   string `json:"l,omitempty"`
}

// keys are the Manager's keys, derived from SESSION_SECRET by the vault.
type keys struct {
	index *vault.Index // of session ids: the table keys
	vault *vault.Vault
}

func newKeys(secret []byte) (keys, error) {
	if len(secret) == 0 {
		return keys{}, errors.New("sessions: Config.Secret is required")
	}
	v, err := vault.New(secret)
	if err != nil {
		return keys{}, fmt.Errorf("sessions: %w", err)
	}
	return keys{index: v.Index(vault.SessionID), vault: v}, nil
}

// aad binds a session's sealed part to its table key.
func aad(key string) []byte { return vault.AAD(vault.Session, key) }

// key is the table id of the session with id.
func (m *Manager) key(id string) string { return m.keys.index.Sum(id) }

// seal is s as stored.
func (m *Manager) seal(s Session) record {
	r := record{ID: m.key(s.ID), UserID: s.UserID, Created: secs(s.CreatedAt), Accessed: secs(s.LastAccessedAt),
		Expires: secs(s.ExpiresAt), Method: methodIndex(s.Metadata.LoginMethod)}
	b, _ := json.Marshal(secretFields{ID: s.ID, CSRFToken: s.CSRFToken, IPAddress: s.IPAddress, UserAgent: s.UserAgent,
		DeviceName: s.Metadata.DeviceName, Location: s.Metadata.Location})
	r.Sealed = string(m.keys.vault.Seal(aad(r.ID), b))
	return r
}

// open is the session r holds, or an error if its sealed part does not
// open (damage, or a SESSION_SECRET other than the one that sealed it)
// or does not belong to its key.
func (m *Manager) open(r record) (Session, error) {
	f, err := m.openFields(r)
	if err != nil {
		return Session{}, err
	}
	return m.session(r, f), nil
}

// openCached is open using, and filling, the opened fields kept in e.
func (m *Manager) openCached(r record, e *entry) (Session, error) {
	if e != nil {
		if f := e.opened.Load(); f != nil {
			return m.session(r, f), nil
		}
	}
	f, err := m.openFields(r)
	if err != nil {
		return Session{}, err
	}
	if e != nil {
		e.opened.Store(f)
	}
	return m.session(r, f), nil
}

// openFields opens the sealed part of r, read back from the log if r is
// stripped.
func (m *Manager) openFields(r record) (*secretFields, error) {
	if r.Cold.Stripped() {
		whole, err := m.tab.Load(r.ID)
		if err != nil {
			return nil, fmt.Errorf("open session record: %w", err)
		}
		r = whole
	}
	b, err := m.keys.vault.Open(aad(r.ID), []byte(r.Sealed))
	if err != nil {
		return nil, fmt.Errorf("open session record: %w", err)
	}
	var f secretFields
	if err := json.Unmarshal(b, &f); err != nil || m.key(f.ID) != r.ID {
		return nil, fmt.Errorf("open session record: %w", vault.ErrCannotOpen)
	}
	return &f, nil
}

// session is the Session of r and its opened fields.
func (m *Manager) session(r record, f *secretFields) Session {
	return Session{ID: f.ID, UserID: r.UserID, CreatedAt: fromSecs(r.Created), LastAccessedAt: fromSecs(r.Accessed),
		ExpiresAt: fromSecs(r.Expires), IPAddress: f.IPAddress, UserAgent: f.UserAgent, CSRFToken: f.CSRFToken,
		Metadata: Metadata{LoginMethod: loginMethods[r.Method%uint8(len(loginMethods))], DeviceName: f.DeviceName, Location: f.Location}}
}
