package integrations

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

	"searchsvc/integrations/oauthtest"
)

// This file is a Gmail-like provider for the sync tests and benchmarks:
// fakeMail serves mailboxes over HTTP (a paged message list and one
// message per request, behind a bearer token), and fakeClient is an
// Integration that syncs them with the contract's task model: start →
// getEmailList (paged) → downloadEmail.

// fakeMsg is one message of a fake mailbox.
type fakeMsg struct {
	ID      string
	Subject string
	From    string
	To      []string
	Date    time.Time
	Body    string
}

// fakeFail is a scripted failure: the next request of kind ("list", "get"
// or "" for any) is answered with status and Retry-After.
type fakeFail struct {
	kind       string
	status     int
	retryAfter string
}

type fakeMail struct {
	URL      string // API base, without a trailing slash
	oauth    *oauthtest.Server
	pageSize int

	mu        sync.Mutex
	boxes     map[string][]fakeMsg // newest first
	downloads map[string]int       // by box/id
	lists     []string             // box:pageToken of each list request served
	requests  int
	fails     []fakeFail
	reject    map[string]bool // access tokens refused although live
	onList    func(box, pageToken string)
	onGet     func(r *http.Request)
	active    map[string]int // per box: tasks and initializations running now
	maxActive map[string]int
}

// newFakeMail serves the API on the fake OAuth provider srv, or on its own
// server with static tokens ("static-<box>") when srv is nil.
func newFakeMail(tb testing.TB, srv *oauthtest.Server) *fakeMail {
	m := &fakeMail{
		oauth: srv, pageSize: 10,
		boxes: make(map[string][]fakeMsg), downloads: make(map[string]int),
		reject: make(map[string]bool), active: make(map[string]int), maxActive: make(map[string]int),
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

// fill adds n messages to box, dated one minute apart.
func (m *fakeMail) fill(box string, n int, start time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	have := len(m.boxes[box])
	for i := range n {
		k := have + i
		msg := fakeMsg{
			ID:      fmt.Sprintf("%s-msg-%05d", box, k),
			Subject: fmt.Sprintf("Subject %s number %d", box, k),
			From:    fmt.Sprintf("sender%d@private.example", k),
			To:      []string{box + "@private.example"},
			Date:    start.Add(time.Duration(k) * time.Minute),
			Body:    fmt.Sprintf("Confidential body %d of %s. ", k, box) + strings.Repeat("lorem ipsum dolor sit amet ", 40),
		}
		// Newest first, as Gmail lists.
		m.boxes[box] = slices.Insert(m.boxes[box], 0, msg)
	}
}

func (m *fakeMail) fail(f ...fakeFail) {
	m.mu.Lock()
	m.fails = append(m.fails, f...)
	m.mu.Unlock()
}

// counts returns the requests served, downloads in all, and the most
// downloads of one message.
func (m *fakeMail) counts() (requests, downloads, most int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range m.downloads {
		downloads += n
		most = max(most, n)
	}
	return m.requests, downloads, most
}

func (m *fakeMail) listed() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.lists)
}

