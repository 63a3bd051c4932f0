// Package fakemail is a Gmail-like mail provider for the sync and handler
// tests: Server serves mailboxes over HTTP and its definitions sync them
// with the email providers' tasks (start, getEmailList, downloadEmail), as
// Gmail does.
package fakemail

import (
	"context"
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

	"golang.org/x/oauth2"

	"searchsvc/integrations"
	"searchsvc/integrations/mail"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/oauthtest"
)

// This file is a Gmail-like provider for the sync tests and benchmarks:
// Server serves mailboxes over HTTP (a paged message list and one
// message per request, behind a bearer token), and fakeClient is an
// Integration that syncs them with the email providers' tasks: start →
// getEmailList (paged) → downloadEmail.

// Msg is one message of a fake mailbox.
type Msg struct {
	ID      string
	Subject string
	From    string
	To      []string
	Date    time.Time
	Body    string
	// Header is more header lines of the raw message, each ending in
	// CRLF (a Message-ID, In-Reply-To and References, for conversations).
	Header string
}

// Fail is a scripted failure: the next request of kind ("list", "get"
// or "" for any) is answered with status and Retry-After.
type Fail struct {
	Kind       string
	Status     int
	RetryAfter string
}

// Server serves fake mailboxes; tests read and change its fields under Mu.
type Server struct {
	URL      string // API base, without a trailing slash
	oauth    *oauthtest.Server
	PageSize int

	Mu        sync.Mutex
	Boxes     map[string][]Msg // newest first
	downloads map[string]int   // by box/id
	lists     []string         // box:pageToken of each list request served
	requests  int
	fails     []Fail
	Reject    map[string]bool // access tokens refused although live
	// Deleted lists, per box, the message ids the next start reports
	// deleted at the provider (TaskResult.Removed); the start takes them.
	Deleted   map[string][]string
	OnList    func(box, pageToken string)
	OnGet     func(r *http.Request)
	active    map[string]int // per box: tasks and initializations running now
	MaxActive map[string]int
	local     http.Handler // NewLocal's routes
}

