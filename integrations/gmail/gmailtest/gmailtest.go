// Package gmailtest is a fake Gmail API for tests and benchmarks: a mailbox
// of deterministic generated messages behind users.getProfile,
// messages.list, messages.get (format=raw) and history.list, with Gmail's
// paging, its history ids (a startHistoryId that is not a number is 400,
// one older than the history kept is 404), its error answers and a bearer
// token check, and hooks to inject failures.
//
// Messages are numbered by seq, 1 the oldest; the list gives them by date,
// newest first. Their content is generated on each request, so a mailbox
// costs a few words per message.
package gmailtest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/oauthclient"
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
	// Thread gives the thread id of message seq; nil gives ThreadID.
	Thread func(seq int) string
	// Fault, when set, is asked first about every API request: a status
	// other than 0 is answered with Gmail's error for it and retryAfter
	// as Retry-After, if not empty.
	Fault func(r *http.Request) (status int, retryAfter string)
	// Unpadded serves raw messages in base64url without '=' padding.
	// Gmail pads.
	Unpadded bool
	// NoProfile leaves users.getProfile to Mux, which serves it already;
	// it may call Server.ServeProfile.
	NoProfile bool
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

	mu       sync.Mutex
	total    int
	failures []failure
	counts   Counts
	// maxResults is the parameter of the last list request.
	maxResults string

	// The mailbox beyond the generated messages 1..total, each dated
	// Date(seq): other dates, deleted messages, and the list order.
	dates   map[int]time.Time
	deleted map[int]bool
	order   []int // live seqs by (date, seq), newest first; nil: to be rebuilt
	// history is the change log after the mailbox was made, oldest first;
	// historyID is the mailbox's current history id, and oldest the
	// smallest startHistoryId history.list accepts.
	history   []change
	historyID uint64
	oldest    uint64
}

// Counts are the requests the fake answered, failures included.
type Counts struct {
	Profiles, Lists, Gets, Histories int
}

// change is one history record: a message added or deleted.
type change struct {
	id      uint64
	seq     int
	deleted bool
}

type failure struct {
	status     int
	retryAfter string
}

// New starts a fake mailbox, closed by tb.Cleanup when New started the
// server itself.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := &Server{opts: opts, total: opts.Messages, AccessToken: rand.Text(),
		dates: make(map[int]time.Time), deleted: make(map[int]bool)}
	s.historyID = historyBase + uint64(opts.Messages)
	s.oldest = s.historyID
	mux := opts.Mux
	if mux == nil {
		mux = http.NewServeMux()
		srv := httptest.NewServer(mux)
		tb.Cleanup(srv.Close)
		s.URL, s.client = srv.URL, srv.Client()
	} else {
		s.URL, s.client = opts.URL, http.DefaultClient
	}
	if !opts.NoProfile {
		mux.HandleFunc("GET /gmail/v1/users/me/profile", s.ServeProfile)
	}
	mux.HandleFunc("GET /gmail/v1/users/me/messages", s.list)
	mux.HandleFunc("GET /gmail/v1/users/me/messages/{id}", s.get)
	mux.HandleFunc("GET /gmail/v1/users/me/history", s.historyList)
	return s
}

// Client returns a client for the server New started; with Options.Mux,
// http.DefaultClient.
func (s *Server) Client() *http.Client { return s.client }

