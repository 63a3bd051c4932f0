package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"searchsvc/httpx"
	"searchsvc/integrations/textguard"
	"searchsvc/sessions"
	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

type registerRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Name     string `json:"name"`
}

// normalize trims the email and name and lower-cases the email; the
// password is taken exactly as sent.
func (req *registerRequest) normalize() {
	req.Email = normalizeEmail(req.Email)
	req.Name = strings.TrimSpace(req.Name)
}

func (req *registerRequest) validate() error {
	var v validator
	checkEmail(&v, req.Email)
	checkName(&v, req.Name)
	checkPassword(&v, "password", req.Password, req.Email, req.Name)
	return v.err()
}

// Register serves POST /v1/auth/register: it creates the
// user, the first one ever as admin, and signs them in: 201 with the user
// under user and result, and the session's csrfToken when CSRF is on.
func (h *Handlers) Register() http.Handler {
	return endpoint("auth.register", h.register)
}

func (h *Handlers) register(w http.ResponseWriter, r *http.Request) error {
	// Each registration costs a hash, a user record and a session: limited
	// per address like logins, before any of that is spent.
	if ok, wait := h.signups.allow(h.now(), httpx.AddrKeys(httpx.InfoFrom(r).ClientIP)...); !ok {
		return &RateLimitError{Message: "too many registration attempts", RetryAfter: wait}
	}
	var req registerRequest
	if err := httpx.Decode(w, r, &req); err != nil {
		return err
	}
	req.normalize()
	if err := req.validate(); err != nil {
		return err
	}
	// Cheap refusals first, before a hash is spent. The store's writer has
	// the last word on both (see createUser).
	first := !h.users.firstUserExists()
	if !h.open && !first {
		return ErrRegistrationClosed
	}
	if _, taken := h.users.byEmail(req.Email); taken {
		return ErrEmailTaken
	}
	hash, err := h.hasher.Hash(r.Context(), req.Password)
	if err != nil {
		return err
	}
	u, err := h.createUser(req.Email, req.Name, hash, first)
	if err != nil {
		return err
	}
	if err := h.endPresentedSession(r); err != nil {
		return err
	}
	h.log.Info("user registered", "user_id", u.ID, "role", u.Role)
	return h.startSession(w, r, http.StatusCreated, "auth.register", u)
}

// endPresentedSession deletes the session whose cookie r carries, if any:
// a browser that signs in, or registers, gets a new session with a new id
// and keeps nothing of what it brought (session fixation), and the old
// session, whose cookie the new one replaces, does not linger unseen.
func (h *Handlers) endPresentedSession(r *http.Request) error {
	old, err := sessions.ReadCookie(r)
	if err != nil {
		return nil
	}
	if err := h.sessions.Delete(old); err != nil && !errors.Is(err, sessions.ErrNotFound) {
		return fmt.Errorf("delete the session the request brought: %w", err)
	}
	return nil
}

// createUser stores a new user. When no user has ever been registered it
// tries to be the first: the admin, committed together with the
// first-user record, so of racing registrations exactly one wins that
// (the others see ErrExists and, when registration is open, become
// ordinary users). The email's uniqueness among live users is decided by
// the store's unique index in the same writer, so of two racing
// registrations of one email exactly one succeeds.
func (h *Handlers) createUser(email, name, hash string, tryFirst bool) (User, error) {
	now := h.now()
	u := User{ID: uuid.New(), Email: email, Name: name, Role: RoleUser, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	if tryFirst {
		u.Role = RoleAdmin
		err := h.store.Commit(h.users.insertOp(u), h.users.meta.Insert(meta{ID: firstUserKey, UserID: u.ID, CreatedAt: now}))
		if err == nil || !errors.Is(err, storage.ErrExists) {
			return u, commitErr(err)
		}
		if !h.open {
			return User{}, ErrRegistrationClosed
		}
		u.Role = RoleUser
	}
	return u, commitErr(h.store.Commit(h.users.insertOp(u)))
}

// commitErr names a unique-email violation; other errors pass through.
func commitErr(err error) error {
	if errors.Is(err, storage.ErrUnique) {
		return ErrEmailTaken
	}
	if err != nil {
		return fmt.Errorf("store user: %w", err)
	}
	return nil
}

// startSession creates a password session for u, sets its cookie and
// writes u under user and result, with the session's CSRF token when CSRF
// is on.
func (h *Handlers) startSession(w http.ResponseWriter, r *http.Request, status int, op string, u User) error {
	s, err := h.newSession(w, r, u.ID)
	if err != nil {
		return err
	}
	v := viewUser(u)
	fields := []httpx.Field{httpx.F("user", v), httpx.F("result", v)}
	if h.csrf {
		fields = append(fields, httpx.F("csrfToken", s.CSRFToken))
	}
	httpx.Write(w, r, status, op, fields...)
	return nil
}

// newSession creates a password session for userID and sets its cookie.
func (h *Handlers) newSession(w http.ResponseWriter, r *http.Request, userID string) (sessions.Session, error) {
	ua := textguard.Truncate(r.UserAgent(), maxUserAgent)
	s, err := h.sessions.Create(userID, httpx.InfoFrom(r).ClientIP, ua, "password")
	if err != nil {
		return sessions.Session{}, fmt.Errorf("create session: %w", err)
	}
	h.sessions.SetCookie(w, s)
	return s, nil
}

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	// TOTPCode or RecoveryCode is the second step of a user whose second
	// factor is on (docs/security.md, "Second factor").
	TOTPCode     string `json:"totpCode"`
	RecoveryCode string `json:"recoveryCode"`
}

