package auth

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// userRecord is a user as the main store holds it: the email and name
// sealed (AES-256-GCM, bound to the id), and the email's keyed blind index
// in clear for its uniqueness and for finding a user at login. Keys come
// from CREDENTIALS_KEY, so a copy of the data directory (a backup) tells
// nothing about who uses the service.
type userRecord struct {
	ID                string     `json:"id"`
	EmailIndex        string     `json:"emailIndex"`
	Sealed            []byte     `json:"sealed"` // userSecrets, sealed
	Role              string     `json:"role"`
	PasswordHash      string     `json:"passwordHash"`
	CreatedAt         time.Time  `json:"createdAt"`
	UpdatedAt         time.Time  `json:"updatedAt"`
	DeletedAt         *time.Time `json:"deletedAt,omitempty"`
	PasswordChangedAt *time.Time `json:"passwordChangedAt,omitempty"`
	// TOTP is the second factor, nil when it is off (secondfactor.go).
	TOTP *secondFactor `json:"totp,omitempty"`
	// TOTPPending is the sealed secret of an enrolment begun by POST
	// /v1/user/totp and not yet confirmed: it signs nobody in.
	TOTPPending []byte `json:"totpPending,omitempty"`
}

func (r *userRecord) live() bool { return r.DeletedAt == nil }

// packUsers moves the strings and sealed parts of the users a replay keeps
// into two allocations (storage.TableConfig.Pack), so that start-up's
// garbage leaves whole pages to give back to the system; the blocks live
// until the last of those users is rewritten.
func packUsers(rs []userRecord) {
	n, m := 0, 0
	for i := range rs {
		r := &rs[i]
		n += len(r.ID) + len(r.EmailIndex) + len(r.Role) + len(r.PasswordHash)
		m += len(r.Sealed)
	}
	var b strings.Builder
	b.Grow(n)
	sealed := make([]byte, 0, m)
	for i := range rs {
		r := &rs[i]
		b.WriteString(r.ID)
		b.WriteString(r.EmailIndex)
		b.WriteString(r.Role)
		b.WriteString(r.PasswordHash)
		sealed = append(sealed, r.Sealed...)
	}
	block, off, soff := b.String(), 0, 0
	cut := func(s string) string {
		s, off = block[off:off+len(s)], off+len(s)
		return s
	}
	for i := range rs {
		r := &rs[i]
		r.ID, r.EmailIndex, r.Role, r.PasswordHash = cut(r.ID), cut(r.EmailIndex), cut(r.Role), cut(r.PasswordHash)
		end := soff + len(r.Sealed)
		r.Sealed, soff = sealed[soff:end:end], end
	}
}

// userSecrets is the sealed part of a userRecord.
type userSecrets struct {
	Email string `json:"e"`
	Name  string `json:"n"`
}

// userKeys are the users' keys, from the main store's vault.
type userKeys struct {
	vault *vault.Vault
	index *vault.Index // of emails, normalized
}

// userAAD binds a user's sealed part to the user's id.
func userAAD(id string) []byte { return vault.AAD(vault.UserSecrets, id) }

func (u *Users) seal(usr User) userRecord {
	b, _ := json.Marshal(userSecrets{Email: usr.Email, Name: usr.Name})
	return userRecord{ID: usr.ID, EmailIndex: u.keys.index.Sum(usr.Email), Sealed: u.keys.vault.Seal(userAAD(usr.ID), b),
		Role: usr.Role, PasswordHash: usr.PasswordHash, CreatedAt: usr.CreatedAt, UpdatedAt: usr.UpdatedAt,
		DeletedAt: usr.DeletedAt, PasswordChangedAt: usr.PasswordChangedAt}
}

// open is the user rec holds; false if its sealed part does not open
// (damage, or a CREDENTIALS_KEY that never sealed it), which RotateKeys
// reports at start.
//
// An opened email and name are kept with the sealed bytes they came from
// (one entry per user), so authenticating a request does not open the
// user's record again: a record re-sealed or replaced has other bytes.
func (u *Users) open(rec userRecord) (User, bool) {
	if v, ok := u.opened.Load(rec.ID); ok {
		if o := v.(*openedUser); len(o.sealed) > 0 && len(o.sealed) == len(rec.Sealed) && &o.sealed[0] == &rec.Sealed[0] {
			return o.user(rec), true
		}
	}
	usr, _, err := u.openCurrent(rec)
	if err != nil {
		return User{}, false
	}
	u.opened.Store(rec.ID, &openedUser{sealed: rec.Sealed, email: usr.Email, name: usr.Name})
	return usr, true
}

// openedUser is what open keeps of an opened record.
type openedUser struct {
	sealed      []byte // the record's Sealed it was opened from (the same array)
	email, name string
}

