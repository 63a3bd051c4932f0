// Package web is the app a person opens in a browser: sign in, search,
// read, connect services, manage sessions and administer. It is one more
// client of the public /v1 API and knows nothing of the service's insides;
// what it owns is serving its own files.
//
// The files are embedded (air-gapped installs fetch nothing at run time)
// and prepared once at start: each asset is named by its content hash
// (app.3f2a9c1e.js), compressed with gzip, and the document that loads them
// is rewritten to those names. Hashed assets are cached for a year; the
// document is revalidated on every load, so a new binary's app is seen at
// the next reload.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"searchsvc/httpx"
)

//go:embed static
var static embed.FS

// CSP is the Content-Security-Policy of the document and its assets: only
// this origin's own files, no inline script or style, no framing, forms
// posting only here, and Trusted Types required, so that a string can never
// be written into the page as HTML (the app puts every piece of a user's
// data into the page as text). Images may also come from blob: addresses,
// which only the page's own script makes: the Account page shows the
// second factor's QR code (an SVG from the API) that way, as an image.
const CSP = "default-src 'self'; img-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; " +
	"form-action 'self'; require-trusted-types-for 'script'; trusted-types 'none'"

// Cache-Control values: assets are named by their content, so they never
// change under their name; the document must be revalidated.
const (
	cacheImmutable = "public, max-age=31536000, immutable"
	cacheDocument  = "no-cache"
)

// asset is one file as served: its body and its gzip form, both made once.
type asset struct {
	name  string // the name it is served under: hashed, except index.html
	ctype string
	body  []byte
	gz    []byte // nil when compressing does not make it smaller
	etag  string // the content hash, quoted
}

// App serves the web app. Its zero value is not usable; call New.
type App struct {
	index      *asset
	openSearch *asset            // GET /opensearch.xml
	assets     map[string]*asset // by served name
	size       int               // bytes of every embedded file before compression
}

// New prepares the embedded files: hashes, compresses and rewrites the
// document's references to the hashed names. baseURL is the service's
// public address (BASE_URL), which the search description served at
// /opensearch.xml points a browser's address bar to.
func New(baseURL string) (*App, error) {
	a := &App{assets: make(map[string]*asset)}
	rename := make(map[string]string) // "/assets/app.js" → "/assets/app.<hash>.js"
	var doc []byte
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		a.size += len(b)
		name := path.Base(p)
		if name == "index.html" {
			doc = b
			return nil
		}
		ext := path.Ext(name)
		ctype := contentType(ext)
		if ctype == "" {
			return fmt.Errorf("web: %s: no content type for %q", p, ext)
		}
		as := newAsset(strings.TrimSuffix(name, ext)+"."+shortHash(b)+ext, ctype, b)
		a.assets[as.name] = as
		rename["/assets/"+name] = "/assets/" + as.name
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: read embedded files: %w", err)
	}
	if doc == nil {
		return nil, fmt.Errorf("web: index.html is not embedded")
	}
	for from, to := range rename {
		doc = bytes.ReplaceAll(doc, []byte(`"`+from+`"`), []byte(`"`+to+`"`))
	}
	a.index = newAsset("index.html", "text/html; charset=utf-8", doc)
	a.openSearch = newAsset("opensearch.xml", OpenSearchType, openSearchDescription(baseURL))
	return a, nil
}

// OpenSearchType is the Content-Type of GET /opensearch.xml.
const OpenSearchType = "application/opensearchdescription+xml"

// openSearchDescription is what the document's <link rel="search"> names:
// it lets a browser add this service as a search engine of its address
// bar, whose words open the search page (/search?q=…) as typed there.
func openSearchDescription(baseURL string) []byte {
	var tmpl bytes.Buffer
	xml.EscapeText(&tmpl, []byte(strings.TrimSuffix(baseURL, "/")+"/search?q={searchTerms}")) // a bytes.Buffer does not fail
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">
<ShortName>searchsvc</ShortName>
<Description>Search your mail, messages, files and feeds</Description>
<InputEncoding>UTF-8</InputEncoding>
<Url type="text/html" method="get" template="` + tmpl.String() + `"/>
</OpenSearchDescription>
`)
}

// contentType is the type of a file the app ships, by its extension; ""
// for any other.
func contentType(ext string) string {
	switch ext {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	return ""
}

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

func newAsset(name, ctype string, body []byte) *asset {
	as := &asset{name: name, ctype: ctype, body: body, etag: `"` + shortHash(body) + `"`}
	if !strings.HasPrefix(ctype, "image/png") {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
		zw.Write(body)
		zw.Close()
		if buf.Len() < len(body) {
			as.gz = buf.Bytes()
		}
	}
	return as
}

// Size is the bytes of every embedded file before compression.
func (a *App) Size() int { return a.size }

// assetName returns the served name of an embedded asset ("app.js" →
// "app.3f2a9c1e4b7d.js"), or "" if there is none.
func (a *App) assetName(name string) string {
	ext := path.Ext(name)
	prefix := strings.TrimSuffix(name, ext) + "."
	for n := range a.assets {
		if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ext) && len(n) == len(prefix)+12+len(ext) {
			return n
		}
	}
	return ""
}

// ServeHTTP answers an asset under /assets/ by its hashed name,
// /opensearch.xml its search description, and every other path it is
// routed the document: the app's script reads the path
// and shows that page, so deep links and reloads work. An unknown asset is
// the API's JSON 404.
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if name, ok := strings.CutPrefix(r.URL.Path, "/assets/"); ok {
		as := a.assets[name]
		if as == nil {
			httpx.WriteError(w, r, "asset.read", httpx.NotFound("not found"))
			return
		}
		serve(w, r, as, cacheImmutable)
		return
	}
	if r.URL.Path == "/opensearch.xml" {
		serve(w, r, a.openSearch, cacheDocument)
		return
	}
	serve(w, r, a.index, cacheDocument)
}

// serve writes as, gzipped when the client takes it, with the headers of
// a page of the app (they replace the API's no-store and default-src
// 'none').
func serve(w http.ResponseWriter, r *http.Request, as *asset, cache string) {
	h := w.Header()
	h.Set("Cache-Control", cache)
	h.Set("Content-Security-Policy", CSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Content-Type", as.ctype)
	h.Set("Vary", "Accept-Encoding")
	body, etag := as.body, as.etag
	if as.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body, etag = as.gz, strings.TrimSuffix(as.etag, `"`)+`-gz"`
	}
	h.Set("ETag", etag)
	// No modification time: ServeContent then answers If-None-Match only.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip: listed
// (or "*") without q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			return false
		}
		return true
	}
	return false
}

// NotFound answers a path no route matches: a browser loading a page (a
// GET that accepts HTML, outside /v1/) gets the app's document with status
// 404, whose script shows its "no page here" page; anything else gets the
// API's JSON 404.
func (a *App) NotFound(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v1/") || !strings.Contains(r.Header.Get("Accept"), "text/html") {
		httpx.WriteError(w, r, "route.match", httpx.NotFound("not found"))
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", CSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Content-Type", a.index.ctype)
	h.Set("Vary", "Accept-Encoding")
	body := a.index.body
	if a.index.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = a.index.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}
