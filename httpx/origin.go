package httpx

import (
	"errors"
	"net/http"
	"net/url"
)

// unsafeMethod reports whether a request with method m changes state: the
// methods the cross-origin, content-type and CSRF token checks apply to.
func unsafeMethod(m string) bool {
	switch m {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

var errForeignOrigin = errors.New("the Origin header names neither the request's host nor a trusted origin")

// checkOrigin refuses an unsafe request from another origin. The
// standard check (s.cop) reads Sec-Fetch-Site first and, when it says
// same-origin or none, never looks at Origin; so an Origin that is sent
// is checked here as well, whatever Sec-Fetch-Site says: it must be one
// of Config.TrustedOrigins or name the request's own Host. Like the
// standard check, only the host is compared: behind a proxy that ends
// TLS the request does not know its own scheme.
func (s *Stack) checkOrigin(r *http.Request) error {
	if err := s.cop.Check(r); err != nil {
		return err
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	if _, ok := s.trusted[origin]; ok {
		return nil
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" && u.Host == r.Host {
		return nil
	}
	return errForeignOrigin
}