func (req *loginRequest) validate() error {
	req.Email = normalizeEmail(req.Email)
	var v validator
	if req.Email == "" {
		v.add("email", "is required")
	}
	if req.Password == "" {
		v.add("password", "is required")
	}
	return v.err()
}

// Login serves POST /v1/auth/login. Every attempt counts
// against the client address's rate limit, checked first. An unknown email
// and a wrong password get the same 401 after the same amount of Argon2
// work. A user whose second factor is on also needs totpCode (or
// recoveryCode): without one the answer is 401 totp_required, with a wrong
// or reused one 401 invalid_totp_code (secondStep). A session cookie sent
// along is deleted (session fixation) and a new session issued: 200 with
// the user under user and result.
func (h *Handlers) Login() http.Handler {
	return endpoint("auth.login", h.login)
}

func (h *Handlers) login(w http.ResponseWriter, r *http.Request) error {
	ip := httpx.InfoFrom(r).ClientIP
	if ok, wait := h.logins.allow(h.now(), httpx.AddrKeys(ip)...); !ok {
		h.log.Debug("login rate limited", "client_ip", ip.String())
		return &RateLimitError{Message: "too many login attempts", RetryAfter: wait}
	}
	var req loginRequest
	if err := httpx.Decode(w, r, &req); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	u, err := h.checkLogin(r.Context(), req.Email, req.Password)
	if err != nil {
		if errors.Is(err, ErrInvalidCredentials) {
			h.log.Info("login failed", "client_ip", ip.String())
		}
		return err
	}
	if u.TOTPEnabled {
		// Only after the password: a code is never checked, nor counted,
		// for someone who does not know it.
		if err := h.secondStep(u.ID, req.TOTPCode, req.RecoveryCode); err != nil {
			return err
		}
	}
	if err := h.endPresentedSession(r); err != nil {
		return err
	}
	if err := h.startSession(w, r, http.StatusOK, "auth.login", u); err != nil {
		return err
	}
	// Only once the session is stored: a login whose session write failed
	// signed nobody in.
	h.log.Info("login", "user_id", u.ID, "client_ip", ip.String())
	return nil
}

// checkLogin returns the live user with email if password is theirs, else
// ErrInvalidCredentials, having spent one Argon2 derivation either way.
func (h *Handlers) checkLogin(ctx context.Context, email, password string) (User, error) {
	if utf8.RuneCountInString(password) > maxPasswordLen {
		// No stored password is this long; refuse without hashing a
		// megabyte, whoever the email belongs to.
		return User{}, ErrInvalidCredentials
	}
	u, ok := h.users.byEmail(email)
	if !ok {
		if err := h.hasher.verifyDummy(ctx, password); err != nil {
			return User{}, err
		}
		return User{}, ErrInvalidCredentials
	}
	if h.failures.full(u.ID, h.now()) {
		h.log.Info("login delayed: account has many recent failed logins", "user_id", u.ID)
		if err := h.sleep(ctx, accountDelay); err != nil {
			return User{}, err
		}
	}
	ok, err := h.checkPassword(ctx, u, password)
	if err != nil {
		return User{}, err
	}
	if !ok {
		h.failures.note(u.ID, h.now())
		return User{}, ErrInvalidCredentials
	}
	h.failures.reset(u.ID)
	return u, nil
}

// checkPassword reports whether password is u's. A hash made with
// parameters other than the current ones is replaced on success; failing
// to store it is logged, not fatal.
func (h *Handlers) checkPassword(ctx context.Context, u User, password string) (bool, error) {
	match, rehash, err := h.hasher.Verify(ctx, password, u.PasswordHash)
	if errors.Is(err, ErrBadHash) {
		h.log.Error("stored password hash is unusable", "user_id", u.ID, "err", err)
		if err := h.hasher.verifyDummy(ctx, password); err != nil {
			return false, err
		}
		return false, nil
	}
	if err != nil || !match {
		return false, err
	}
	if rehash {
		hash, err := h.hasher.Hash(ctx, password)
		if err == nil {
			err = h.store.Commit(h.users.setHashOp(u.ID, u.PasswordHash, hash, h.now()))
		}
		if err != nil {
			h.log.Warn("re-hash of password with current parameters not stored", "user_id", u.ID, "err", err)
		} else {
			h.log.Info("password re-hashed with current parameters", "user_id", u.ID)
		}
	}
	return true, nil
}

// Logout serves POST /v1/auth/logout, behind Require: it
// deletes the caller's session and clears the cookie.
func (h *Handlers) Logout() http.Handler {
	return endpoint("auth.logout", h.logout)
}

func (h *Handlers) logout(w http.ResponseWriter, r *http.Request) error {
	p, err := principalOf(r)
	if err != nil {
		return err
	}
	if err := h.sessions.Delete(p.session.ID); err != nil && !errors.Is(err, sessions.ErrNotFound) {
		return fmt.Errorf("delete session: %w", err)
	}
	h.sessions.ClearCookie(w)
	success(w, r, "auth.logout")
	return nil
}
