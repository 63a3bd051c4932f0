// Package records keeps the user-integration records: one user's
// connection to one integration, its sealed credentials and its sync
// status. It is the only code that changes a record: the sync scheduler
// asks it for the ops that record a sync's progress or failure and commits
// them with its own. Ownership is checked here: Get answers ErrNotFound for
// another user's record, as for an unknown one.
package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

// The states of a user-integration record (docs/sources.md, "State and errors shown"
// section describes them).
const (
	StatusConnected    = "connected"    // credentials work; syncs are scheduled
	StatusNeedsReauth  = "needs_reauth" // refresh failed or the provider revoked access; the user must reconnect
	StatusError        = "error"        // the last sync failed; it will be retried
	StatusDisconnected = "disconnected" // soft-deleted by the user
)

// Record is one user's connection to one integration, kept in the main
// store. Credentials holds the credentials sealed by the Vault, bound to
// the record's identity; it never leaves the service (see View).
type Record struct {
	ID          string     `json:"id"`
	UserID      string     `json:"userId"`
	Integration string     `json:"integration"` // the integration's domain
	Status      string     `json:"status"`
	ConnectedAt time.Time  `json:"connectedAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	LastError   string     `json:"lastError,omitempty"`
	LastSyncAt  *time.Time `json:"lastSyncAt,omitempty"`
	ItemsSynced int64      `json:"itemsSynced"`
	Credentials []byte     `json:"credentials"` // sealed (vault.Credentials); base64 in the log
	DeletedAt   *time.Time `json:"deletedAt,omitempty"`
	// Several says the record is one of several connections of its
	// integration the user may hold (ConnectAnother): the one-per-user
	// rule does not bind it.
	Several bool `json:"several,omitempty"`
}

// uniqueKey is the key of the one-record-per-user-per-integration rule;
// a record of several (Several) is keyed by its own id, so it never
// collides.
func (r *Record) uniqueKey() string {
	if r.Several {
		return r.UserID + "\x00" + r.Integration + "\x00" + r.ID
	}
	return r.UserID + "\x00" + r.Integration
}

// AAD is the identity the record's credentials are sealed to.
func (r *Record) AAD() []byte {
	return vault.AAD(vault.Credentials, r.UserID, r.Integration, r.ID)
}

// Live reports whether the record has not been disconnected.
func (r *Record) Live() bool { return r.DeletedAt == nil }

// RecordView is a record as clients see it: everything but the sealed
// credentials.
type RecordView struct {
	ID          string     `json:"id"`
	UserID      string     `json:"userId"`
	Integration string     `json:"integration"`
	Status      string     `json:"status"`
	ConnectedAt time.Time  `json:"connectedAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	LastError   string     `json:"lastError,omitempty"`
	LastSyncAt  *time.Time `json:"lastSyncAt,omitempty"`
	ItemsSynced int64      `json:"itemsSynced"`
	DeletedAt   *time.Time `json:"deletedAt,omitempty"`
}

// View returns what a client may see of r.
func (r *Record) View() RecordView {
	return RecordView{
		ID: r.ID, UserID: r.UserID, Integration: r.Integration, Status: r.Status,
		ConnectedAt: r.ConnectedAt, UpdatedAt: r.UpdatedAt, LastError: r.LastError,
		LastSyncAt: r.LastSyncAt, ItemsSynced: r.ItemsSynced, DeletedAt: r.DeletedAt,
	}
}

// Errors of Records.
var (
	// ErrNotFound is returned for an unknown or disconnected record, and
	// for another user's record.
	ErrNotFound = errors.New("integration record not found")
	// ErrCredentialsChanged is returned by an op made for credentials
	// that are no longer the record's (the user reconnected meanwhile).
	ErrCredentialsChanged = errors.New("credentials changed during sync")
)

// Records holds the user-integration records of the main store.
type Records struct {
	st    *storage.Store
	t     *storage.Table[Record]
	vault *vault.Vault
	now   func() time.Time
}

// New registers the "integrations" table on st (before st.Open):
// one live record per user per integration, indexed by user.
func New(st *storage.Store, v *vault.Vault, now func() time.Time) *Records {
	if now == nil {
		now = time.Now
	}
	t := storage.Register(st, "integrations", storage.TableConfig[Record]{
		ID:   func(r *Record) string { return r.ID },
		Live: (*Record).Live,
		Unique: map[string]func(*Record) string{
			"user_integration": (*Record).uniqueKey,
		},
		Index: map[string]func(*Record) string{
			"user": func(r *Record) string { return r.UserID },
		},
	})
	return &Records{st: st, t: t, vault: v, now: now}
}

// Get returns the user's live record with id. An unknown id, a
// disconnected record and another user's record are all ErrNotFound, so
// that ids of other users' records cannot be probed.
func (rs *Records) Get(userID, id string) (Record, error) {
	r, ok := rs.ByID(id)
	if !ok || r.UserID != userID {
		return Record{}, ErrNotFound
	}
	return r, nil
}

