// Package gmailtest is a fake Gmail API for tests and benchmarks: a mailbox
// of deterministic generated messages behind messages.list and
// messages.get (format=raw), with Gmail's paging, its error answers and a
// bearer token check, and hooks to inject failures.
//
// Messages are numbered by seq, 1 the oldest; the list gives them newest
// first. They are generated on each request, so a mailbox of any size
// costs no memory.
package gmailtest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/gmail"
)

// Options configure a fake mailbox.
type Options struct {
	// Messages is how many messages the mailbox holds at first.
	Messages int
	// Mux and URL, when set, are where the API is served: an
	// oauthtest.Server's, so that one server plays Google. Else New starts
	// its own server.
	Mux *http.ServeMux
	URL string
	// Authorized checks a request's credentials (oauthtest.Server.Bearer);
	// nil accepts exactly the bearer token Server.AccessToken.
	Authorized func(*http.Request) bool
	// Message gives the raw RFC 5322 message seq; nil gives Message.
	Message func(seq int) []byte
	// Fault, when set, is asked first about every API request: a status
	// other than 0 is answered with Gmail's error for it and retryAfter
	// as Retry-After, if not empty.
	Fault func(r *http.Request) (status int, retryAfter string)
	// Unpadded serves raw messages in base64url without '=' padding.
	// Gmail pads.
	Unpadded bool
}

// Server is a running fake Gmail API.
type Server struct {
	// URL is the API base address, for GMAIL_API_BASE_URL.
	URL string
	// AccessToken is the token accepted when Options.Authorized is nil.
	// It is read by the handlers: do not change it.
	AccessToken string

	opts   Options
	client *http.Client

	mu         sync.Mutex
	total      int
	failures   []failure
	lists      int
	gets       int
	maxResults string // of the last list request
}

type failure struct {
	status     int
	retryAfter string
}

// New starts a fake mailbox, closed by tb.Cleanup when New started the
// server itself.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := &Server{opts: opts, total: opts.Messages, AccessToken: rand.Text()}
	mux := opts.Mux
	if mux == nil {
		mux = http.NewServeMux()
		srv := httptest.NewServer(mux)
		tb.Cleanup(srv.Close)
		s.URL, s.client = srv.URL, srv.Client()
	} else {
		s.URL, s.client = opts.URL, http.DefaultClient
	}
	mux.HandleFunc("GET /gmail/v1/users/me/messages", s.list)
	mux.HandleFunc("GET /gmail/v1/users/me/messages/{id}", s.get)
	return s
}

// Client returns a client for the server New started; with Options.Mux,
// http.DefaultClient.
func (s *Server) Client() *http.Client { return s.client }

// Provider returns a Gmail provider whose API is this server, for an
// instance built with Credentials (no refresh: it has no token endpoint
// unless Options.Mux gave one).
func (s *Server) Provider(tb testing.TB) *integrations.Provider {
	tb.Helper()
	vars := map[string]string{
		"GMAIL_OAUTH_CLIENT_ID":     "gmailtest-client",
		"GMAIL_OAUTH_CLIENT_SECRET": "gmailtest-secret",
		"GMAIL_OAUTH_AUTH_URL":      s.URL + "/authorize",
		"GMAIL_OAUTH_TOKEN_URL":     s.URL + "/token",
		"GMAIL_OAUTH_REVOKE_URL":    s.URL + "/revoke",
		"GMAIL_API_BASE_URL":        s.URL,
	}
	p, err := integrations.NewProvider(gmail.Definition(), func(k string) string { return vars[k] }, s.client)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Credentials returns credentials that Options.Authorized nil accepts,
// without expiry.
func (s *Server) Credentials() integrations.Credentials {
	return integrations.Credentials{AccessToken: s.AccessToken, TokenType: "Bearer", Scope: gmail.Scope}
}

// idBase makes ids look like Gmail's: 16 hex digits, growing with time.
const idBase = 0x18f0000000000000

// ID returns the Gmail id of message seq.
func ID(seq int) string { return fmt.Sprintf("%016x", idBase+uint64(seq)) }

// seqOf returns the seq of a Gmail id, or 0.
func seqOf(id string) int {
	if len(id) != 16 {
		return 0
	}
	n, err := strconv.ParseUint(id, 16, 64)
	if err != nil || n <= idBase || n-idBase > 1<<40 {
		return 0
	}
	return int(n - idBase)
}

// epoch is when message 0 would have arrived; message seq arrives seq
// minutes later.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Date returns the date of message seq.
func Date(seq int) time.Time { return epoch.Add(time.Duration(seq) * time.Minute) }

// Subject returns the subject of the generated message seq.
func Subject(seq int) string { return fmt.Sprintf("Message %d: %s", seq, words[seq%len(words)]) }

var words = []string{"quarterly report", "lunch on Thursday", "Re: invoice", "café menu", "deployment notes", "photos"}

// Message returns the generated message seq: multipart/alternative with
// a plain and an HTML part, about 1 KB, CRLF line endings.
func Message(seq int) []byte {
	s := fmt.Sprintf(`From: Sender %[1]d <sender%[1]d@example.org>
To: Me <me@example.com>
Subject: %[2]s
Date: %[3]s
Message-ID: <%[1]d@example.org>
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="b%[1]d"

--b%[1]d
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

Hello,

this is message %[1]d about %[4]s. Caf=C3=A9 at noon?

Regards
--b%[1]d
Content-Type: text/html; charset=utf-8

<html><body><p>Hello,</p><p>this is message %[1]d about <b>%[4]s</b>.</p></body></html>
--b%[1]d--
`, seq, Subject(seq), Date(seq).Format(time.RFC1123Z), words[seq%len(words)])
	return []byte(strings.ReplaceAll(s, "\n", "\r\n"))
}

// Add delivers n new messages, newer than all others.
func (s *Server) Add(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += n
}

// Total returns how many messages the mailbox holds.
func (s *Server) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Fail makes the next n API requests fail with status, and retryAfter as
// Retry-After if not empty.
func (s *Server) Fail(n, status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, failure{status, retryAfter})
	}
}