// authorize checks the bearer token and the scripted failures; it answers
// and reports false when the request must stop here.
func (m *fakeMail) authorize(w http.ResponseWriter, r *http.Request, kind string) bool {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	m.mu.Lock()
	m.requests++
	for i, f := range m.fails {
		if f.kind == "" || f.kind == kind {
			m.fails = slices.Delete(m.fails, i, i+1)
			m.mu.Unlock()
			if f.retryAfter != "" {
				w.Header().Set("Retry-After", f.retryAfter)
			}
			fakeAPIError(w, f.status, "scripted")
			return false
		}
	}
	rejected := m.reject[tok]
	m.mu.Unlock()
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

func (m *fakeMail) list(w http.ResponseWriter, r *http.Request) {
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
	m.mu.Lock()
	msgs := m.boxes[box]
	var page fakeListPage
	for i := from; i < len(msgs) && i < from+m.pageSize; i++ {
		page.Messages = append(page.Messages, struct{ ID string }{msgs[i].ID})
	}
	if from+m.pageSize < len(msgs) {
		page.NextPageToken = "p" + strconv.Itoa(from+m.pageSize)
	}
	m.lists = append(m.lists, box+":"+token)
	hook := m.onList
	m.mu.Unlock()
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

func (m *fakeMail) get(w http.ResponseWriter, r *http.Request) {
	if !m.authorize(w, r, "get") {
		return
	}
	m.mu.Lock()
	hook := m.onGet
	m.mu.Unlock()
	if hook != nil {
		hook(r)
	}
	box, id := r.PathValue("box"), r.PathValue("id")
	m.mu.Lock()
	i := slices.IndexFunc(m.boxes[box], func(msg fakeMsg) bool { return msg.ID == id })
	if i < 0 {
		m.mu.Unlock()
		fakeAPIError(w, http.StatusNotFound, "not found")
		return
	}
	msg := m.boxes[box][i]
	m.downloads[box+"/"+id]++
	m.mu.Unlock()
	raw := "From: " + msg.From + "\r\nTo: " + strings.Join(msg.To, ", ") + "\r\nSubject: " + msg.Subject +
		"\r\nDate: " + msg.Date.Format(time.RFC1123Z) + "\r\n\r\n" + msg.Body
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(fakeMessage{ID: msg.ID, Subject: msg.Subject, From: msg.From, To: msg.To, Date: msg.Date, Raw: raw, Text: msg.Body})
}

func (m *fakeMail) enter(box string) {
	m.mu.Lock()
	m.active[box]++
	m.maxActive[box] = max(m.maxActive[box], m.active[box])
	m.mu.Unlock()
}

func (m *fakeMail) leave(box string) {
	m.mu.Lock()
	m.active[box]--
	m.mu.Unlock()
}

// fakeClient is one connected fake mailbox.
type fakeClient struct {
	m      *fakeMail
	env    Env
	box    string
	api    string
	tokens *Refresher // nil: a static token
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

func (c *fakeClient) RunTask(ctx context.Context, task Task) (TaskResult, error) {
	c.m.enter(c.box)
	defer c.m.leave(c.box)
	switch task.Type {
	case TaskStart:
		return TaskResult{Tasks: []Task{{Type: TaskGetEmailList}}}, nil
	case TaskGetEmailList:
		var page fakeListPage
		path := "/" + c.box + "/messages?pageToken=" + task.Payload["pageToken"]
		if err := c.call(ctx, path, &page); err != nil {
			return TaskResult{}, err
		}
		var res TaskResult
		for _, msg := range page.Messages {
			if c.env.Known == nil || !c.env.Known(msg.ID) {
				res.Tasks = append(res.Tasks, Task{Type: TaskDownloadEmail, Payload: map[string]string{"emailId": msg.ID}})
			}
		}
		if page.NextPageToken != "" {
			res.Tasks = append(res.Tasks, Task{Type: TaskGetEmailList, Payload: map[string]string{"pageToken": page.NextPageToken}})
		}
		return res, nil
	case TaskDownloadEmail:
		var msg fakeMessage
		if err := c.call(ctx, "/"+c.box+"/messages/"+task.Payload["emailId"], &msg); err != nil {
			return TaskResult{}, err
		}
		return TaskResult{Output: []Item{{
			ProviderID: msg.ID, Title: msg.Subject, From: msg.From, To: msg.To, Date: msg.Date,
			Size: int64(len(msg.Raw)), Text: msg.Text, Raw: []byte(msg.Raw),
		}}}, nil
	}
	return TaskResult{}, ErrUnsupportedTask
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
		return NewAPIError(resp, "", c.env.now())
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// Domains of the fake definitions.
const (
	fakeOAuthDomain  = "fakemail"
	fakeManualDomain = "fakebox"
	fakeClientID     = "fake-client-id"
	fakeClientSecret = "fake-client-secret-do-not-leak"
)

// fakeOAuthDefinition is the fake mail provider connected through OAuth.
func fakeOAuthDefinition(m *fakeMail) Definition {
	return Definition{
		Manifest: Manifest{Domain: fakeOAuthDomain, DisplayName: "Fake Mail", Kind: KindEmail,
			AuthType: AuthOAuth, Scopes: []string{"mail.read"}},
		OAuth: &OAuthSpec{
			AuthURL: "https://fakemail.example/authorize", TokenURL: "https://fakemail.example/token",
			APIBaseURL: "https://fakemail.example/api", AuthStyle: oauth2.AuthStyleInParams, RequireRefreshToken: true,
		},
		New: func(env Env) (Integration, error) {
			return &fakeClient{m: m, env: env, box: env.Credentials.Fields["mailbox"],
				api: env.Provider.APIBaseURL(), tokens: NewRefresher(env)}, nil
		},
	}
}

// fakeManualDefinition is the same API connected with a static token.
func fakeManualDefinition(m *fakeMail) Definition {
	return Definition{
		Manifest: Manifest{Domain: fakeManualDomain, DisplayName: "Fake Box", Kind: KindEmail, AuthType: AuthManual,
			Fields: []Field{{Name: "mailbox", Label: "Mailbox", Type: FieldText, Required: true}}},
		ValidateManual: func(_ context.Context, f map[string]string, _ *http.Client) (Credentials, error) {
			return Credentials{Fields: f}, nil
		},
		New: func(env Env) (Integration, error) {
			box := env.Credentials.Fields["mailbox"]
			return &fakeClient{m: m, env: env, box: box, api: m.URL, static: "static-" + box}, nil
		},
	}
}

// fakeEnv configures the OAuth definition against the fake provider.
func fakeEnv(srv *oauthtest.Server) map[string]string {
	return map[string]string{
		"FAKEMAIL_OAUTH_CLIENT_ID":     fakeClientID,
		"FAKEMAIL_OAUTH_CLIENT_SECRET": fakeClientSecret,
		"FAKEMAIL_OAUTH_AUTH_URL":      srv.URL + "/authorize",
		"FAKEMAIL_OAUTH_TOKEN_URL":     srv.URL + "/token",
		"FAKEMAIL_API_BASE_URL":        srv.URL + "/api",
	}
}
