package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func newApp(t *testing.T) *App {
	t.Helper()
	a, err := New("http://localhost:8080")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// maxSize is the budget for every file of the app before compression.
const maxSize = 150 << 10

func TestSizeBudget(t *testing.T) {
	a := newApp(t)
	if a.Size() > maxSize {
		t.Errorf("the app is %d bytes before compression, over the budget of %d", a.Size(), maxSize)
	}
	var gz int
	for _, as := range a.assets {
		gz += len(as.gz)
	}
	t.Logf("app: %d bytes, assets gzipped %d bytes", a.Size(), gz)
}

// TestDocumentNamesHashedAssets: the document refers to each asset by its
// hashed name, and to no name that is not served.
func TestDocumentNamesHashedAssets(t *testing.T) {
	a := newApp(t)
	doc := string(a.index.body)
	refs := regexp.MustCompile(`"/assets/([^"]+)"`).FindAllStringSubmatch(doc, -1)
	if len(refs) < 3 {
		t.Fatalf("the document refers to %d assets, want the scripts, the style and the icon", len(refs))
	}
	seen := map[string]bool{}
	for _, m := range refs {
		name := m[1]
		if a.assets[name] == nil {
			t.Errorf("the document refers to /assets/%s, which is not served", name)
		}
		if !regexp.MustCompile(`^[a-z]+\.[0-9a-f]{12}\.(js|css|svg)$`).MatchString(name) {
			t.Errorf("/assets/%s is not named by its content hash", name)
		}
		seen[name] = true
	}
	for name := range a.assets {
		if !seen[name] {
			t.Errorf("asset %s is embedded but the document never loads it", name)
		}
	}
	if got := a.assetName("app.js"); got == "" || !seen[got] {
		t.Errorf("assetName(app.js): got %q, want the hashed name the document loads", got)
	}
}

func get(t *testing.T, a *App, method, target string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	return rec.Result()
}

func TestServe(t *testing.T) {
	a := newApp(t)
	js := "/assets/" + a.assetName("app.js")
	jsBody, _ := fs.ReadFile(static, "static/app.js")
	doc := a.index.body
	tests := []struct {
		name, method, target string
		header               map[string]string
		status               int
		cache, encoding      string
		body                 []byte // after decompression; nil: not checked
		ctype                string
	}{
		{"document", "GET", "/", nil, 200, cacheDocument, "", doc, "text/html; charset=utf-8"},
		{"document gzipped", "GET", "/search?q=x", map[string]string{"Accept-Encoding": "gzip, deflate, br"}, 200, cacheDocument, "gzip", doc, "text/html; charset=utf-8"},
		{"deep link", "GET", "/items/abc", nil, 200, cacheDocument, "", doc, "text/html; charset=utf-8"},
		{"asset", "GET", js, nil, 200, cacheImmutable, "", jsBody, "text/javascript; charset=utf-8"},
		{"asset gzipped", "GET", js, map[string]string{"Accept-Encoding": "gzip"}, 200, cacheImmutable, "gzip", jsBody, "text/javascript; charset=utf-8"},
		{"gzip refused", "GET", js, map[string]string{"Accept-Encoding": "gzip;q=0, identity"}, 200, cacheImmutable, "", jsBody, "text/javascript; charset=utf-8"},
		{"head", "HEAD", js, nil, 200, cacheImmutable, "", []byte{}, "text/javascript; charset=utf-8"},
		{"revalidated", "GET", js, map[string]string{"If-None-Match": a.assets[a.assetName("app.js")].etag}, 304, cacheImmutable, "", []byte{}, ""},
		{"revalidated gzipped", "GET", "/", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": strings.TrimSuffix(a.index.etag, `"`) + `-gz"`}, 304, cacheDocument, "", []byte{}, ""},
		{"unhashed name", "GET", "/assets/app.js", nil, 404, "", "", nil, "application/json"},
		{"unknown asset", "GET", "/assets/nothing.0123456789ab.js", nil, 404, "", "", nil, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := get(t, a, tt.method, tt.target, tt.header)
			if resp.StatusCode != tt.status {
				t.Fatalf("status: got %d, want %d", resp.StatusCode, tt.status)
			}
			if got := resp.Header.Get("Content-Type"); got != tt.ctype {
				t.Errorf("Content-Type: got %q, want %q", got, tt.ctype)
			}
			raw, _ := io.ReadAll(resp.Body)
			if tt.status == 404 {
				var e struct {
					Error struct{ Code, Message string }
				}
				if err := json.Unmarshal(raw, &e); err != nil || e.Error.Message != "not found" {
					t.Errorf("body: got %s, want the API's JSON 404", raw)
				}
				if got := resp.Header.Get("Content-Security-Policy"); got == CSP {
					t.Errorf("a 404 carries the page CSP")
				}
				return
			}
			for k, want := range map[string]string{"Cache-Control": tt.cache, "Content-Encoding": tt.encoding,
				"Content-Security-Policy": CSP, "Vary": "Accept-Encoding", "Referrer-Policy": "no-referrer"} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s: got %q, want %q", k, got, want)
				}
			}
			if resp.Header.Get("ETag") == "" {
				t.Error("no ETag")
			}
			if tt.encoding == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatalf("gzip: %v", err)
				}
				if raw, err = io.ReadAll(zr); err != nil {
					t.Fatalf("gunzip: %v", err)
				}
			}
			if tt.body != nil && !bytes.Equal(raw, tt.body) {
				t.Errorf("body: got %d bytes, want %d", len(raw), len(tt.body))
			}
		})
	}
}

