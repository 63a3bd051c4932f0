package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// CookieName is the browser-binding cookie set at the authorize route and
// checked at the callback route. The SameSite=Strict session cookie is not sent on the
// provider's cross-site redirect back to the callback; this one is
// SameSite=Lax, so it is sent on that top-level navigation, and proves that
// the browser finishing the flow is the one that started it.
const CookieName = "svc_oauth"

// CookiePath scopes the cookie to the two OAuth endpoints.
const CookiePath = "/v1/user-integration/oauth/"

// bindingLen is the length of a cookie value: 32 random bytes, base64url.
const bindingLen = 43

// newBinding returns a fresh cookie value.
func newBinding() string {
	var b [32]byte
	rand.Read(b[:]) // never returns an error; it crashes the program instead
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// hashBinding is what the server keeps of a cookie value.
func hashBinding(v string) [32]byte {
	return sha256.Sum256([]byte("searchsvc svc_oauth\x00" + v))
}

// setCookie sends the binding cookie: HttpOnly, SameSite=Lax, Secure as
// SESSION_SECURE, scoped to the OAuth endpoints, living as long as a state.
func setCookie(w http.ResponseWriter, value string, secure bool) {
	http.SetCookie(w, &http.Cookie{
		Name:     CookieName,
		Value:    value,
		Path:     CookiePath,
		MaxAge:   int(StateTTL / time.Second),
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	})
}

// clearCookie tells the browser to drop the binding cookie.
func clearCookie(w http.ResponseWriter, secure bool) {
	http.SetCookie(w, &http.Cookie{
		Name:     CookieName,
		Value:    "",
		Path:     CookiePath,
		Expires:  time.Unix(0, 0),
		MaxAge:   -1, // written as Max-Age=0
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	})
}

// readCookie returns the first well-formed svc_oauth value of r, or "".
// Like sessions.ReadCookie it reads only its own cookie and allocates
// nothing.
func readCookie(r *http.Request) string {
	for _, line := range r.Header["Cookie"] {
		for line != "" {
			var part string
			part, line, _ = strings.Cut(line, ";")
			name, val, ok := strings.Cut(textproto.TrimString(part), "=")
			if !ok || textproto.TrimString(name) != CookieName {
				continue
			}
			if validBinding(val) {
				return val
			}
		}
	}
	return ""
}

// validBinding reports whether v has the shape of a cookie value this
// package issues.
func validBinding(v string) bool {
	if len(v) != bindingLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
