package httpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCrossOriginRefused: every unsafe request a browser marks as coming
// from another origin is refused before its handler runs, bodies or not;
// a sibling subdomain (same site, another origin) included. Same-origin
// requests, trusted origins and clients that are no browser pass.
func TestCrossOriginRefused(t *testing.T) {
	tests := []struct {
		name, method, site, origin, ctype string
		want                              int
	}{
		{"form post from another site", "POST", "cross-site", "https://evil.example", "application/x-www-form-urlencoded", 403},
		{"text/plain from a sibling subdomain", "POST", "same-site", "https://evil.search.example", "text/plain", 403},
		{"no-cors fetch, no content type", "POST", "cross-site", "https://evil.example", "", 403},
		{"DELETE from another site", "DELETE", "cross-site", "https://evil.example", "", 403},
		{"PUT from another site", "PUT", "cross-site", "https://evil.example", "application/json", 403},
		{"old browser: Origin only, other host", "POST", "", "https://evil.example", "", 403},
		{"same origin", "POST", "same-origin", "https://search.example", "application/json", 200},
		{"old browser: Origin is the host", "POST", "", "https://search.example", "", 200},
		{"trusted frontend", "POST", "cross-site", "https://app.example", "application/json", 200},
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
			req := httptest.NewRequest(tt.method, "https://search.example/v1/auth/logout", strings.NewReader("a=b"))
			if tt.site != "" {
				req.Header.Set("Sec-Fetch-Site", tt.site)
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("got %d, want %d (%s)", rec.Code, tt.want, rec.Body.String())
			}
			if tt.want == 403 {
				e, _ := decodeBody(t, rec)["error"].(map[string]any)
				if e["code"] != "cross_origin" || e["message"] != "cross-origin request refused" {
					t.Errorf("error: got %v, want cross_origin \"cross-origin request refused\"", e)
				}
				if ran {
					t.Error("the handler ran for a refused request")
				}
			}
		})
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
