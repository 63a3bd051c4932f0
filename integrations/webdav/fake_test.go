package webdav_test

import (
	"encoding/pem"
	"encoding/xml"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer/syncfx"
	"searchsvc/integrations/webdav"
)

// davFile is a file of the fake server.
type davFile struct {
	body  string
	etag  string // "" lists none
	mtime time.Time
}

// fakeDAV is a WebDAV server over TLS (httptest) serving files under
// /dav/me/, with basic authentication, counting the requests by method.
// hook, when set, may answer a request itself (an error case).
type fakeDAV struct {
	mu       sync.Mutex
	srv      *httptest.Server
	files    map[string]davFile // path under /dav/me/
	seq      int
	requests map[string]int
	hook     func(w http.ResponseWriter, r *http.Request) bool
}

const davRoot = "/dav/me/"

func newFakeDAV(t testing.TB) *fakeDAV {
	f := &fakeDAV{files: map[string]davFile{}, requests: map[string]int{}}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the tests' own
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

// put stores a file; its ETag changes with its body.
func (f *fakeDAV) put(p, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	f.files[p] = davFile{body: body, etag: fmt.Sprintf(`"%d-%x"`, f.seq, len(body)), mtime: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
}

// move renames a file, keeping its ETag as servers do.
func (f *fakeDAV) move(from, to string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[to] = f.files[from]
	delete(f.files, from)
}

func (f *fakeDAV) remove(p string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.files, p)
}

// counts returns the requests by method since the last call.
func (f *fakeDAV) counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.requests
	f.requests = map[string]int{}
	return c
}

func (f *fakeDAV) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests[r.Method]++
	hook := f.hook
	f.mu.Unlock()
	if hook != nil && hook(w, r) {
		return
	}
	if u, p, ok := r.BasicAuth(); !ok || u != "me" || p != "app-password" {
		w.Header().Set("WWW-Authenticate", `Basic realm="dav"`)
		http.Error(w, "no", http.StatusUnauthorized)
		return
	}
	rel, ok := strings.CutPrefix(r.URL.Path, davRoot)
	if !ok && r.URL.Path+"/" != davRoot {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case "PROPFIND":
		f.propfind(w, r, rel)
	case http.MethodGet:
		file, ok := f.files[rel]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", file.etag)
		fmt.Fprint(w, file.body)
	default:
		http.Error(w, "read-only", http.StatusMethodNotAllowed)
	}
}

// propfind answers Depth 0 or 1 for the collection rel ("" or "a/b/").
func (f *fakeDAV) propfind(w http.ResponseWriter, r *http.Request, rel string) {
	file, isFile := f.files[rel]
	if !isFile && rel != "" && !f.hasDir(rel) {
		http.NotFound(w, r)
		return
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><d:multistatus xmlns:d="DAV:">`)
	resp := func(p string, dir bool, file davFile) {
		b.WriteString("<d:response><d:href>")
		_ = xml.EscapeText(&b, []byte((&url.URL{Path: davRoot + p}).EscapedPath()))
		b.WriteString("</d:href><d:propstat><d:prop>")
		if dir {
			b.WriteString("<d:resourcetype><d:collection/></d:resourcetype>")
		} else {
			b.WriteString("<d:resourcetype/>")
			if file.etag != "" {
				b.WriteString("<d:getetag>" + strings.ReplaceAll(file.etag, `"`, "&quot;") + "</d:getetag>")
			}
			fmt.Fprintf(&b, "<d:getcontentlength>%d</d:getcontentlength><d:getlastmodified>%s</d:getlastmodified>",
				len(file.body), file.mtime.Format(http.TimeFormat))
		}
		b.WriteString("</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>")
	}
	if isFile {
		resp(rel, false, file)
	} else {
		resp(rel, true, davFile{})
	}
	if !isFile && r.Header.Get("Depth") == "1" {
		seen := map[string]bool{}
		var names []string
		for p := range f.files {
			if !strings.HasPrefix(p, rel) {
				continue
			}
			name, _, sub := strings.Cut(strings.TrimPrefix(p, rel), "/")
			if sub {
				name += "/"
			}
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			if strings.HasSuffix(n, "/") {
				resp(rel+n, true, davFile{})
			} else {
				resp(rel+n, false, f.files[rel+n])
			}
		}
	}
	b.WriteString("</d:multistatus>")
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	fmt.Fprint(w, b.String())
}

// hasDir reports whether the collection rel ("a/b/") holds a file.
func (f *fakeDAV) hasDir(rel string) bool {
	for p := range f.files {
		if strings.HasPrefix(p, rel) && strings.HasSuffix(rel, "/") {
			return true
		}
	}
	return false
}

// certPEM is the server's certificate in PEM, as a user pastes it.
func (f *fakeDAV) certPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw}))
}

// fields is the form for the fake server's folder.
func (f *fakeDAV) fields() map[string]string {
	return map[string]string{webdav.FieldURL: f.srv.URL + davRoot, webdav.FieldUsername: "me",
		webdav.FieldPassword: "app-password", webdav.FieldCertificate: f.certPEM()}
}

// rig is a connected fake folder synced by the real Syncer into a real
// store.
type rig struct {
	t   testing.TB
	dav *fakeDAV
	fx  *syncfx.Fixture
	rec records.Record
}

func newRig(t testing.TB, cfg webdav.Config) *rig {
	t.Helper()
	dav := newFakeDAV(t)
	fx := syncfx.New(t, syncfx.Options{Definition: webdav.Definition(cfg), Client: &http.Client{}})
	rec := fx.Connect("u1", integrations.Credentials{Fields: dav.fields()})
	return &rig{t: t, dav: dav, fx: fx, rec: rec}
}

// sync syncs and returns the requests it made, by method.
func (r *rig) sync() map[string]int {
	r.t.Helper()
	r.dav.counts()
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	return r.dav.counts()
}

// byPath returns the record's live items by their path.
func (r *rig) byPath() map[string]syncfx.Item {
	r.t.Helper()
	out := map[string]syncfx.Item{}
	for _, it := range r.fx.Items(r.rec) {
		out[it.Path] = it
	}
	return out
}
