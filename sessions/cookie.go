package sessions

import (
	"net/http"
	"net/textproto"
	"strings"
	"time"

	"searchsvc/storage/uuid"
)

// CookieName is the name of the session cookie.
const CookieName = "svc_session"

// SetCookie sends the session cookie for s (openapi.json's
// Authentication): HttpOnly, SameSite=Strict, Path=/, no Domain (this host only), Max-Age
// the configured MaxAge in seconds, and Secure as configured.
func (m *Manager) SetCookie(w http.ResponseWriter, s Session) {
	http.SetCookie(w, &http.Cookie{
		Name:     CookieName,
		Value:    s.ID,
		Path:     "/",
		MaxAge:   int(m.cfg.MaxAge / time.Second),
		HttpOnly: true,
		Secure:   m.cfg.Secure,
		SameSite: http.SameSiteStrictMode,
	})
}

// ClearCookie tells the browser to drop the session cookie: an empty value
// that expired in 1970 and Max-Age=0, with the attributes it was set with.
func (m *Manager) ClearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name:     CookieName,
		Value:    "",
		Path:     "/",
		Expires:  time.Unix(0, 0),
		MaxAge:   -1, // written as Max-Age=0
		HttpOnly: true,
		Secure:   m.cfg.Secure,
		SameSite: http.SameSiteStrictMode,
	})
}

// ReadCookie returns the session id in r's svc_session cookie. With several
// such cookies (a stale one set for a parent path, say), it returns the
// first that holds a canonical lower-case UUID. It returns ErrNoCookie when
// there is none or all are empty, and ErrInvalid when none holds a UUID.
//
// It reads the Cookie header the way net/http does, but looks only for its
// own cookie and allocates nothing: the id it returns is a slice of the
// header.
func ReadCookie(r *http.Request) (string, error) {
	present := false
	for _, line := range r.Header["Cookie"] {
		for line != "" {
			var part string
			part, line, _ = strings.Cut(line, ";")
			name, val, ok := strings.Cut(textproto.TrimString(part), "=")
			if !ok || textproto.TrimString(name) != CookieName {
				continue
			}
			if len(val) > 1 && val[0] == '"' && val[len(val)-1] == '"' {
				val = val[1 : len(val)-1]
			}
			if uuid.Valid(val) {
				return val, nil
			}
			if val != "" {
				present = true
			}
		}
	}
	if present {
		return "", ErrInvalid
	}
	return "", ErrNoCookie
}