// ByID returns the live record with id, whoever owns it: for the code
// that acts for the record itself (the sync scheduler), never for a
// request.
func (rs *Records) ByID(id string) (Record, bool) {
	r, ok := rs.t.Get(id)
	if !ok || !r.Live() {
		return Record{}, false
	}
	return r, true
}

// Find returns the user's live record for the integration domain.
func (rs *Records) Find(userID, domain string) (Record, bool) {
	return rs.t.Lookup("user_integration", userID+"\x00"+domain)
}

// ForUser returns the user's live records.
func (rs *Records) ForUser(userID string) []Record {
	all := rs.t.Find("user", userID)
	out := all[:0]
	for _, r := range all {
		if r.Live() {
			out = append(out, r)
		}
	}
	return out
}

// ScanAll calls fn for every record, live or not, until fn returns false.
// fn must not call the store.
func (rs *Records) ScanAll(fn func(Record) bool) { rs.t.Scan(fn) }

// All calls fn for every live record until fn returns false.
func (rs *Records) All(fn func(Record) bool) {
	rs.t.Scan(func(r Record) bool {
		if !r.Live() {
			return true
		}
		return fn(r)
	})
}

// Connect stores creds as the user's connection to domain, sealed to the
// record, and marks it connected. A user who already has a live record for
// domain (reconnecting after needs_reauth, say) gets that same record
// updated, never a second one. extra ops are committed in the same log line.
func (rs *Records) Connect(userID, domain string, creds integrations.Credentials, extra ...storage.Op) (Record, error) {
	for attempt := 0; attempt < 3; attempt++ {
		now := rs.now().UTC()
		rec, exists := rs.Find(userID, domain)
		if !exists {
			rec = Record{ID: uuid.New(), UserID: userID, Integration: domain, ConnectedAt: now}
		}
		sealed, err := rs.SealCredentials(&rec, creds)
		if err != nil {
			return Record{}, fmt.Errorf("seal credentials: %w", err)
		}
		rec.Credentials, rec.Status, rec.LastError, rec.UpdatedAt = sealed, StatusConnected, "", now
		var op storage.Op
		if exists {
			id := rec.ID
			op = rs.t.Update(id, func(r *Record) error {
				if !r.Live() {
					return ErrNotFound
				}
				r.Credentials, r.Status, r.LastError, r.UpdatedAt = sealed, StatusConnected, "", now
				rec = *r
				return nil
			})
		} else {
			op = rs.t.Insert(rec)
		}
		err = rs.st.Commit(append([]storage.Op{op}, extra...)...)
		switch {
		case err == nil:
			return rec, nil
		case errors.Is(err, storage.ErrUnique), errors.Is(err, ErrNotFound), errors.Is(err, storage.ErrNotFound):
			continue // a concurrent connect or disconnect won; look again
		default:
			return Record{}, err
		}
	}
	return Record{}, fmt.Errorf("connect %s: record kept changing under us", domain)
}

// ErrTooMany refuses a connection past an integration's MaxConnections.
var ErrTooMany = errors.New("too many connections of this integration")

// ConnectAnother stores creds as a new connection of the user's to domain,
// beside those the user holds, unless the user already holds max live
// records of domain (ErrTooMany).
func (rs *Records) ConnectAnother(userID, domain string, creds integrations.Credentials, max int) (Record, error) {
	n := 0
	for _, r := range rs.ForUser(userID) {
		if r.Integration == domain {
			n++
		}
	}
	if n >= max {
		return Record{}, ErrTooMany
	}
	now := rs.now().UTC()
	rec := Record{ID: uuid.New(), UserID: userID, Integration: domain, ConnectedAt: now, Several: true}
	sealed, err := rs.SealCredentials(&rec, creds)
	if err != nil {
		return Record{}, fmt.Errorf("seal credentials: %w", err)
	}
	rec.Credentials, rec.Status, rec.UpdatedAt = sealed, StatusConnected, now
	if err := rs.st.Commit(rs.t.Insert(rec)); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// Reconnect stores creds in the user's live record id of domain (after
// needs_reauth, say) and marks it connected; another user's record, or
// one of another integration, is ErrNotFound.
func (rs *Records) Reconnect(userID, domain, id string, creds integrations.Credentials) (Record, error) {
	rec, err := rs.Get(userID, id)
	if err != nil || rec.Integration != domain {
		return Record{}, ErrNotFound
	}
	sealed, err := rs.SealCredentials(&rec, creds)
	if err != nil {
		return Record{}, fmt.Errorf("seal credentials: %w", err)
	}
	now := rs.now().UTC()
	err = rs.st.Commit(rs.t.Update(id, func(r *Record) error {
		if !r.Live() {
			return ErrNotFound
		}
		r.Credentials, r.Status, r.LastError, r.UpdatedAt = sealed, StatusConnected, "", now
		rec = *r
		return nil
	}))
	if errors.Is(err, storage.ErrNotFound) {
		err = ErrNotFound
	}
	return rec, err
}

// SealCredentials seals c, as JSON, to the record r.
func (rs *Records) SealCredentials(r *Record, c integrations.Credentials) ([]byte, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("seal credentials: %w", err)
	}
	return rs.vault.Seal(r.AAD(), b), nil
}

