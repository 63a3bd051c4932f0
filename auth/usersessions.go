package auth

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"searchsvc/httpx"
	"searchsvc/sessions"
	"searchsvc/storage/uuid"
)

// ListSessions serves GET /v1/auth/sessions and GET /v1/user/sessions
// behind Require: the caller's active sessions, newest first, current:
// true on the caller's own, filtered by inIds and ninIds on sessionId.
// CSRF tokens are never listed.
func (h *Handlers) ListSessions() http.Handler {
	return endpoint("session.readMany", h.listSessions)
}

func (h *Handlers) listSessions(w http.ResponseWriter, r *http.Request) error {
	p, err := principalOf(r)
	if err != nil {
		return err
	}
	f, err := httpx.ParseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	list := h.sessions.List(p.user.ID)
	out := make([]sessionView, 0, len(list))
	for _, s := range list {
		if f.Match(s.ID) {
			out = append(out, viewSession(s, p.session.ID))
		}
	}
	fields := []httpx.Field{httpx.F("results", out), httpx.F("count", len(out))}
	if e, ok := h.sessions.EndedByLimit(p.user.ID); ok {
		fields = append(fields, httpx.F("endedByLimit", endedView{
			Count: e.Count, LastAt: e.LastAt.UTC(), Limit: h.sessions.MaxPerUser(),
			Message: fmt.Sprintf("%d older sessions were ended to keep at most %d; the last at %s",
				e.Count, h.sessions.MaxPerUser(), e.LastAt.UTC().Format(time.RFC3339)),
		}))
	}
	httpx.Write(w, r, http.StatusOK, "session.readMany", fields...)
	return nil
}

// endedView tells the session list's reader that sessions were ended to
// make room (sessions.Ended).
type endedView struct {
	Count   int       `json:"count"`
	LastAt  time.Time `json:"lastAt"`
	Limit   int       `json:"limit"`
	Message string    `json:"message"`
}

// DeleteSession serves DELETE /v1/auth/sessions/{sessionId} and DELETE
// /v1/user/sessions/{sessionId} behind Require. An id that is not a UUID
// or names no session is 404 "session not found"; another user's session
// is 403 "not your session", checked before anything is changed. Ending
// one's own current session also clears the cookie.
//
// Answering 404 and 403 differently tells a caller whether an id they
// already hold names a live session of someone else. That is no leak
// worth hiding: ids are 122 random bits that cannot be guessed, and
// whoever holds one could present it as a cookie anyway. The 403 is
// the API's (openapi.json, DELETE /v1/auth/sessions/{sessionId}), which
// clients rely on.
func (h *Handlers) DeleteSession() http.Handler {
	return endpoint("session.deleteOne", h.deleteSession)
}

func (h *Handlers) deleteSession(w http.ResponseWriter, r *http.Request) error {
	p, err := principalOf(r)
	if err != nil {
		return err
	}
	id := r.PathValue("sessionId")
	if !uuid.Valid(id) {
		return sessions.ErrNotFound
	}
	s, ok := h.sessions.Get(id)
	if !ok {
		return sessions.ErrNotFound
	}
	if s.UserID != p.user.ID {
		h.log.Warn("attempt to delete another user's session", "user_id", p.user.ID, "owner_id", s.UserID)
		return ErrNotYourSession
	}
	if err := h.sessions.Delete(id); err != nil {
		if errors.Is(err, sessions.ErrNotFound) {
			return sessions.ErrNotFound
		}
		return fmt.Errorf("delete session: %w", err)
	}
	if id == p.session.ID {
		h.sessions.ClearCookie(w)
	}
	success(w, r, "session.deleteOne")
	return nil
}

// LogoutAll serves POST /v1/auth/logout-all, behind Require:
// every session of the caller but the current one is deleted.
func (h *Handlers) LogoutAll() http.Handler {
	return endpoint("auth.logoutAll", h.logoutAll)
}

func (h *Handlers) logoutAll(w http.ResponseWriter, r *http.Request) error {
	p, err := principalOf(r)
	if err != nil {
		return err
	}
	n, err := h.sessions.DeleteUser(p.user.ID, p.session.ID)
	if err != nil {
		return fmt.Errorf("delete sessions: %w", err)
	}
	success(w, r, "auth.logoutAll", httpx.F("deleted", n))
	return nil
}

// ForceLogout serves POST /v1/admin/users/{userId}/force-logout (endpoint
// 7), behind RequireAdmin: every session of that user is deleted. An
// unknown or deleted user is 404 "user not found". An admin forcing out
// themselves loses the current session too, and the cookie is cleared.
func (h *Handlers) ForceLogout() http.Handler {
	return endpoint("auth.forceLogout", h.forceLogout)
}

func (h *Handlers) forceLogout(w http.ResponseWriter, r *http.Request) error {
	p, err := principalOf(r)
	if err != nil {
		return err
	}
	target, ok := h.users.Get(r.PathValue("userId"))
	if !ok {
		return ErrUserNotFound
	}
	n, err := h.sessions.DeleteUser(target.ID, "")
	if err != nil {
		return fmt.Errorf("delete sessions: %w", err)
	}
	h.log.Info("user forced out", "user_id", target.ID, "admin_id", p.user.ID, "deleted", n)
	if target.ID == p.user.ID {
		h.sessions.ClearCookie(w)
	}
	success(w, r, "auth.forceLogout", httpx.F("deleted", n))
	return nil
}