func (o *openedUser) user(rec userRecord) User {
	return User{ID: rec.ID, Email: o.email, Name: o.name, Role: rec.Role, PasswordHash: rec.PasswordHash,
		CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt, DeletedAt: rec.DeletedAt,
		PasswordChangedAt: rec.PasswordChangedAt, TOTPEnabled: rec.TOTP != nil}
}

func (u *Users) openCurrent(rec userRecord) (User, bool, error) {
	b, err := u.keys.vault.Open(userAAD(rec.ID), rec.Sealed)
	if err != nil {
		return User{}, false, err
	}
	current := u.keys.vault.Current(rec.Sealed)
	var s userSecrets
	if err := json.Unmarshal(b, &s); err != nil {
		return User{}, false, fmt.Errorf("%w: %v", vault.ErrCannotOpen, err)
	}
	return User{ID: rec.ID, Email: s.Email, Name: s.Name, Role: rec.Role, PasswordHash: rec.PasswordHash,
		CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt, DeletedAt: rec.DeletedAt,
		PasswordChangedAt: rec.PasswordChangedAt, TOTPEnabled: rec.TOTP != nil}, current, nil
}

// RotateKeys brings every user under the current CREDENTIALS_KEY: users
// sealed under a previous key (CREDENTIALS_KEY_PREVIOUS) are sealed again
// and their email index recomputed, since it is keyed by the current key
// too; so are their second factor secrets, on or pending. If anything changed, the store is compacted so that no line of the
// old form is left in its log. It returns how many users it re-sealed. The
// server runs it at start and `rotate-key` with the other re-sealing.
func (u *Users) RotateKeys() (int, error) {
	var ops []storage.Op
	n := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		err := u.st.Commit(ops...)
		ops = ops[:0]
		return err
	}
	var stale []userRecord
	var broken int
	u.users.Scan(func(rec userRecord) bool {
		if _, current, err := u.openCurrent(rec); err != nil || !u.secretsOpen(rec) {
			broken++
		} else if !current || !u.secretsCurrent(rec) {
			stale = append(stale, rec)
		}
		return true
	})
	if broken > 0 {
		return n, fmt.Errorf("%d users do not open under CREDENTIALS_KEY or CREDENTIALS_KEY_PREVIOUS", broken)
	}
	for _, rec := range stale {
		usr, _, _ := u.openCurrent(rec)
		sealed, _, err := u.keys.vault.Reseal(userAAD(rec.ID), rec.Sealed)
		if err != nil {
			return n, fmt.Errorf("re-seal user %s: %w", rec.ID, err)
		}
		rec.Sealed, rec.EmailIndex = sealed, u.keys.index.Sum(usr.Email)
		if err := u.resealSecrets(&rec); err != nil {
			return n, fmt.Errorf("re-seal second factor of user %s: %w", rec.ID, err)
		}
		ops = append(ops, u.users.Put(rec))
		n++
		if len(ops) >= 1024 {
			if err := flush(); err != nil {
				return n, fmt.Errorf("re-seal users: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return n, fmt.Errorf("seal users: %w", err)
	}
	if n > 0 {
		if err := u.st.Compact(); err != nil {
			return n, fmt.Errorf("compact after sealing users: %w", err)
		}
	}
	return n, nil
}

// secretsOpen reports whether rec's second factor secrets, on and
// pending, open under the vault.
func (u *Users) secretsOpen(rec userRecord) bool {
	for _, sealed := range rec.secrets() {
		b, err := u.openSecret(rec.ID, sealed)
		if err != nil {
			return false
		}
		clear(b)
	}
	return true
}

// secretsCurrent reports whether rec's second factor secrets are sealed
// under the current key.
func (u *Users) secretsCurrent(rec userRecord) bool {
	for _, sealed := range rec.secrets() {
		if !u.keys.vault.Current(sealed) {
			return false
		}
	}
	return true
}

// resealSecrets seals rec's second factor secrets under the current key,
// replacing (never modifying) what rec shares with the stored record.
func (u *Users) resealSecrets(rec *userRecord) error {
	if rec.TOTP != nil {
		sealed, _, err := u.keys.vault.Reseal(secondFactorAAD(rec.ID), rec.TOTP.Sealed)
		if err != nil {
			return err
		}
		f := *rec.TOTP
		f.Sealed = sealed
		rec.TOTP = &f
	}
	if rec.TOTPPending != nil {
		sealed, _, err := u.keys.vault.Reseal(secondFactorAAD(rec.ID), rec.TOTPPending)
		if err != nil {
			return err
		}
		rec.TOTPPending = sealed
	}
	return nil
}

// secrets are rec's sealed second factor secrets.
func (r *userRecord) secrets() [][]byte {
	var out [][]byte
	if r.TOTP != nil {
		out = append(out, r.TOTP.Sealed)
	}
	if r.TOTPPending != nil {
		out = append(out, r.TOTPPending)
	}
	return out
}