// New serves the API on the fake OAuth provider srv, or on its own
// server with static tokens ("static-<box>") when srv is nil.
func New(tb testing.TB, srv *oauthtest.Server) *Server {
	m := &Server{
		oauth: srv, PageSize: 10,
		Boxes: make(map[string][]Msg), downloads: make(map[string]int),
		Reject: make(map[string]bool), Deleted: make(map[string][]string), active: make(map[string]int), MaxActive: make(map[string]int),
	}
	if srv != nil {
		srv.Mux.HandleFunc("GET /api/{box}/messages", m.list)
		srv.Mux.HandleFunc("GET /api/{box}/messages/{id}", m.get)
		m.URL = srv.URL + "/api"
		return m
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/{box}/messages", m.list)
	mux.HandleFunc("GET /api/{box}/messages/{id}", m.get)
	hs := httptest.NewServer(mux)
	tb.Cleanup(hs.Close)
	m.URL = hs.URL + "/api"
	return m
}

// NewLocal is a Server with static tokens that listens nowhere: Client
// reaches it in-process. It is for tests inside a testing/synctest
// bubble, where a listening socket would keep the fake clock from moving.
func NewLocal() *Server {
	m := &Server{
		PageSize: 10,
		Boxes:    make(map[string][]Msg), downloads: make(map[string]int),
		Reject: make(map[string]bool), Deleted: make(map[string][]string), active: make(map[string]int), MaxActive: make(map[string]int),
		URL: "http://fakemail.invalid/api",
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/{box}/messages", m.list)
	mux.HandleFunc("GET /api/{box}/messages/{id}", m.get)
	m.local = mux
	return m
}

// Client returns an HTTP client that serves a NewLocal Server's requests
// in-process: no socket, no goroutine of its own. A request whose context
// ends while its handler waits gets the context's error, as over a network.
func (m *Server) Client() *http.Client {
	return &http.Client{Transport: localTransport{m.local}}
}

type localTransport struct{ h http.Handler }

func (t localTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// fill adds n messages to box, dated one minute apart.
func (m *Server) Fill(box string, n int, start time.Time) {
	m.Mu.Lock()
	defer m.Mu.Unlock()
	have := len(m.Boxes[box])
	for i := range n {
		k := have + i
		msg := Msg{
			ID:      fmt.Sprintf("%s-msg-%05d", box, k),
			Subject: fmt.Sprintf("Subject %s number %d", box, k),
			From:    fmt.Sprintf("sender%d@private.example", k),
			To:      []string{box + "@private.example"},
			Date:    start.Add(time.Duration(k) * time.Minute),
			Body:    fmt.Sprintf("Confidential body %d of %s. ", k, box) + strings.Repeat("lorem ipsum dolor sit amet ", 40),
		}
		// Newest first, as Gmail lists.
		m.Boxes[box] = slices.Insert(m.Boxes[box], 0, msg)
	}
}

func (m *Server) FailNext(f ...Fail) {
	m.Mu.Lock()
	m.fails = append(m.fails, f...)
	m.Mu.Unlock()
}

// counts returns the requests served, downloads in all, and the most
// downloads of one message.
func (m *Server) Counts() (requests, downloads, most int) {
	m.Mu.Lock()
	defer m.Mu.Unlock()
	for _, n := range m.downloads {
		downloads += n
		most = max(most, n)
	}
	return m.requests, downloads, most
}

func (m *Server) Listed() []string {
	m.Mu.Lock()
	defer m.Mu.Unlock()
	return slices.Clone(m.lists)
}

// authorize checks the bearer token and the scripted failures; it answers
// and reports false when the request must stop here.
func (m *Server) authorize(w http.ResponseWriter, r *http.Request, kind string) bool {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	m.Mu.Lock()
	m.requests++
	for i, f := range m.fails {
		if f.Kind == "" || f.Kind == kind {
			m.fails = slices.Delete(m.fails, i, i+1)
			m.Mu.Unlock()
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
			fakeAPIError(w, f.Status, "scripted")
			return false
		}
	}
	rejected := m.Reject[tok]
	m.Mu.Unlock()
	ok := tok == "static-"+r.PathValue("box")
	if !strings.HasPrefix(tok, "static-") && m.oauth != nil {
		ok = m.oauth.Bearer(r) && !rejected
	}
	if !ok {
		fakeAPIError(w, http.StatusUnauthorized, "unauthenticated")
	}
	return ok
}

func fakeAPIError(w http.ResponseWriter, status int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"code":%d,"status":%q}}`, status, reason)
}

type fakeListPage struct {
	Messages      []struct{ ID string } `json:"messages"`
	NextPageToken string                `json:"nextPageToken,omitempty"`
}

func (m *Server) list(w http.ResponseWriter, r *http.Request) {
	if !m.authorize(w, r, "list") {
		return
	}
	box, token := r.PathValue("box"), r.URL.Query().Get("pageToken")
	from := 0
	if token != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(token, "p"))
		if err != nil {
			fakeAPIError(w, http.StatusBadRequest, "bad page token")
			return
		}
		from = n
	}
	m.Mu.Lock()
	msgs := m.Boxes[box]
	var page fakeListPage
	for i := from; i < len(msgs) && i < from+m.PageSize; i++ {
		page.Messages = append(page.Messages, struct{ ID string }{msgs[i].ID})
	}
	if from+m.PageSize < len(msgs) {
		page.NextPageToken = "p" + strconv.Itoa(from+m.PageSize)
	}
	m.lists = append(m.lists, box+":"+token)
	hook := m.OnList
	m.Mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(page)
	if hook != nil {
		hook(box, token)
	}
}

type fakeMessage struct {
	ID      string    `json:"id"`
	Subject string    `json:"subject"`
	From    string    `json:"from"`
	To      []string  `json:"to"`
	Date    time.Time `json:"date"`
	Raw     string    `json:"raw"`
	Text    string    `json:"text"`
}

func (m *Server) get(w http.ResponseWriter, r *http.Request) {
	if !m.authorize(w, r, "get") {
		return
	}
	m.Mu.Lock()
	hook := m.OnGet
	m.Mu.Unlock()
	if hook != nil {
		hook(r)
	}
	box, id := r.PathValue("box"), r.PathValue("id")
	m.Mu.Lock()
	i := slices.IndexFunc(m.Boxes[box], func(msg Msg) bool { return msg.ID == id })
	if i < 0 {
		m.Mu.Unlock()
		fakeAPIError(w, http.StatusNotFound, "not found")
		return
	}
	msg := m.Boxes[box][i]
	m.downloads[box+"/"+id]++
	m.Mu.Unlock()
	raw := "From: " + msg.From + "\r\nTo: " + strings.Join(msg.To, ", ") + "\r\nSubject: " + msg.Subject +
		"\r\nDate: " + msg.Date.Format(time.RFC1123Z) + "\r\n" + msg.Header + "\r\n" + msg.Body
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(fakeMessage{ID: msg.ID, Subject: msg.Subject, From: msg.From, To: msg.To, Date: msg.Date, Raw: raw, Text: msg.Body})
}

func (m *Server) enter(box string) {
	m.Mu.Lock()
	m.active[box]++
	m.MaxActive[box] = max(m.MaxActive[box], m.active[box])
	m.Mu.Unlock()
}

func (m *Server) leave(box string) {
	m.Mu.Lock()
	m.active[box]--
	m.Mu.Unlock()
}

// fakeClient is one connected fake mailbox.
type fakeClient struct {
	m      *Server
	env    integrations.Env
	box    string
	api    string
	tokens *oauthclient.Refresher // nil: a static token
	static string
}

func (c *fakeClient) token(ctx context.Context) (string, error) {
	if c.tokens == nil {
		return c.static, nil
	}
	creds, err := c.tokens.Credentials(ctx)
	return creds.AccessToken, err
}

func (c *fakeClient) Initialize(ctx context.Context) error {
	c.m.enter(c.box)
	defer c.m.leave(c.box)
	_, err := c.token(ctx)
	return err
}

func (c *fakeClient) ValidateAuthentication(context.Context) (bool, error) { return true, nil }

func (c *fakeClient) Shutdown(context.Context) error { return nil }

func (c *fakeClient) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	c.m.enter(c.box)
	defer c.m.leave(c.box)
	switch task.Type {
	case integrations.TaskStart:
		c.m.Mu.Lock()
		removed := c.m.Deleted[c.box]
		delete(c.m.Deleted, c.box)
		c.m.Mu.Unlock()
		return integrations.TaskResult{Tasks: []integrations.Task{{Type: integrations.TaskGetEmailList}}, Removed: removed}, nil
	case integrations.TaskGetEmailList:
		var page fakeListPage
		path := "/" + c.box + "/messages?pageToken=" + task.Payload["pageToken"]
		if err := c.call(ctx, path, &page); err != nil {
			return integrations.TaskResult{}, err
		}
		var res integrations.TaskResult
		for _, msg := range page.Messages {
			if c.env.Known == nil || !c.env.Known(msg.ID) {
				res.Tasks = append(res.Tasks, integrations.Task{Type: integrations.TaskDownloadEmail, Payload: map[string]string{"emailId": msg.ID}})
			}
		}
		if page.NextPageToken != "" {
			res.Tasks = append(res.Tasks, integrations.Task{Type: integrations.TaskGetEmailList, Payload: map[string]string{"pageToken": page.NextPageToken}})
		}
		return res, nil
	case integrations.TaskDownloadEmail:
		var msg fakeMessage
		if err := c.call(ctx, "/"+c.box+"/messages/"+task.Payload["emailId"], &msg); err != nil {
			return integrations.TaskResult{}, err
		}
		item := integrations.Item{
			ProviderID: msg.ID, Title: msg.Subject, From: msg.From, To: msg.To, Date: msg.Date,
			Size: int64(len(msg.Raw)), Text: msg.Text, Raw: []byte(msg.Raw),
		}
		// Its conversation, from the raw header, as the IMAP integration
		// finds it.
		if parsed, err := mail.Parse([]byte(msg.Raw)); err == nil {
			item.Thread, item.Refs = parsed.ThreadKeys()
		}
		return integrations.TaskResult{Output: []integrations.Item{item}}, nil
	}
	return integrations.TaskResult{}, integrations.ErrUnsupportedTask
}

func (c *fakeClient) call(ctx context.Context, path string, into any) error {
	tok, err := c.token(ctx)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.api+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := c.env.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return integrations.NewAPIError(resp, "", c.env.Now())
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// Domains of the fake definitions.
const (
	OAuthDomain  = "fakemail"
	ManualDomain = "fakebox"
	ClientID     = "fake-client-id"
	ClientSecret = "fake-client-secret-do-not-leak"
)

// OAuthDefinition is the fake mail provider connected through OAuth.
func OAuthDefinition(m *Server) integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{Domain: OAuthDomain, DisplayName: "Fake Mail", Kind: integrations.KindEmail,
			AuthType: integrations.AuthOAuth, Scopes: []string{"mail.read"}},
		OAuth: &integrations.OAuthSpec{
			AuthURL: "https://fakemail.example/authorize", TokenURL: "https://fakemail.example/token",
			APIBaseURL: "https://fakemail.example/api", AuthStyle: oauth2.AuthStyleInParams, RequireRefreshToken: true,
		},
		New: func(env integrations.Env) (integrations.Integration, error) {
			return &fakeClient{m: m, env: env, box: env.Credentials.Fields["mailbox"],
				api: env.Provider.APIBaseURL(), tokens: oauthclient.NewRefresher(env)}, nil
		},
	}
}

// ManualDefinition is the same API connected with a static token.
func ManualDefinition(m *Server) integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{Domain: ManualDomain, DisplayName: "Fake Box", Kind: integrations.KindEmail, AuthType: integrations.AuthManual,
			Fields: []integrations.Field{{Name: "mailbox", Label: "Mailbox", Type: integrations.FieldText, Required: true}}},
		ValidateManual: func(_ context.Context, f map[string]string, _ *http.Client) (integrations.Credentials, error) {
			return integrations.Credentials{Fields: f}, nil
		},
		New: func(env integrations.Env) (integrations.Integration, error) {
			box := env.Credentials.Fields["mailbox"]
			return &fakeClient{m: m, env: env, box: box, api: m.URL, static: "static-" + box}, nil
		},
	}
}

// Env configures the OAuth definition against the fake provider.
func Env(srv *oauthtest.Server) map[string]string {
	return map[string]string{
		"FAKEMAIL_OAUTH_CLIENT_ID":     ClientID,
		"FAKEMAIL_OAUTH_CLIENT_SECRET": ClientSecret,
		"FAKEMAIL_OAUTH_AUTH_URL":      srv.URL + "/authorize",
		"FAKEMAIL_OAUTH_TOKEN_URL":     srv.URL + "/token",
		"FAKEMAIL_API_BASE_URL":        srv.URL + "/api",
	}
}
