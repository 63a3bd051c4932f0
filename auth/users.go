package auth

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// Roles a user may have.
const (
	RoleUser  = "user"
	RoleAdmin = "admin"
)

// User is a user as the service uses it; the main store holds it as a
// userRecord, its email and name sealed. PasswordHash never leaves the
// service: responses use a view (see view.go).
type User struct {
	ID           string     `json:"id"`
	Email        string     `json:"email"` // lower case
	Name         string     `json:"name"`
	Role         string     `json:"role"`         // RoleUser or RoleAdmin
	PasswordHash string     `json:"passwordHash"` // Argon2id PHC string
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
	DeletedAt    *time.Time `json:"deletedAt,omitempty"` // set by a soft delete
	// PasswordChangedAt is when the password was last changed: sessions
	// created before it are refused, so a change ends every older session
	// even if deleting them in the session store did not happen (a crash
	// between the two stores).
	PasswordChangedAt *time.Time `json:"passwordChangedAt,omitempty"`
	// TOTPEnabled is whether the user's second factor is on: login then
	// needs a code (docs/security.md, "Second factor").
	TOTPEnabled bool `json:"totpEnabled"`
}

// LogValue keeps the email and the password hash out of logs.
func (u User) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", u.ID), slog.String("role", u.Role))
}

// meta is a small record of the auth package in the main store. The one
// in use is firstUserKey: inserted in the same Commit as the first user
// ever registered, so that exactly one user becomes admin by default even
// when registrations race, and so that REGISTRATION=closed lets exactly one
// user in.
type meta struct {
	ID        string    `json:"id"`
	UserID    string    `json:"userId,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

const firstUserKey = "first-user"

// Users is the users table of the main store.
type Users struct {
	st     *storage.Store
	users  *storage.Table[userRecord]
	meta   *storage.Table[meta]
	keys   userKeys
	opened sync.Map // user id → *openedUser (see open)
	now    func() time.Time
}

// NewUsers registers the users tables (the blind index of the email
// unique among users that are not soft-deleted) and the "meta" table on
// st, sealing users with v, the main store's vault (CREDENTIALS_KEY).
// Call it before st.Open, and RotateKeys after.
func NewUsers(st *storage.Store, v *vault.Vault) (*Users, error) {
	if v == nil {
		return nil, errors.New("users: no vault")
	}
	return &Users{
		st: st,
		users: storage.Register(st, "users_sealed", storage.TableConfig[userRecord]{
			ID:     func(u *userRecord) string { return u.ID },
			Live:   (*userRecord).live,
			Unique: map[string]func(*userRecord) string{"email": func(u *userRecord) string { return u.EmailIndex }},
			Pack:   packUsers,
		}),
		meta: storage.Register(st, "meta", storage.TableConfig[meta]{
			ID: func(m *meta) string { return m.ID },
		}),
		keys: userKeys{vault: v, index: v.Index(vault.UserEmail)},
		now:  time.Now,
	}, nil
}

// Get returns the user with id, unless there is none or it is soft-deleted.
func (u *Users) Get(id string) (User, bool) {
	rec, ok := u.users.Get(id)
	if !ok || !rec.live() {
		return User{}, false
	}
	return u.open(rec)
}

// byEmail returns the live user with email, compared case-insensitively.
func (u *Users) byEmail(email string) (User, bool) {
	rec, ok := u.users.Lookup("email", u.keys.index.Sum(normalizeEmail(email)))
	if !ok {
		return User{}, false
	}
	return u.open(rec)
}

// insertOp adds u, sealed.
func (u *Users) insertOp(usr User) storage.Op { return u.users.Insert(u.seal(usr)) }

// InsertOp returns the op that adds usr, sealed, to commit on the main
// store: for tools that build a store without a registration (and its
// Argon2 hash) per user, such as the memory benchmarks. usr.PasswordHash
// must be a PHC string Verify accepts, usr.Email lower case.
func (u *Users) InsertOp(usr User) storage.Op { return u.insertOp(usr) }

// firstUserExists reports whether a user was ever registered.
func (u *Users) firstUserExists() bool {
	_, ok := u.meta.Get(firstUserKey)
	return ok
}

// list returns the live users, oldest first.
func (u *Users) list() []User {
	var out []User
	u.users.Scan(func(rec userRecord) bool {
		if rec.live() {
			if usr, ok := u.open(rec); ok {
				out = append(out, usr)
			}
		}
		return true
	})
	slices.SortFunc(out, func(a, b User) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out
}

// SetRole gives the live user with email the role RoleUser or RoleAdmin.
// It is meant for `searchsvc admin grant|revoke EMAIL`, run against a store
// no server holds (the store's directory lock sees to that). Errors:
// ErrInvalidRole, ErrUserNotFound, or the store's.
func (u *Users) SetRole(email, role string) error {
	if role != RoleUser && role != RoleAdmin {
		return fmt.Errorf("%w: %q", ErrInvalidRole, role)
	}
	usr, ok := u.byEmail(email)
	if !ok {
		return ErrUserNotFound
	}
	now := u.now().UTC()
	err := u.st.Commit(u.users.Update(usr.ID, func(v *userRecord) error {
		if !v.live() {
			return ErrUserNotFound
		}
		v.Role = role
		v.UpdatedAt = now
		return nil
	}))
	if errors.Is(err, storage.ErrNotFound) {
		return ErrUserNotFound
	}
	return err
}

// errHashChanged aborts an update of a password hash that someone else
// changed since it was read.
var errHashChanged = errors.New("auth: password hash changed concurrently")

// setHashOp replaces the user's password hash, but only if it is still old
// and the user is still live, so that a login's re-hash of the old password
// can never undo a password change made meanwhile.
func (u *Users) setHashOp(id, old, hash string, now time.Time) storage.Op {
	return u.setHash(id, old, hash, now, false)
}

// changePasswordOp is setHashOp for a password change: it also marks when,
// which ends every session created before. The time is kept to the
// whole second, as sessions keep theirs: the session the change then
// creates, in the same second, is not older than it.
func (u *Users) changePasswordOp(id, old, hash string, now time.Time) storage.Op {
	return u.setHash(id, old, hash, now.Truncate(time.Second), true)
}

func (u *Users) setHash(id, old, hash string, now time.Time, changed bool) storage.Op {
	return u.users.Update(id, func(v *userRecord) error {
		if !v.live() {
			return ErrUserNotFound
		}
		if v.PasswordHash != old {
			return errHashChanged
		}
		v.PasswordHash = hash
		v.UpdatedAt = now
		if changed {
			v.PasswordChangedAt = &now
		}
		return nil
	})
}

// softDeleteOp marks the user deleted, which frees the email.
func (u *Users) softDeleteOp(id string, now time.Time) storage.Op {
	return u.users.Update(id, func(v *userRecord) error {
		if !v.live() {
			return ErrUserNotFound
		}
		v.DeletedAt = &now
		v.UpdatedAt = now
		return nil
	})
}

// normalizeEmail is the stored and compared form of an email address.
func normalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
