package httpx

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCrossOriginRefused: every unsafe request a browser marks as coming
// from another origin is refused before its handler runs, bodies or not;
// a sibling subdomain (same site, another origin) included, and an Origin
// that is not the service's whatever Sec-Fetch-Site says. Same-origin
// requests, trusted origins and clients that are no browser pass.
func TestCrossOriginRefused(t *testing.T) {
	tests := []struct {
		name, method, site, origin, body string
		want                             int
	}{
		{"form post from another site", "POST", "cross-site", "https://evil.example", "a=b", 403},
		{"text/plain from a sibling subdomain", "POST", "same-site", "https://evil.search.example", "a=b", 403},
		{"no-cors fetch, no content type", "POST", "cross-site", "https://evil.example", "", 403},
		{"DELETE from another site", "DELETE", "cross-site", "https://evil.example", "", 403},
		{"PUT from another site", "PUT", "cross-site", "https://evil.example", "{}", 403},
		{"old browser: Origin only, other host", "POST", "", "https://evil.example", "", 403},
		{"Sec-Fetch-Site same-origin, Origin another", "POST", "same-origin", "https://evil.example", "", 403},
		{"Sec-Fetch-Site same-origin, Origin a sibling", "DELETE", "same-origin", "https://evil.search.example", "{}", 403},
		{"Sec-Fetch-Site none, Origin another", "POST", "none", "https://evil.example", "", 403},
		{"Origin null", "POST", "same-origin", "null", "", 403},
		{"Origin not a URL", "PATCH", "", "::", "", 403},
		{"same origin", "POST", "same-origin", "https://search.example", "{}", 200},
		{"same origin, no Origin", "POST", "same-origin", "", "{}", 200},
		{"old browser: Origin is the host", "POST", "", "https://search.example", "", 200},
		{"trusted frontend", "POST", "cross-site", "https://app.example", "{}", 200},
		{"trusted frontend, same-site", "PUT", "same-site", "https://app.example", "", 200},
		{"no browser (curl)", "POST", "", "", "", 200},
		{"user typed it", "POST", "none", "", "", 200},
		{"GET from another site", "GET", "cross-site", "https://evil.example", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			mux := http.NewServeMux()
			mux.HandleFunc("/v1/auth/logout", func(w http.ResponseWriter, r *http.Request) {
				ran = true
				One(w, r, "auth.logout", map[string]bool{"success": true})
			})
			h := newStack(t, mux, Config{TrustedOrigins: []string{"https://app.example"}})
			req := httptest.NewRequest(tt.method, "https://search.example/v1/auth/logout", strings.NewReader(tt.body))
			if tt.body != "" {
				// Refused for its origin whatever it sends: a JSON body
				// would pass the content-type rule.
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.site != "" {
				req.Header.Set("Sec-Fetch-Site", tt.site)
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("got %d, want %d (%s)", rec.Code, tt.want, rec.Body.String())
			}
			if tt.want == 403 {
				wantRefused(t, rec, "cross_origin", "cross-origin request refused", ran)
			}
		})
	}
}

