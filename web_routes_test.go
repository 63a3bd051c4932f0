package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"searchsvc/web"
)

// TestWebRoutes: through the whole stack as served, every page of the app
// answers its document with the page headers; assets come gzipped and
// cached for a year; everything else, /v1/ above all, keeps the API's
// JSON answers and headers.
func TestWebRoutes(t *testing.T) {
	env := testEnv(t.TempDir())
	env["BASE_URL"] = "https://search.example.org"
	srv := startRun(t, env)
	fetch := func(method, path string, header map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		// The transport's own gzip handling would hide Content-Encoding.
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	_, doc := fetch("GET", "/", nil)
	if !strings.Contains(string(doc), "<title>searchsvc</title>") {
		t.Fatalf("GET /: got %q, want the app's document", doc)
	}

	pages := []string{"/", "/search", "/search?q=from%3Aalice+%22q3+budget%22", "/login", "/register",
		"/items/6f1c7c1e-8a2b-4c9e-9b1a-2d3e4f5a6b7c", "/integrations",
		"/integrations?status=error&integration=gmail&message=gmail%20authorization%20was%20cancelled",
		"/integrations?status=success&integration=gmail", "/sessions", "/account", "/admin"}
	for _, p := range pages {
		t.Run("page "+p, func(t *testing.T) {
			resp, body := fetch("GET", p, nil)
			if resp.StatusCode != 200 || string(body) != string(doc) {
				t.Fatalf("got %d and %d bytes, want 200 and the document", resp.StatusCode, len(body))
			}
			for k, want := range map[string]string{"Content-Type": "text/html; charset=utf-8",
				"Cache-Control": "no-cache", "Content-Security-Policy": web.CSP, "X-Content-Type-Options": "nosniff"} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s: got %q, want %q", k, got, want)
				}
			}
		})
	}

	// A browser's address bar searches here through the document's
	// <link rel="search">: its template is BASE_URL's search page.
	resp, body := fetch("GET", "/opensearch.xml", nil)
	if tmpl := `template="https://search.example.org/search?q={searchTerms}"`; resp.StatusCode != 200 ||
		resp.Header.Get("Content-Type") != web.OpenSearchType || !strings.Contains(string(body), tmpl) {
		t.Errorf("GET /opensearch.xml: got %d %q %s, want 200, %s and %s", resp.StatusCode,
			resp.Header.Get("Content-Type"), body, web.OpenSearchType, tmpl)
	}

	assets := regexp.MustCompile(`"(/assets/[^"]+)"`).FindAllStringSubmatch(string(doc), -1)
	if len(assets) == 0 {
		t.Fatal("the document loads no asset")
	}
	for _, m := range assets {
		t.Run("asset "+m[1], func(t *testing.T) {
			resp, body := fetch("GET", m[1], map[string]string{"Accept-Encoding": "gzip"})
			if resp.StatusCode != 200 {
				t.Fatalf("status: got %d, want 200", resp.StatusCode)
			}
			if got, want := resp.Header.Get("Cache-Control"), "public, max-age=31536000, immutable"; got != want {
				t.Errorf("Cache-Control: got %q, want %q", got, want)
			}
			if strings.HasSuffix(m[1], ".js") || strings.HasSuffix(m[1], ".css") {
				if got := resp.Header.Get("Content-Encoding"); got != "gzip" {
					t.Fatalf("Content-Encoding: got %q, want gzip", got)
				}
				zr, err := gzip.NewReader(strings.NewReader(string(body)))
				if err != nil {
					t.Fatal(err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil || len(plain) <= len(body) {
					t.Errorf("gunzipped: %d bytes from %d, %v; want more than compressed", len(plain), len(body), err)
				}
			}
			etag := resp.Header.Get("ETag")
			again, _ := fetch("GET", m[1], map[string]string{"Accept-Encoding": "gzip", "If-None-Match": etag})
			if again.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match %s: got %d, want 304", etag, again.StatusCode)
			}
		})
	}

	// Not the app's: the API's JSON answers and headers, as before it.
	apiAnswers := []struct {
		method, path string
		status       int
		message      string
	}{
		{"GET", "/v1/nothing-here", 404, "not found"},
		{"GET", "/v1/", 404, "not found"},
		{"GET", "/v1/items/x/y", 404, "not found"},
		{"GET", "/nothing-here", 404, "not found"},
		{"GET", "/assets/app.js", 404, "not found"},
		{"GET", "/items/a/b", 404, "not found"},
		{"POST", "/search", 405, "method not allowed"},
		{"GET", "/v1/user/profile", 401, "no session cookie"},
	}
	for _, tt := range apiAnswers {
		t.Run("api "+tt.method+" "+tt.path, func(t *testing.T) {
			resp, body := fetch(tt.method, tt.path, nil)
			var e struct{ Error struct{ Message string } }
			if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != tt.status || e.Error.Message != tt.message {
				t.Fatalf("got %d %s, want %d %q", resp.StatusCode, body, tt.status, tt.message)
			}
			for k, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store",
				"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'"} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s: got %q, want %q", k, got, want)
				}
			}
		})
	}

	// A person who mistypes an address: the browser asks for HTML, and
	// gets the app's document with 404, whose script says there is no
	// page here; under /v1/ the API's JSON all the same.
	browser := map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
	for _, p := range []string{"/nothing-here", "/items/a/b", "/search/x"} {
		resp, body := fetch("GET", p, browser)
		if resp.StatusCode != 404 || string(body) != string(doc) || resp.Header.Get("Content-Security-Policy") != web.CSP ||
			resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("browser GET %s: got %d %q, %d bytes; want 404 and the document", p, resp.StatusCode, resp.Header, len(body))
		}
	}
	for _, p := range []string{"/v1/nothing-here", "/v1/"} {
		resp, body := fetch("GET", p, browser)
		var e struct{ Error struct{ Message string } }
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 404 || e.Error.Message != "not found" {
			t.Errorf("browser GET %s: got %d %s, want the API's JSON 404", p, resp.StatusCode, body)
		}
	}
}