// Provider returns a Gmail provider whose API is this server, for an
// instance built with Credentials (no refresh: it has no token endpoint
// unless Options.Mux gave one).
func (s *Server) Provider(tb testing.TB) *oauthclient.Provider {
	tb.Helper()
	vars := map[string]string{
		"GMAIL_OAUTH_CLIENT_ID":     "gmailtest-client",
		"GMAIL_OAUTH_CLIENT_SECRET": "gmailtest-secret",
		"GMAIL_OAUTH_AUTH_URL":      s.URL + "/authorize",
		"GMAIL_OAUTH_TOKEN_URL":     s.URL + "/token",
		"GMAIL_OAUTH_REVOKE_URL":    s.URL + "/revoke",
		"GMAIL_API_BASE_URL":        s.URL,
	}
	p, err := oauthclient.NewProvider(gmail.Definition(), func(k string) string { return vars[k] }, s.client)
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

// ThreadID is the thread of message seq: three messages a conversation,
// named after its first, as Gmail names a thread after its first message.
func ThreadID(seq int) string { return ID(seq - (seq-1)%3) }

func (s *Server) threadID(seq int) string {
	if s.opts.Thread != nil {
		return s.opts.Thread(seq)
	}
	return ThreadID(seq)
}

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
func Message(seq int) []byte { return MessageAt(seq, Date(seq)) }

// MessageAt is Message dated date.
func MessageAt(seq int, date time.Time) []byte {
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
`, seq, Subject(seq), date.Format(time.RFC1123Z), words[seq%len(words)])
	return []byte(strings.ReplaceAll(s, "\n", "\r\n"))
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
	return s.counts.Lists, s.counts.Gets
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

// pageSize reads maxResults: default def, at most 500; 0 for a bad one.
func pageSize(r *http.Request, def int) int {
	v := r.URL.Query().Get("maxResults")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0
	}
	return min(n, 500)
}

type ref struct {
	ID       string   `json:"id"`
	ThreadID string   `json:"threadId"`
	LabelIDs []string `json:"labelIds,omitempty"`
}

// list serves users.messages.list. Its page token is the seq of the
// message the page starts at, which is where that message's date puts it.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.counts.Lists++
	s.maxResults = r.URL.Query().Get("maxResults")
	s.mu.Unlock()
	if s.check(w, r) {
		return
	}
	size := pageSize(r, 100)
	if size == 0 {
		writeError(w, http.StatusBadRequest, "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	order := s.listOrder()
	at := 0
	if tok := r.URL.Query().Get("pageToken"); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 1 || n > s.total {
			writeError(w, http.StatusBadRequest, "")
			return
		}
		// The first live message at or after the token's in list order.
		at, _ = slices.BinarySearchFunc(order, n, s.newer)
	}
	page := struct {
		Messages      []ref  `json:"messages,omitempty"`
		NextPageToken string `json:"nextPageToken,omitempty"`
		Estimate      int    `json:"resultSizeEstimate"`
	}{Estimate: len(order)}
	end := min(at+size, len(order))
	for _, seq := range order[at:end] {
		page.Messages = append(page.Messages, ref{ID: ID(seq), ThreadID: s.threadID(seq)})
	}
	if end < len(order) {
		page.NextPageToken = strconv.Itoa(order[end])
	}
	writeJSON(w, http.StatusOK, page)
}

// get serves users.messages.get with format=raw.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.counts.Gets++
	s.mu.Unlock()
	if s.check(w, r) {
		return
	}
	if r.URL.Query().Get("format") != "raw" {
		writeError(w, http.StatusBadRequest, "") // the only format the fake serves
		return
	}
	seq := seqOf(r.PathValue("id"))
	s.mu.Lock()
	gone := seq < 1 || seq > s.total || s.deleted[seq]
	date := s.date(seq)
	s.mu.Unlock()
	if gone {
		writeError(w, http.StatusNotFound, "")
		return
	}
	var raw []byte
	if s.opts.Message != nil {
		raw = s.opts.Message(seq)
	} else {
		raw = MessageAt(seq, date)
	}
	enc := base64.URLEncoding
	if s.opts.Unpadded {
		enc = base64.RawURLEncoding
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":           ID(seq),
		"threadId":     s.threadID(seq),
		"labelIds":     []string{"INBOX", "CATEGORY_PERSONAL"},
		"snippet":      "Hello, this is a message",
		"sizeEstimate": len(raw),
		"historyId":    strconv.Itoa(historyBase + seq),
		"internalDate": strconv.FormatInt(date.UnixMilli(), 10),
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