// Requests returns how many list and get requests were answered,
// failures included.
func (s *Server) Requests() (lists, gets int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists, s.gets
}

// MaxResults returns the maxResults parameter of the last list request.
func (s *Server) MaxResults() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxResults
}

// check answers a request that is refused or has a fault to inject, and
// reports whether it did.
func (s *Server) check(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Fault != nil {
		if status, retryAfter := s.opts.Fault(r); status != 0 {
			writeError(w, status, retryAfter)
			return true
		}
	}
	s.mu.Lock()
	var f failure
	if len(s.failures) > 0 {
		f, s.failures = s.failures[0], s.failures[1:]
	}
	s.mu.Unlock()
	if f.status != 0 {
		writeError(w, f.status, f.retryAfter)
		return true
	}
	ok := r.Header.Get("Authorization") == "Bearer "+s.AccessToken
	if s.opts.Authorized != nil {
		ok = s.opts.Authorized(r)
	}
	if !ok {
		writeError(w, http.StatusUnauthorized, "")
		return true
	}
	return false
}

// list serves users.messages.list.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.lists++
	s.maxResults = r.URL.Query().Get("maxResults")
	total := s.total
	s.mu.Unlock()
	if s.check(w, r) {
		return
	}
	q := r.URL.Query()
	size := 100
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "")
			return
		}
		size = min(n, 500)
	}
	from := total // the newest seq on this page
	if tok := q.Get("pageToken"); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 1 || n > total {
			writeError(w, http.StatusBadRequest, "")
			return
		}
		from = n
	}
	type ref struct {
		ID       string `json:"id"`
		ThreadID string `json:"threadId"`
	}
	page := struct {
		Messages      []ref  `json:"messages,omitempty"`
		NextPageToken string `json:"nextPageToken,omitempty"`
		Estimate      int    `json:"resultSizeEstimate"`
	}{Estimate: total}
	seq := from
	for ; seq >= 1 && len(page.Messages) < size; seq-- {
		page.Messages = append(page.Messages, ref{ID(seq), ID(seq)})
	}
	if seq >= 1 {
		page.NextPageToken = strconv.Itoa(seq)
	}
	writeJSON(w, http.StatusOK, page)
}

// get serves users.messages.get with format=raw.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.gets++
	total := s.total
	s.mu.Unlock()
	if s.check(w, r) {
		return
	}
	if r.URL.Query().Get("format") != "raw" {
		writeError(w, http.StatusBadRequest, "") // the only format the fake serves
		return
	}
	seq := seqOf(r.PathValue("id"))
	if seq < 1 || seq > total {
		writeError(w, http.StatusNotFound, "")
		return
	}
	msg := Message
	if s.opts.Message != nil {
		msg = s.opts.Message
	}
	raw := msg(seq)
	enc := base64.URLEncoding
	if s.opts.Unpadded {
		enc = base64.RawURLEncoding
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":           ID(seq),
		"threadId":     ID(seq),
		"labelIds":     []string{"INBOX", "CATEGORY_PERSONAL"},
		"snippet":      "Hello, this is a message",
		"sizeEstimate": len(raw),
		"historyId":    strconv.Itoa(1000 + seq),
		"internalDate": strconv.FormatInt(Date(seq).UnixMilli(), 10),
		"raw":          enc.EncodeToString(raw),
	})
}

// googleErrors are Gmail's answers for the statuses the fake gives.
var googleErrors = map[int][3]string{ // status: reason, status name, message
	http.StatusBadRequest:          {"invalidArgument", "INVALID_ARGUMENT", "Invalid argument"},
	http.StatusUnauthorized:        {"authError", "UNAUTHENTICATED", "Request had invalid authentication credentials."},
	http.StatusForbidden:           {"insufficientPermissions", "PERMISSION_DENIED", "Request had insufficient authentication scopes."},
	http.StatusNotFound:            {"notFound", "NOT_FOUND", "Requested entity was not found."},
	http.StatusTooManyRequests:     {"rateLimitExceeded", "RESOURCE_EXHAUSTED", "User-rate limit exceeded."},
	http.StatusInternalServerError: {"backendError", "INTERNAL", "Backend Error"},
	http.StatusServiceUnavailable:  {"backendError", "UNAVAILABLE", "The service is currently unavailable."},
}

// writeError answers in Google's error shape.
func writeError(w http.ResponseWriter, status int, retryAfter string) {
	e, ok := googleErrors[status]
	if !ok {
		e = [3]string{"unknown", "UNKNOWN", http.StatusText(status)}
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"code":    status,
		"message": e[2],
		"errors":  []map[string]string{{"message": e[2], "domain": "global", "reason": e[0]}},
		"status":  e[1],
	}})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