// Credentials opens the record's sealed credentials. It fails closed: a
// sealed string that does not open is an error.
func (rs *Records) Credentials(r Record) (integrations.Credentials, error) {
	b, err := rs.vault.Open(r.AAD(), r.Credentials)
	if err != nil {
		return integrations.Credentials{}, err
	}
	var c integrations.Credentials
	if err := json.Unmarshal(b, &c); err != nil {
		// The JSON error could quote plaintext; it is not passed on.
		return integrations.Credentials{}, errors.New("open credentials: sealed data is not credentials JSON")
	}
	return c, nil
}

// SaveCredentials re-seals creds into the live record id (after a token
// refresh or rotation), in one log line with extra.
func (rs *Records) SaveCredentials(id string, creds integrations.Credentials, extra ...storage.Op) error {
	r, ok := rs.ByID(id)
	if !ok {
		return ErrNotFound
	}
	sealed, err := rs.SealCredentials(&r, creds)
	if err != nil {
		return fmt.Errorf("seal credentials: %w", err)
	}
	now := rs.now().UTC()
	op := rs.t.Update(id, func(r *Record) error {
		if !r.Live() {
			return ErrNotFound
		}
		r.Credentials, r.UpdatedAt = sealed, now
		return nil
	})
	return rs.st.Commit(append([]storage.Op{op}, extra...)...)
}

// Disconnect soft-deletes the record: status disconnected, DeletedAt set,
// credentials dropped (a disconnected record keeps no secret). extra ops
// (the record's items, its pending tasks) go in the same log line.
func (rs *Records) Disconnect(id string, extra ...storage.Op) (Record, error) {
	var out Record
	now := rs.now().UTC()
	op := rs.t.Update(id, func(r *Record) error {
		if !r.Live() {
			return ErrNotFound
		}
		r.Status, r.DeletedAt, r.UpdatedAt, r.Credentials = StatusDisconnected, &now, now, nil
		out = *r
		return nil
	})
	err := rs.st.Commit(append([]storage.Op{op}, extra...)...)
	if errors.Is(err, storage.ErrNotFound) {
		err = ErrNotFound
	}
	return out, err
}

// DisconnectOps returns the ops that soft-delete every live record of the
// user, for committing together with the user's own soft delete.
func (rs *Records) DisconnectOps(userID string) []storage.Op {
	now := rs.now().UTC()
	var ops []storage.Op
	for _, r := range rs.ForUser(userID) {
		ops = append(ops, rs.t.Update(r.ID, func(r *Record) error {
			if r.Live() {
				r.Status, r.DeletedAt, r.UpdatedAt, r.Credentials = StatusDisconnected, &now, now, nil
			}
			return nil
		}))
	}
	return ops
}

// SetStatus records the outcome of a sync or a refresh on the live record.
func (rs *Records) SetStatus(id, status, lastError string, extra ...storage.Op) error {
	now := rs.now().UTC()
	op := rs.t.Update(id, func(r *Record) error {
		if !r.Live() {
			return ErrNotFound
		}
		r.Status, r.LastError, r.UpdatedAt = status, lastError, now
		return nil
	})
	return rs.st.Commit(append([]storage.Op{op}, extra...)...)
}

// RotateKeys re-seals every record sealed under a previous key with the
// current one (searchsvc rotate-key), one log line per record, and returns
// how many it re-sealed. A record that opens under no key stops it: fail
// closed, nothing is dropped.
func (rs *Records) RotateKeys() (int, error) {
	var todo []Record
	rs.t.Scan(func(r Record) bool {
		if rs.vault.Stale(r.Credentials) {
			todo = append(todo, r)
		}
		return true
	})
	for i, r := range todo {
		sealed, _, err := rs.vault.Reseal(r.AAD(), r.Credentials)
		if err != nil {
			return i, fmt.Errorf("record %s: %w", r.ID, err)
		}
		old := r.Credentials
		err = rs.st.Commit(rs.t.Update(r.ID, func(cur *Record) error {
			if !bytes.Equal(cur.Credentials, old) {
				return nil // changed meanwhile (refreshed under the new key)
			}
			cur.Credentials = sealed
			return nil
		}))
		if err != nil {
			return i, err
		}
	}
	return len(todo), nil
}
