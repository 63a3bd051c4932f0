// Package dropboxtest is a fake Dropbox API for tests and benchmarks:
// files/list_folder (recursive), list_folder/continue and files/download,
// over a Dropbox of files held in memory, with Dropbox's cursors, its
// error answers and a bearer token check, and hooks to change files,
// reset cursors, expire the token, rate-limit and fail.
//
// It checks what Dropbox checks: POST, the bearer token, a JSON body with
// Content-Type application/json and no unknown field for the RPC
// endpoints, a Dropbox-API-Arg header of ASCII-only JSON and no body for
// downloads, paths that start with '/', cursors it issued.
package dropboxtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations/dropbox"
	"searchsvc/integrations/oauthclient"
)

// Options configure a fake Dropbox.
type Options struct {
	// Files are the files at first, by path ("/Docs/a.txt").
	Files map[string][]byte
	// Mux and URL, when set, are where the API is served (an
	// oauthtest.Server's); else New starts its own server.
	Mux *http.ServeMux
	URL string
	// Authorized checks a request's credentials; nil accepts exactly the
	// bearer token Server.AccessToken.
	Authorized func(*http.Request) bool
	// PageSize caps the entries of a page below the request's limit; 0
	// leaves the request's limit.
	PageSize int
	// RatePerMinute, when set, answers 429 with a Retry-After once more
	// than that many requests came within one minute of Now.
	RatePerMinute int
	// Now is the fake's clock for the rate limit; nil means time.Now.
	Now func() time.Time
}

// Server is a running fake Dropbox.
type Server struct {
	// URL is the API base address, for DROPBOX_API_BASE_URL; downloads
	// are served there too.
	URL string
	// AccessToken is the token accepted when Options.Authorized is nil.
	AccessToken string

	opts   Options
	client *http.Client
	secret string // in every cursor, so that only the fake's are valid

	mu       sync.Mutex
	files    map[string]*file // by lower-case path
	ids      map[string]string
	seq      int      // changes so far
	changes  []change // in order
	gen      int      // cursors of an older generation are reset
	nextID   int
	expired  bool
	failures []failure
	window   []time.Time // request times within the last minute
	counts   Counts
}

type file struct {
	id, display string
	data        []byte
	hash        string // content hash, computed once
	modified    time.Time
	rev         int
}

// change is a path that changed at seq.
type change struct {
	seq   int
	lower string
}

type failure struct {
	status     int
	retryAfter string
}

// Counts are the requests answered, failures included.
type Counts struct {
	Lists, Continues, Downloads int
}

// New starts a fake Dropbox, closed by tb.Cleanup when New started the
// server itself.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := &Server{opts: opts, AccessToken: rand.Text(), secret: rand.Text()[:8], files: map[string]*file{}, ids: map[string]string{}}
	for p, data := range opts.Files {
		s.put(p, data)
	}
	s.changes = nil // the first listing sees them; no change is pending
	mux := opts.Mux
	if mux == nil {
		mux = http.NewServeMux()
		srv := httptest.NewServer(mux)
		tb.Cleanup(srv.Close)
		s.URL, s.client = srv.URL, srv.Client()
	} else {
		s.URL, s.client = opts.URL, http.DefaultClient
	}
	mux.HandleFunc("/2/files/list_folder", s.listFolder)
	mux.HandleFunc("/2/files/list_folder/continue", s.listContinue)
	mux.HandleFunc("/2/files/download", s.download)
	return s
}

// Client returns a client for the server New started.
func (s *Server) Client() *http.Client { return s.client }

// Provider returns a Dropbox provider whose API is this server.
func (s *Server) Provider(tb testing.TB) *oauthclient.Provider {
	tb.Helper()
	vars := map[string]string{
		"DROPBOX_OAUTH_CLIENT_ID":     "dropboxtest-client",
		"DROPBOX_OAUTH_CLIENT_SECRET": "dropboxtest-secret",
		"DROPBOX_OAUTH_AUTH_URL":      s.URL + "/oauth2/authorize",
		"DROPBOX_OAUTH_TOKEN_URL":     s.URL + "/oauth2/token",
		"DROPBOX_OAUTH_REVOKE_URL":    s.URL + "/2/auth/token/revoke",
		"DROPBOX_API_BASE_URL":        s.URL,
	}
	p, err := oauthclient.NewProvider(dropbox.Definition(), func(k string) string { return vars[k] }, s.client)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Token returns AccessToken, as dropbox.NewClient wants it.
func (s *Server) Token(context.Context) (string, error) { return s.AccessToken, nil }

// Put creates or replaces the file at p.
func (s *Server) Put(p string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(p, data)
}

func (s *Server) put(p string, data []byte) {
	lower := strings.ToLower(p)
	f := s.files[lower]
	if f == nil {
		s.nextID++
		f = &file{id: fmt.Sprintf("id:fake%08dAAAAAAAAAA", s.nextID), display: p}
		s.files[lower] = f
		s.ids[f.id] = lower
	}
	f.data = slices.Clone(data)
	f.hash = dropbox.ContentHash(data)
	f.rev++
	f.modified = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s.seq) * time.Second)
	s.changed(lower)
}

// Delete removes the file at p.
func (s *Server) Delete(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lower := strings.ToLower(p)
	if f := s.files[lower]; f != nil {
		delete(s.ids, f.id)
		delete(s.files, lower)
		s.changed(lower)
	}
}

// Move moves the file or folder at from to to, as a rename does: each
// file keeps its id and content; the old paths read as deleted.
func (s *Server) Move(from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fromLower := strings.ToLower(from)
	var paths []string
	for lower := range s.files {
		if lower == fromLower || strings.HasPrefix(lower, fromLower+"/") {
			paths = append(paths, lower)
		}
	}
	slices.Sort(paths)
	for _, lower := range paths {
		f := s.files[lower]
		delete(s.files, lower)
		f.display = to + f.display[len(from):]
		newLower := strings.ToLower(f.display)
		s.files[newLower] = f
		s.ids[f.id] = newLower
		s.changed(lower)
		s.changed(newLower)
	}
}

func (s *Server) changed(lower string) {
	s.seq++
	s.changes = append(s.changes, change{s.seq, lower})
}

// ResetCursors makes every cursor issued so far answer 409 reset.
func (s *Server) ResetCursors() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
}

// ExpireToken makes the access token answer 401 expired_access_token.
func (s *Server) ExpireToken() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expired = true
}

// Fail makes the next n requests fail with status, and retryAfter as
// Retry-After if not empty.
func (s *Server) Fail(n, status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, failure{status, retryAfter})
	}
}

// Counts returns the requests answered so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

func (s *Server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}
