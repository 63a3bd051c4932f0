package auth

import (
	"errors"
	"fmt"
	"net/http"

	"searchsvc/httpx"
)

// Profile serves GET /v1/user/profile behind Require: the
// caller's user record under result.
func (h *Handlers) Profile() http.Handler {
	return endpoint("user.readOne", h.profile)
}

func (h *Handlers) profile(w http.ResponseWriter, r *http.Request) error {
	p, err := principalOf(r)
	if err != nil {
		return err
	}
	// With CSRF tokens on, the caller's own token comes along, so a page
	// that reloads (the cookie is HttpOnly) can fetch it again.
	if h.csrf {
		httpx.One(w, r, "user.readOne", viewUser(p.user), httpx.F("csrfToken", p.session.CSRFToken))
		return nil
	}
	httpx.One(w, r, "user.readOne", viewUser(p.user))
	return nil
}

type passwordRequest struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// validate checks the request for u before any password is verified.
func (req *passwordRequest) validate(u User) error {
	var v validator
	if req.CurrentPassword == "" {
		v.add("currentPassword", "is required")
	}
	checkPassword(&v, "newPassword", req.NewPassword, u.Email, u.Name)
	if req.NewPassword != "" && req.NewPassword == req.CurrentPassword {
		v.add("newPassword", "must differ from the current password")
	}
	return v.err()
}

// ChangePassword serves PUT /v1/user/password, behind Require. The body
// is {currentPassword, newPassword}. A wrong current password is 400
// "validation failed" with a detail on currentPassword (the caller is
// already signed in, so 401 would wrongly suggest the session is bad);
// attempts are rate limited per user like logins per address, as a stolen
// session cookie must not become a way to guess the password. The new
// password must pass the password rule and differ from the current one. On
// success the new hash is stored, every session of the user is deleted and
// the caller gets a new one (new cookie, and csrfToken when CSRF is on).
func (h *Handlers) ChangePassword() http.Handler {
	return endpoint("user.updatePassword", h.changePassword)
}

func (h *Handlers) changePassword(w http.ResponseWriter, r *http.Request) error {
	p, err := principalOf(r)
	if err != nil {
		return err
	}
	var req passwordRequest
	if err := httpx.Decode(w, r, &req); err != nil {
		return err
	}
	u, found := h.users.Get(p.user.ID) // with its hash, which the principal lacks
	if !found {
		return errSessionUserGone
	}
	if err := req.validate(u); err != nil {
		return err
	}
	if ok, wait := h.pwChanges.allow(h.now(), u.ID); !ok {
		return &RateLimitError{Message: "too many password attempts", RetryAfter: wait}
	}
	ok, err := h.checkPassword(r.Context(), u, req.CurrentPassword)
	if err != nil {
		return err
	}
	if !ok {
		h.log.Info("password change with a wrong current password", "user_id", u.ID)
		return wrongCurrentPassword()
	}
	// Re-read: checkPassword may have re-hashed the current password.
	if fresh, found := h.users.Get(u.ID); found {
		u = fresh
	}
	hash, err := h.hasher.Hash(r.Context(), req.NewPassword)
	if err != nil {
		return err
	}
	if err := h.store.Commit(h.users.changePasswordOp(u.ID, u.PasswordHash, hash, h.now().UTC())); err != nil {
		if errors.Is(err, errHashChanged) {
			// Changed meanwhile by another request: what we checked is no
			// longer the current password.
			return wrongCurrentPassword()
		}
		return fmt.Errorf("store password: %w", err)
	}
	n, err := h.sessions.DeleteUser(u.ID, "")
	if err != nil {
		return fmt.Errorf("delete sessions after password change: %w", err)
	}
	h.log.Info("password changed", "user_id", u.ID, "sessions_deleted", n)
	s, err := h.newSession(w, r, u.ID)
	if err != nil {
		return err
	}
	var extra []httpx.Field
	if h.csrf {
		extra = append(extra, httpx.F("csrfToken", s.CSRFToken))
	}
	success(w, r, "user.updatePassword", extra...)
	return nil
}

func wrongCurrentPassword() error {
	return &ValidationError{Fields: []httpx.FieldError{{Field: "currentPassword", Message: "is incorrect"}}}
}
