package httpx

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
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
	if _, ok := s.trusted[canonOrigin(origin)]; ok {
		return nil
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return nil
	}
	if r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		// The browser calls it same-origin, yet Origin is not the Host the
		// request arrived with: a proxy rewrote Host, and BASE_URL does
		// not name the address the browser uses.
		return errRewrittenHost
	}
	return errForeignOrigin
}

var errRewrittenHost = errors.New("the Origin header is not the request's Host, though the browser says same-origin: " +
	"if a proxy rewrites Host, set BASE_URL to the address browsers use")

// canonOrigin is origin as a browser sends it in an Origin header: scheme
// and host in lower case, without the scheme's default port. Anything
// but scheme://host[:port] is returned as it is (and then refused).
func canonOrigin(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Opaque != "" {
		return origin
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if (scheme == "https" && strings.HasSuffix(host, ":443")) || (scheme == "http" && strings.HasSuffix(host, ":80")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return scheme + "://" + host
}