// TestCSP: the policy forbids inline code, other origins, framing and
// posting elsewhere, and requires Trusted Types.
func TestCSP(t *testing.T) {
	for _, want := range []string{"default-src 'self'", "img-src 'self' blob:", "object-src 'none'", "base-uri 'none'",
		"frame-ancestors 'none'", "form-action 'self'", "require-trusted-types-for 'script'", "trusted-types 'none'"} {
		if !strings.Contains(CSP, want) {
			t.Errorf("CSP %q lacks %q", CSP, want)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*", "data:"} {
		if strings.Contains(CSP, bad) {
			t.Errorf("CSP %q allows %q", CSP, bad)
		}
	}
}

// textOutsideDOM is why a file other than dom.js may not set text itself.
const textOutsideDOM = "sets text without dom.js's append"

// TestSourcesKeepToText reads the app's files for what the CSP would
// refuse anyway and what would put a user's data into the page as HTML.
func TestSourcesKeepToText(t *testing.T) {
	forbidden := []struct{ ext, re, why string }{
		{".js", `innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment`, "writes HTML"},
		{".js", `\beval\(|new Function|setTimeout\(['"]|setInterval\(['"]`, "runs a string as code"},
		{".js", `\.style\.|setAttribute\(['"]style`, "sets an inline style (refused by the CSP)"},
		{".js", `https?://(?:[a-ln-z0-9]|m[^a])`, "names another origin (only the Gmail link to the original is allowed)"},
		{".html", `<script>|<script [^>]*>[^<]|<style|\sstyle=|\son[a-z]+=`, "has inline script or style"},
		{".html", `https?://`, "loads from another origin"},
		{".css", `url\(|@import|https?://`, "loads from elsewhere"},
		// Text goes into the page through h() and append() in dom.js
		// alone, which isolate it and drop its directional controls
		// (docs/security.md, "The web app").
		{".js", `\.textContent\s*=[^=]|\.innerText\s*=[^=]|\.nodeValue\s*=[^=]|createTextNode|\.data\s*=[^=]`, textOutsideDOM},
	}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(static, p)
		for _, f := range forbidden {
			if strings.HasSuffix(p, f.ext) && !(f.why == textOutsideDOM && p == "static/dom.js") {
				if m := regexp.MustCompile(f.re).Find(b); m != nil {
					t.Errorf("%s %s: %q", p, f.why, m)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip;q=1.0, br", true},
		{"br;q=1, gzip;q=0.5", true},
		{"*", true},
		{"gzip;q=0", false},
		{"gzip; q=0.000", false},
		{"deflate, br", false},
		{"identity", false},
		{"x-gzip", false},
	}
	for _, tt := range tests {
		if got := acceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q): got %v, want %v", tt.header, got, tt.want)
		}
	}
}

// FuzzAcceptsGzip: any header is read without panicking, and gzip is only
// chosen when the header names it or "*".
func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"", "gzip", "gzip;q=0", "*;q=0.5", "br, gzip ; q=0 ,*", ";;,,", "gzip;q="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got := acceptsGzip(header)
		l := strings.ToLower(header)
		if got && !strings.Contains(l, "gzip") && !strings.Contains(l, "*") {
			t.Errorf("acceptsGzip(%q) = true without gzip or *", header)
		}
	})
}

// TestOpenSearch: GET /opensearch.xml describes the search page at the
// configured BASE_URL, escaped as XML, for a browser's address bar.
func TestOpenSearch(t *testing.T) {
	a, err := New("https://search.example.org/me&you/")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest("GET", "/opensearch.xml", nil))
	want := `<?xml version="1.0" encoding="UTF-8"?>
<OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">
<ShortName>searchsvc</ShortName>
<Description>Search your mail, messages, files and feeds</Description>
<InputEncoding>UTF-8</InputEncoding>
<Url type="text/html" method="get" template="https://search.example.org/me&amp;you/search?q={searchTerms}"/>
</OpenSearchDescription>
`
	if rec.Code != 200 || rec.Body.String() != want {
		t.Fatalf("got %d %q, want 200 %q", rec.Code, rec.Body.String(), want)
	}
	if got := rec.Header().Get("Content-Type"); got != "application/opensearchdescription+xml" {
		t.Errorf("Content-Type: got %q, want application/opensearchdescription+xml", got)
	}
	doc := newApp(t).index.body
	if link := `<link rel="search" type="application/opensearchdescription+xml" title="searchsvc" href="/opensearch.xml">`; !bytes.Contains(doc, []byte(link)) {
		t.Errorf("the document has no %s", link)
	}
}
