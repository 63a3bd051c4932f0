package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"

	"searchsvc/httpx"
	"searchsvc/sessions"
)

// principal is who a request authenticated as.
type principal struct {
	user    User
	session sessions.Session
}

type principalKey struct{}

// principalFrom returns the principal Require attached to ctx: in the
// request's httpx.Info when it went through httpx.Handler, as a context
// value of its own when not.
func principalFrom(ctx context.Context) (*principal, bool) {
	if i, ok := httpx.InfoFromContext(ctx); ok {
		p, ok := i.Principal.(*principal)
		return p, ok
	}
	p, ok := ctx.Value(principalKey{}).(*principal)
	return p, ok
}

// withPrincipal attaches p to r for principalFrom.
func withPrincipal(r *http.Request, p *principal) *http.Request {
	if i, ok := httpx.InfoFromContext(r.Context()); ok {
		i.Principal = p
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}

// UserFrom returns the user Require attached to ctx, without its
// PasswordHash.
func UserFrom(ctx context.Context) (User, bool) {
	p, ok := principalFrom(ctx)
	if !ok {
		return User{}, false
	}
	return p.user, true
}

// SessionFrom returns the session Require attached to ctx.
func SessionFrom(ctx context.Context) (sessions.Session, bool) {
	p, ok := principalFrom(ctx)
	if !ok {
		return sessions.Session{}, false
	}
	return p.session, true
}

// principalOf is the principal of a request behind Require. A handler
// mounted without Require answers as if there were no cookie.
func principalOf(r *http.Request) (*principal, error) {
	p, ok := principalFrom(r.Context())
	if !ok {
		return nil, sessions.ErrNoCookie
	}
	return p, nil
}

// Require is the session middleware. It authenticates the request in
// this order, each failure a 401 of its own (openapi.json's
// Authentication) that also clears the cookie: no cookie ("no session cookie"); unknown or malformed session id
// ("invalid session"); expired or idle ("session expired", the session is
// deleted); user missing or soft-deleted ("user not found", the session is
// deleted). Then, when CSRF is on, a POST, PUT, PATCH or DELETE must carry
// the session's token in the X-CSRF-Token header (403 "invalid CSRF
// token"); a token in the body does not count (docs/security.md,
// "Cross-origin requests and CSRF"). On success the user and session are attached
// to the request's context (UserFrom, SessionFrom), and a session that
// sliding renewal extended gets a fresh cookie. Errors are answered under
// next's operation name when next is one of auth's handlers.
func (h *Handlers) Require(next http.Handler) http.Handler {
	g := &guard{h: h, next: next, op: httpx.OperationOf(next, "session.validate")}
	return httpx.Handle(g.op, g.serve)
}

// RequireAdmin is Require, then 403 "admin required" unless the user's
// role is admin.
func (h *Handlers) RequireAdmin(next http.Handler) http.Handler {
	g := &guard{h: h, next: next, op: httpx.OperationOf(next, "session.validate"), admin: true}
	return h.Require(httpx.Handle(g.op, g.serve))
}

// guard is Require (admin false) or the admin check behind it.
type guard struct {
	h     *Handlers
	next  http.Handler
	op    string
	admin bool
}

func (g *guard) serve(w http.ResponseWriter, r *http.Request) error {
	if g.admin {
		if u, ok := UserFrom(r.Context()); !ok || u.Role != RoleAdmin {
			return httpError(ErrAdminRequired)
		}
		g.next.ServeHTTP(w, r)
		return nil
	}
	p, renewed, err := g.h.authenticate(r)
	if err == nil && g.h.csrf && unsafeMethod(r.Method) {
		err = checkCSRF(r, p.session.CSRFToken)
	}
	if err != nil {
		e := httpx.AsError(httpError(err))
		if e.Status == http.StatusUnauthorized {
			g.h.sessions.ClearCookie(w)
		}
		return e
	}
	if renewed {
		g.h.sessions.SetCookie(w, p.session)
	}
	r = withPrincipal(r, p)
	g.next.ServeHTTP(w, r)
	return nil
}

// authenticate runs Require's checks up to the CSRF token: the cookie,
// the session (sessions.Validate), the user and its last password change.
func (h *Handlers) authenticate(r *http.Request) (*principal, bool, error) {
	id, err := sessions.ReadCookie(r)
	if err != nil {
		return nil, false, err
	}
	s, renewed, err := h.sessions.Validate(id, httpx.InfoFrom(r).ClientIP)
	if err != nil {
		return nil, false, err
	}
	u, ok := h.users.Get(s.UserID)
	if !ok {
		if err := h.sessions.Delete(s.ID); err != nil && !errors.Is(err, sessions.ErrNotFound) {
			return nil, false, fmt.Errorf("delete session of a missing user: %w", err)
		}
		h.log.Info("session of a missing user deleted", "user_id", s.UserID)
		return nil, false, errSessionUserGone
	}
	if u.PasswordChangedAt != nil && s.CreatedAt.Before(*u.PasswordChangedAt) {
		// Older than the last password change: the change deletes such
		// sessions, and this one survived only a failure between the stores.
		if err := h.sessions.Delete(s.ID); err != nil && !errors.Is(err, sessions.ErrNotFound) {
			return nil, false, fmt.Errorf("delete session older than a password change: %w", err)
		}
		h.log.Warn("session older than the password change refused", "user_id", u.ID)
		return nil, false, sessions.ErrInvalid
	}
	// The principal never carries the password hash: it lives as long as
	// the request, within reach of every handler and middleware, and only
	// the password change needs it, which reads the user again.
	u.PasswordHash = ""
	return &principal{user: u, session: s}, renewed, nil
}

func unsafeMethod(m string) bool {
	switch m {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// checkCSRF compares the request's X-CSRF-Token header with want in
// constant time. Only the header counts: a form or a text/plain body,
// which a page of another site can make a browser send, can never carry
// it, and the body stays the handler's alone.
func checkCSRF(r *http.Request, want string) error {
	got := r.Header.Get("X-CSRF-Token")
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return ErrInvalidCSRF
	}
	return nil
}