// TestUnsafeContentType: a POST, PUT, PATCH or DELETE carries a JSON body
// or none. A body needs Content-Type application/json, and a Content-Type
// that is sent must be that, body or not (what a form or a no-cors fetch
// sends to a body-less route such as logout); otherwise 415 before any
// route runs. Safe methods are not looked at.
func TestUnsafeContentType(t *testing.T) {
	tests := []struct {
		name, method, ctype, body string
		chunked                   bool
		want                      int
	}{
		{"text/plain body", "POST", "text/plain", `{"csrfToken":"t"}`, false, 415},
		{"form body", "POST", "application/x-www-form-urlencoded", "a=b", false, 415},
		{"multipart body", "PUT", "multipart/form-data; boundary=x", "--x--", false, 415},
		{"body without Content-Type", "POST", "", "{}", false, 415},
		{"chunked body without Content-Type", "PATCH", "", "{}", true, 415},
		{"empty body, text/plain", "POST", "text/plain", "", false, 415},
		{"empty body, form", "DELETE", "application/x-www-form-urlencoded", "", false, 415},
		{"malformed Content-Type", "POST", "application/json;;", "{}", false, 415},
		{"JSON body", "POST", "application/json", "{}", false, 200},
		{"JSON body with charset", "PUT", "application/json; charset=utf-8", "{}", false, 200},
		{"chunked JSON body", "POST", "application/json", "{}", true, 200},
		{"no body, no Content-Type", "POST", "", "", false, 200},
		{"no body, JSON Content-Type", "DELETE", "application/json", "", false, 200},
		{"GET with text/plain", "GET", "text/plain", "", false, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			mux := http.NewServeMux()
			mux.HandleFunc("/v1/auth/logout", func(w http.ResponseWriter, r *http.Request) {
				ran = true
				One(w, r, "auth.logout", map[string]bool{"success": true})
			})
			h := newStack(t, mux, Config{})
			req := httptest.NewRequest(tt.method, "/v1/auth/logout", strings.NewReader(tt.body))
			if tt.chunked {
				req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
			}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("got %d, want %d (%s)", rec.Code, tt.want, rec.Body.String())
			}
			if tt.want == 415 {
				wantRefused(t, rec, "unsupported_media_type", "invalid request body", ran)
			}
		})
	}
}

// wantRefused checks a refusal's code and message, and that the route did
// not run.
func wantRefused(t *testing.T, rec *httptest.ResponseRecorder, code, message string, ran bool) {
	t.Helper()
	e, _ := decodeBody(t, rec)["error"].(map[string]any)
	if e["code"] != code || e["message"] != message {
		t.Errorf("error: got %v, want %s %q", e, code, message)
	}
	if ran {
		t.Error("the handler ran for a refused request")
	}
}

// TestTrustedOriginsInvalid: an origin that is not scheme://host is an
// error of Handler, not a panic.
func TestTrustedOriginsInvalid(t *testing.T) {
	_, err := Handler(http.NewServeMux(), Config{TrustedOrigins: []string{"https://app.example/path"}})
	if err == nil || !strings.Contains(err.Error(), "TrustedOrigins") {
		t.Errorf("got %v, want an error naming TrustedOrigins", err)
	}
}

// A BASE_URL as a person may write it (upper case, the default port) is
// the origin a browser sends; behind a proxy that rewrites Host, the app's
// requests pass only through it, and a refusal says what to set.
func TestTrustedOriginAsBrowsersWriteIt(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://Search.Example.org:443", "https://search.example.org"},
		{"HTTP://search.example.org:80", "http://search.example.org"},
		{"https://search.example.org:8443", "https://search.example.org:8443"},
		{"http://[::1]:80", "http://[::1]"},
		{"null", "null"},
	} {
		if got := canonOrigin(tc.in); got != tc.want {
			t.Errorf("canonOrigin(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/auth/logout", func(w http.ResponseWriter, r *http.Request) {
		One(w, r, "auth.logout", map[string]bool{"success": true})
	})
	for _, tc := range []struct {
		name    string
		trusted []string
		want    int
	}{
		{"BASE_URL written with capitals and :443", []string{"https://Search.Example.org:443"}, 200},
		{"no BASE_URL", nil, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newStack(t, mux, Config{TrustedOrigins: tc.trusted})
			req := httptest.NewRequest("POST", "http://127.0.0.1:8080/v1/auth/logout", nil) // Host rewritten by the proxy
			req.Header.Set("Origin", "https://search.example.org")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tc.want {
				t.Fatalf("got %d, want %d: %s", w.Code, tc.want, w.Body)
			}
			if tc.want == 403 {
				if err := h.checkOrigin(req); !errors.Is(err, errRewrittenHost) {
					t.Errorf("cause %v, want the sentence about BASE_URL", err)
				}
			}
		})
	}
}
