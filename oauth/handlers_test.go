package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/auth"
	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/sessions"
	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

const (
	testClientID     = "acme-client"
	testClientSecret = "acme-secret/with+odd=chars"
	redirectBase     = "https://search.example"
	frontendBase     = "https://app.example/ui/"
	sessionMaxAge    = time.Hour
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuffer collects the log lines of every component.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	discard bool // drop what is written (long fuzz runs)
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.discard {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// acmeDef is an OAuth integration that asks for offline access.
func acmeDef(domain string) integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{Domain: domain, DisplayName: "Acme " + domain, Kind: integrations.KindEmail,
			AuthType: integrations.AuthOAuth, Scopes: []string{"mail.read"}},
		OAuth: &integrations.OAuthSpec{
			AuthURL:             "https://acme.example/authorize",
			TokenURL:            "https://acme.example/token",
			RequireRefreshToken: true,
		},
		New: func(integrations.Env) (integrations.Integration, error) { return nil, nil },
	}
}

func feedDef() integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{Domain: "feed", DisplayName: "Feed", Kind: integrations.KindFeed,
			AuthType: integrations.AuthManual,
			Fields:   []integrations.Field{{Name: "url", Label: "URL", Type: integrations.FieldURL, Required: true}}},
		ValidateManual: func(context.Context, map[string]string, *http.Client) (integrations.Credentials, error) {
			return integrations.Credentials{}, nil
		},
		New: func(integrations.Env) (integrations.Integration, error) { return nil, nil },
	}
}

// fixture is the service's OAuth endpoints mounted as main mounts them:
// auth's real Require in front of Authorize, real stores in a temporary
// directory, a real sessions.Manager, and a fake provider.
type fixture struct {
	t       testing.TB
	clock   *testClock
	fake    *fakeProvider
	h       *Handlers
	sm      *sessions.Manager
	records *records.Records
	handler http.Handler
	dir     string
	logs    *syncBuffer

	mu        sync.Mutex
	env       map[string]string
	connected []records.Record
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{
		t:     t,
		clock: &testClock{t: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)},
		fake:  newFakeProvider(t, testClientID, testClientSecret),
		dir:   t.TempDir(),
		logs:  &syncBuffer{},
	}
	f.env = map[string]string{}
	for _, p := range []string{"ACME", "OTHER"} {
		f.env[p+"_OAUTH_CLIENT_ID"] = testClientID
		f.env[p+"_OAUTH_CLIENT_SECRET"] = testClientSecret
		f.env[p+"_OAUTH_AUTH_URL"] = f.fake.URL + "/authorize"
		f.env[p+"_OAUTH_TOKEN_URL"] = f.fake.URL + "/token"
	}
	log := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	reg, err := integrations.NewRegistry(acmeDef("acme"), acmeDef("other"), feedDef())
	if err != nil {
		t.Fatal(err)
	}
	mainStore := storage.New(filepath.Join(f.dir, "main"), storage.Options{Sync: storage.SyncNone, Now: f.clock.Now, Logger: log})
	sessStore := storage.New(filepath.Join(f.dir, "sessions"), storage.Options{Sync: storage.SyncNone, Now: f.clock.Now, Logger: log})
	v, err := vault.New(bytes.Repeat([]byte{9}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	users, err := auth.NewUsers(mainStore, v)
	if err != nil {
		t.Fatal(err)
	}
	f.records = records.New(mainStore, v, f.clock.Now)
	sm, err := sessions.New(sessStore, sessions.Config{MaxAge: sessionMaxAge, Secure: true, Now: f.clock.Now, Logger: log, Secret: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	f.sm = sm
	for _, st := range []*storage.Store{mainStore, sessStore} {
		if err := st.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
	}
	hasher, err := auth.NewHasher(auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.NewHandlers(auth.Config{Sessions: f.sm, Users: users, Registration: true, Hasher: hasher, Now: f.clock.Now, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandlers(Config{
		Registry:     reg,
		Records:      f.records,
		Sessions:     f.sm,
		Getenv:       f.getenv,
		Client:       f.fake.Client(),
		RedirectBase: mustParse(t, redirectBase),
		FrontendURL:  mustParse(t, frontendBase),
		Secure:       true,
		Now:          f.clock.Now,
		Logger:       log,
		OnConnect: func(r records.Record) {
			f.mu.Lock()
			f.connected = append(f.connected, r)
			f.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	ih, err := api.New(api.Config{
		Registry: reg, Records: f.records, Sync: noSync{}, Getenv: f.getenv, Logger: log,
		UserID: func(r *http.Request) (string, bool) {
			u, ok := auth.UserFrom(r.Context())
			return u.ID, ok
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/auth/register", a.Register())
	mux.Handle("GET /v1/user-integration/oauth/{integration}/authorize", a.Require(f.h.Authorize()))
	mux.Handle("GET /v1/user-integration/oauth/{integration}/callback", f.h.Callback())
	mux.Handle("GET /v1/user-integrations", a.Require(ih.List()))
	stack, err := httpx.Handler(mux, httpx.Config{Logger: log, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.handler = stack
	return f
}

// noSync is a sync scheduler that syncs nothing: these tests list records
// only.
type noSync struct{}

func (noSync) Connected(records.Record)                            {}
func (noSync) Disconnect(records.Record) error                     { return nil }
func (noSync) Activity(string) syncer.Activity                     { return syncer.Activity{State: syncer.ActivityIdle} }
func (noSync) SyncNow(userID, recordID string) error               { return nil }
func (noSync) KeptState(records.Record) (map[string]string, error) { return nil, nil }
func (noSync) Fetch(context.Context, records.Record, string) (io.ReadCloser, error) {
	return nil, syncer.ErrNoOriginal
}

func mustParse(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (f *fixture) getenv(k string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.env[k]
}

func (f *fixture) setenv(k, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.env[k] = v
}

func (f *fixture) connectedRecords() []records.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]records.Record(nil), f.connected...)
}

// browser is one user agent: its cookies and the user signed in with it.
type browser struct {
	userID  string
	session string // svc_session
	binding string // svc_oauth
}

// register signs a new user up in a fresh browser.
func (f *fixture) register(email string) *browser {
	f.t.Helper()
	body := `{"email":"` + email + `","password":"a long and unusual passphrase","name":"Test"}`
	req := httptest.NewRequest("POST", "/v1/auth/register", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		f.t.Fatalf("register: got %d, want 201: %s", rec.Code, rec.Body)
	}
	var out struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	json.Unmarshal(rec.Body.Bytes(), &out)
	b := &browser{userID: out.User.ID}
	for _, c := range rec.Result().Cookies() {
		if c.Name == sessions.CookieName {
			b.session = c.Value
		}
	}
	if b.userID == "" || b.session == "" {
		f.t.Fatalf("register: no user id or session cookie: %s", rec.Body)
	}
	return b
}

// get sends a GET from b to target (a path or an absolute URL) and keeps
// the svc_oauth cookie the answer sets or clears.
func (f *fixture) get(b *browser, target string) *http.Response {
	f.t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	if b != nil {
		if b.session != "" {
			req.AddCookie(&http.Cookie{Name: sessions.CookieName, Value: b.session})
		}
		if b.binding != "" {
			req.AddCookie(&http.Cookie{Name: CookieName, Value: b.binding})
		}
	}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	resp := rec.Result()
	if b != nil {
		for _, c := range resp.Cookies() {
			if c.Name == CookieName {
				b.binding = c.Value
			}
		}
	}
	return resp
}

func authorizePath(domain, userID string) string {
	return "/v1/user-integration/oauth/" + domain + "/authorize?userId=" + url.QueryEscape(userID)
}

// authorize starts an authorization in b and returns the provider URL.
func (f *fixture) authorize(b *browser, domain string) *url.URL {
	f.t.Helper()
	resp := f.get(b, authorizePath(domain, b.userID))
	if resp.StatusCode != http.StatusFound {
		f.t.Fatalf("authorize %s: got %d, want 302: %s", domain, resp.StatusCode, readBody(resp))
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

// callback sends the provider's redirect back through b and returns
// where the service sends the browser.
func (f *fixture) callback(b *browser, target string) string {
	f.t.Helper()
	resp := f.get(b, target)
	if resp.StatusCode != http.StatusFound {
		f.t.Fatalf("callback: got %d, want 302: %s", resp.StatusCode, readBody(resp))
	}
	if n := resp.Header.Get("Content-Length"); n != "" && n != "0" {
		f.t.Errorf("callback redirect has a body of %s bytes", n)
	}
	return resp.Header.Get("Location")
}

func callbackPath(domain string, q url.Values) string {
	return "/v1/user-integration/oauth/" + domain + "/callback?" + q.Encode()
}

func readBody(resp *http.Response) string {
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return b.String()
}

func errorPage(domain, message string) string {
	return "https://app.example/ui/integrations?status=error&integration=" + domain +
		"&message=" + strings.ReplaceAll(url.QueryEscape(message), "+", "%20")
}

func successPage(domain string) string {
	return "https://app.example/ui/integrations?status=success&integration=" + domain
}

// assertNotLogged fails if one of values appears in the logs.
func (f *fixture) assertNotLogged(values ...string) {
	f.t.Helper()
	logs := f.logs.String()
	for _, s := range values {
		if s != "" && strings.Contains(logs, s) {
			f.t.Errorf("the log holds a secret (%.6s…):\n%s", s, logs)
		}
	}
}

// assertNoSecrets fails if a code or token the provider issued, the
// client secret or one of extra appears in the logs or in any file under
// the fixture's data directory.
func (f *fixture) assertNoSecrets(extra ...string) {
	f.t.Helper()
	secrets := append(f.fake.secrets(), testClientSecret, url.QueryEscape(testClientSecret))
	secrets = append(secrets, extra...)
	logs := f.logs.String()
	for _, s := range secrets {
		if s != "" && strings.Contains(logs, s) {
			f.t.Errorf("the log holds a secret (%.6s…):\n%s", s, logs)
		}
	}
	err := filepath.WalkDir(f.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if s != "" && bytes.Contains(b, []byte(s)) {
				f.t.Errorf("%s holds a secret (%.6s…) in plain text", path, s)
			}
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

func TestFullFlow(t *testing.T) {
	f := newFixture(t)
	b := f.register("ada@example.com")

	resp := f.get(b, authorizePath("acme", b.userID))
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: got %d, want 302: %s", resp.StatusCode, readBody(resp))
	}
	authURL, _ := url.Parse(resp.Header.Get("Location"))
	q := authURL.Query()
	wantRedirect := "https://search.example/v1/user-integration/oauth/acme/callback"
	if authURL.Scheme+"://"+authURL.Host+authURL.Path != f.fake.URL+"/authorize" || q.Get("redirect_uri") != wantRedirect ||
		q.Get("client_id") != testClientID || q.Get("code_challenge_method") != "S256" || q.Get("scope") != "mail.read" ||
		!uuid.Valid(q.Get("state")) || q.Get("response_type") != "code" {
		t.Errorf("authorization URL: got %s", authURL)
	}
	if strings.Contains(authURL.String(), testClientSecret) {
		t.Error("authorization URL holds the client secret")
	}
	f.h.pending.mu.Lock()
	verifier := f.h.pending.byState[q.Get("state")].verifier
	f.h.pending.mu.Unlock()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("authorize set no svc_oauth cookie")
	}
	if !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/v1/user-integration/oauth/" ||
		cookie.MaxAge != 300 || cookie.Domain != "" || !validBinding(cookie.Value) {
		t.Errorf("svc_oauth cookie: got %q", resp.Header.Values("Set-Cookie"))
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control: got %q, want no-store", got)
	}

	back := f.fake.approve(t, authURL.String())
	if back.Scheme+"://"+back.Host+back.Path != wantRedirect {
		t.Fatalf("provider redirected to %s, want the callback", back)
	}
	resp = f.get(b, back.String())
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != successPage("acme") {
		t.Fatalf("callback: got %d to %q, want 302 to %s", resp.StatusCode, resp.Header.Get("Location"), successPage("acme"))
	}
	cleared := false
	for _, c := range resp.Cookies() {
		cleared = cleared || (c.Name == CookieName && c.Value == "" && c.MaxAge < 0 && c.Path == CookiePath)
	}
	if !cleared {
		t.Errorf("callback did not clear svc_oauth: %q", resp.Header.Values("Set-Cookie"))
	}

	rec, ok := f.records.Find(b.userID, "acme")
	if !ok || rec.Status != records.StatusConnected {
		t.Fatalf("record: got %+v, %v; want a connected record", rec.View(), ok)
	}
	creds, err := f.records.Credentials(rec)
	if err != nil {
		t.Fatal(err)
	}
	issued := f.fake.secrets() // code, access token, refresh token
	if len(issued) != 3 || creds.AccessToken != issued[1] || creds.RefreshToken != issued[2] ||
		creds.ClientID != testClientID || creds.ClientSecret != testClientSecret ||
		!creds.ExpiresAt.Equal(f.clock.Now().Add(time.Hour)) {
		t.Errorf("stored credentials: got %v", creds)
	}
	if got := f.connectedRecords(); len(got) != 1 || got[0].ID != rec.ID {
		t.Errorf("OnConnect: got %d calls, want 1 with the record", len(got))
	}
	if n := f.h.pending.len(); n != 0 {
		t.Errorf("pending authorizations after the flow: got %d, want 0", n)
	}

	// Listed, without secrets.
	resp = f.get(b, "/v1/user-integrations")
	body := readBody(resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, rec.ID) || strings.Contains(body, `"credentials"`) {
		t.Errorf("list: got %d %s", resp.StatusCode, body)
	}
	for _, s := range append(issued, testClientSecret) {
		if strings.Contains(body, s) {
			t.Errorf("list shows a secret: %s", body)
		}
	}

	// The provider's redirect replayed: the state was used.
	if got := f.callback(b, back.String()); got != errorPage("acme", msgInvalidState) {
		t.Errorf("replayed callback: got %s, want %s", got, errorPage("acme", msgInvalidState))
	}
	if n := f.fake.tokenRequests(); n != 1 {
		t.Errorf("token requests: got %d, want 1", n)
	}

	// Connecting again updates the same record.
	back = f.fake.approve(t, f.authorize(b, "acme").String())
	if got := f.callback(b, back.String()); got != successPage("acme") {
		t.Fatalf("reconnect: got %s", got)
	}
	again, _ := f.records.Find(b.userID, "acme")
	if again.ID != rec.ID || len(f.records.ForUser(b.userID)) != 1 {
		t.Errorf("reconnect: got record %s, want %s updated", again.ID, rec.ID)
	}
	f.sm.Flush()
	f.assertNoSecrets(verifier)
	// The session store keeps session ids by design; logs never do.
	f.assertNotLogged(b.session, cookie.Value)
}

func TestUnknownIntegration(t *testing.T) {
	f := newFixture(t)
	b := f.register("ada@example.com")
	for _, domain := range []string{"nope", "feed"} { // unknown, manual
		for _, tt := range []struct{ path, op string }{
			{authorizePath(domain, b.userID), opAuthorize},
			{callbackPath(domain, url.Values{"state": {"x"}, "code": {"y"}}), opCallback},
		} {
			resp := f.get(b, tt.path)
			var body struct {
				Operation string
				Error     struct{ Code, Message string }
			}
			json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != http.StatusNotFound || body.Error.Code != "integration_not_found" ||
				body.Error.Message != "integration not found" || body.Operation != tt.op {
				t.Errorf("%s: got %d %+v, want 404 integration not found under %s", tt.path, resp.StatusCode, body, tt.op)
			}
		}
	}
}

func TestAuthorizeRefusals(t *testing.T) {
	f := newFixture(t)
	b := f.register("ada@example.com")
	other := f.register("bob@example.com")

	type answer struct {
		Operation string
		Error     struct{ Code, Message string }
	}
	check := func(name string, resp *http.Response, status int, code, message string) {
		t.Helper()
		var got answer
		json.NewDecoder(resp.Body).Decode(&got)
		if resp.StatusCode != status || got.Error.Code != code || got.Error.Message != message || got.Operation != opAuthorize {
			t.Errorf("%s: got %d %+v, want %d %s %q under %s", name, resp.StatusCode, got, status, code, message, opAuthorize)
		}
		for _, c := range resp.Cookies() {
			if c.Name == CookieName {
				t.Errorf("%s: svc_oauth set on a refusal", name)
			}
		}
	}
	check("no session", f.get(&browser{}, authorizePath("acme", b.userID)), http.StatusUnauthorized, "no_session_cookie", "no session cookie")
	check("no userId", f.get(b, "/v1/user-integration/oauth/acme/authorize"), http.StatusForbidden, "forbidden", "forbidden")
	check("another user's id", f.get(b, authorizePath("acme", other.userID)), http.StatusForbidden, "forbidden", "forbidden")

	for _, v := range []string{"ACME_OAUTH_CLIENT_ID", "ACME_OAUTH_CLIENT_SECRET"} {
		f.setenv(v, "")
		check(v, f.get(b, authorizePath("acme", b.userID)), http.StatusInternalServerError, "integration_not_configured", v+" not configured")
		f.setenv(v, testClientID)
		if !strings.Contains(f.logs.String(), "level=ERROR") || !strings.Contains(f.logs.String(), v+" not configured") {
			t.Errorf("%s: not logged at error level:\n%s", v, f.logs.String())
		}
	}
	if n := f.h.pending.len(); n != 0 {
		t.Errorf("pending after refusals: got %d, want 0", n)
	}
}

func TestCallbackRefusals(t *testing.T) {
	const acme = "acme"
	invalid := errorPage(acme, msgInvalidState)
	tests := []struct {
		name string
		// run starts whatever it needs in a fresh fixture and returns the
		// browser and the callback target to send.
		run  func(f *fixture) (*browser, string)
		want string
	}{
		{"missing state", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			back := f.fake.approve(f.t, f.authorize(b, acme).String())
			q := back.Query()
			q.Del("state")
			return b, callbackPath(acme, q)
		}, invalid},
		{"unknown state", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			back := f.fake.approve(f.t, f.authorize(b, acme).String())
			q := back.Query()
			q.Set("state", uuid.New())
			return b, callbackPath(acme, q)
		}, invalid},
		{"expired state", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			back := f.fake.approve(f.t, f.authorize(b, acme).String())
			f.clock.Add(StateTTL)
			return b, back.String()
		}, invalid},
		{"state of another integration", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			back := f.fake.approve(f.t, f.authorize(b, "other").String())
			return b, callbackPath(acme, back.Query())
		}, invalid},
		{"no svc_oauth cookie", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			back := f.fake.approve(f.t, f.authorize(b, acme).String())
			b.binding = ""
			return b, back.String()
		}, invalid},
		{"wrong svc_oauth cookie", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			back := f.fake.approve(f.t, f.authorize(b, acme).String())
			b.binding = newBinding()
			return b, back.String()
		}, invalid},
		{"another browser's flow", func(f *fixture) (*browser, string) {
			victim := f.register("v@example.com")
			attacker := f.register("m@example.com")
			f.authorize(victim, acme) // the victim's browser holds a binding of its own
			back := f.fake.approve(f.t, f.authorize(attacker, acme).String())
			return victim, back.String()
		}, invalid},
		{"session ended", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			back := f.fake.approve(f.t, f.authorize(b, acme).String())
			if err := f.sm.Delete(b.session); err != nil {
				f.t.Fatal(err)
			}
			return b, back.String()
		}, invalid},
		{"session expired", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			f.clock.Add(sessionMaxAge - time.Minute)
			back := f.fake.approve(f.t, f.authorize(b, acme).String())
			f.clock.Add(2 * time.Minute)
			return b, back.String()
		}, invalid},
		{"access denied", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			u := f.authorize(b, acme)
			return b, callbackPath(acme, url.Values{"state": {u.Query().Get("state")}, "error": {"access_denied"}})
		}, errorPage(acme, "acme authorization was cancelled")},
		{"provider error", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			u := f.authorize(b, acme)
			return b, callbackPath(acme, url.Values{"state": {u.Query().Get("state")}, "error": {"server_error"}})
		}, errorPage(acme, "failed to complete acme authorization")},
		{"access denied with an invalid state", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			f.authorize(b, acme)
			return b, callbackPath(acme, url.Values{"state": {"forged"}, "error": {"access_denied"}})
		}, invalid},
		{"missing code", func(f *fixture) (*browser, string) {
			b := f.register("a@example.com")
			u := f.authorize(b, acme)
			return b, callbackPath(acme, url.Values{"state": {u.Query().Get("state")}})
		}, errorPage(acme, "failed to complete acme authorization")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			b, target := tt.run(f)
			if got := f.callback(b, target); got != tt.want {
				t.Errorf("redirect: got %s, want %s", got, tt.want)
			}
			if n := len(f.records.ForUser(b.userID)); n != 0 {
				t.Errorf("records: got %d, want 0", n)
			}
			if n := f.fake.tokenRequests(); n != 0 {
				t.Errorf("token requests: got %d, want 0", n)
			}
			f.assertNoSecrets()
		})
	}
}

// TestStateConsumedOnRefusal checks that a state is gone after a refused
// callback: presenting it to the right integration afterwards fails too.
func TestStateConsumedOnRefusal(t *testing.T) {
	f := newFixture(t)
	b := f.register("a@example.com")
	back := f.fake.approve(t, f.authorize(b, "acme").String())
	if got := f.callback(b, callbackPath("other", back.Query())); got != errorPage("other", msgInvalidState) {
		t.Errorf("other integration: got %s", got)
	}
	if got := f.callback(b, back.String()); got != errorPage("acme", msgInvalidState) {
		t.Errorf("then the right one: got %s, want the invalid state page", got)
	}
}

func TestExpiryBoundary(t *testing.T) {
	f := newFixture(t)
	b := f.register("a@example.com")
	back := f.fake.approve(t, f.authorize(b, "acme").String())
	f.clock.Add(StateTTL - time.Second)
	if got := f.callback(b, back.String()); got != successPage("acme") {
		t.Errorf("a second before expiry: got %s, want success", got)
	}
}

func TestExchangeFailure(t *testing.T) {
	f := newFixture(t)
	b := f.register("a@example.com")
	back := f.fake.approve(t, f.authorize(b, "acme").String())
	q := back.Query()
	q.Set("code", "forged-"+q.Get("code"))
	if got := f.callback(b, callbackPath("acme", q)); got != errorPage("acme", "failed to complete acme authorization") {
		t.Errorf("redirect: got %s", got)
	}
	logs := f.logs.String()
	if !strings.Contains(logs, "token exchange refused by the provider") || !strings.Contains(logs, "provider_error=invalid_grant") ||
		!strings.Contains(logs, "status=400") || !strings.Contains(logs, "level=WARN") {
		t.Errorf("log: want the refusal with status and provider code at warn level:\n%s", logs)
	}
	if n := len(f.records.ForUser(b.userID)); n != 0 {
		t.Errorf("records: got %d, want 0", n)
	}
	f.assertNoSecrets()
}

func TestClientAuthFailure(t *testing.T) {
	f := newFixture(t)
	b := f.register("a@example.com")
	back := f.fake.approve(t, f.authorize(b, "acme").String())
	f.setenv("ACME_OAUTH_CLIENT_SECRET", "a-rotated-secret")
	if got := f.callback(b, back.String()); got != errorPage("acme", "failed to complete acme authorization") {
		t.Errorf("redirect: got %s", got)
	}
	if logs := f.logs.String(); !strings.Contains(logs, "provider_error=invalid_client") || !strings.Contains(logs, "status=401") {
		t.Errorf("log: want invalid_client and 401:\n%s", logs)
	}
	f.assertNoSecrets()
	if strings.Contains(f.logs.String(), "a-rotated-secret") {
		t.Error("the log holds the client secret")
	}
}

func TestValidateTokensFailure(t *testing.T) {
	tests := []struct {
		name  string
		shape func(access, refresh string) map[string]any
		field string
	}{
		{"no refresh token", func(a, _ string) map[string]any {
			return map[string]any{"access_token": a, "token_type": "Bearer", "expires_in": 3600}
		}, "field=refresh_token"},
		{"no access token", func(_, r string) map[string]any {
			return map[string]any{"refresh_token": r, "token_type": "Bearer"}
		}, "field=access_token"},
		{"bad expiry", func(a, r string) map[string]any {
			return map[string]any{"access_token": a, "refresh_token": r, "token_type": "Bearer", "expires_in": -5}
		}, "field=expires_in"},
		{"not bearer", func(a, r string) map[string]any {
			return map[string]any{"access_token": a, "refresh_token": r, "token_type": "mac"}
		}, "field=token_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.fake.setTokens(tt.shape)
			b := f.register("a@example.com")
			back := f.fake.approve(t, f.authorize(b, "acme").String())
			if got := f.callback(b, back.String()); got != errorPage("acme", "failed to complete acme authorization") {
				t.Errorf("redirect: got %s", got)
			}
			if n := len(f.records.ForUser(b.userID)); n != 0 {
				t.Errorf("records: got %d, want 0 (nothing stored)", n)
			}
			if logs := f.logs.String(); !strings.Contains(logs, "token response refused") || !strings.Contains(logs, tt.field) {
				t.Errorf("log: want the refusal naming %s:\n%s", tt.field, logs)
			}
			if n := len(f.connectedRecords()); n != 0 {
				t.Errorf("OnConnect: got %d calls, want 0", n)
			}
			f.assertNoSecrets()
		})
	}
}

// TestTwoTabs connects two integrations at once from one browser: the
// second authorization keeps the first one's svc_oauth, so both finish,
// and the cookie is cleared only after the last.
func TestTwoTabs(t *testing.T) {
	f := newFixture(t)
	b := f.register("a@example.com")
	first := f.authorize(b, "acme")
	binding := b.binding
	second := f.authorize(b, "other")
	if b.binding != binding {
		t.Fatal("the second authorization replaced the browser's svc_oauth")
	}
	backFirst := f.fake.approve(t, first.String())
	backSecond := f.fake.approve(t, second.String())

	resp := f.get(b, backFirst.String())
	if got := resp.Header.Get("Location"); got != successPage("acme") {
		t.Fatalf("first tab: got %s", got)
	}
	if len(resp.Cookies()) != 0 {
		t.Errorf("first tab: svc_oauth changed while the second flow needs it: %q", resp.Header.Values("Set-Cookie"))
	}
	resp = f.get(b, backSecond.String())
	if got := resp.Header.Get("Location"); got != successPage("other") {
		t.Fatalf("second tab: got %s", got)
	}
	if b.binding != "" {
		t.Error("svc_oauth not cleared after the last flow")
	}

	// A binding this server never gave to the session is not adopted.
	c := f.register("c@example.com")
	c.binding = newBinding()
	planted := c.binding
	f.authorize(c, "acme")
	if c.binding == planted {
		t.Error("authorize adopted an svc_oauth value it did not issue")
	}
}

func TestPendingBounds(t *testing.T) {
	f := newFixture(t)
	b := f.register("a@example.com")
	var first *url.URL
	for i := range MaxPerSession + 1 {
		u := f.authorize(b, "acme")
		if i == 0 {
			first = u
		}
	}
	if n := f.h.pending.len(); n != MaxPerSession {
		t.Errorf("pending of one session: got %d, want %d", n, MaxPerSession)
	}
	back := f.fake.approve(t, first.String())
	if got := f.callback(b, back.String()); got != errorPage("acme", msgInvalidState) {
		t.Errorf("oldest authorization beyond the cap: got %s, want it dropped", got)
	}

	// Globally full: refuse rather than grow.
	f.h.pending = newPendingSet(2)
	f.authorize(b, "acme")
	f.authorize(f.register("x@example.com"), "acme")
	resp := f.get(f.register("y@example.com"), authorizePath("acme", ""))
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("got %d, want 403 for a missing userId first", resp.StatusCode)
	}
	y := f.register("z@example.com")
	resp = f.get(y, authorizePath("acme", y.userID))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "60" {
		t.Errorf("full: got %d Retry-After %q, want 503 and 60", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Once they expire, there is room again.
	f.clock.Add(StateTTL)
	f.authorize(y, "acme")
}

func TestRedirectURIAndFrontend(t *testing.T) {
	h := &Handlers{cfg: Config{
		RedirectBase: mustParse(t, "https://pi.example/search/"),
		FrontendURL:  mustParse(t, "https://app.example"),
	}}
	if got, want := h.redirectURI("google-mail"), "https://pi.example/search/v1/user-integration/oauth/google-mail/callback"; got != want {
		t.Errorf("redirect URI: got %s, want %s", got, want)
	}
	if got, want := h.failure("acme", "a & b + c"), "https://app.example/integrations?status=error&integration=acme&message=a%20%26%20b%20%2B%20c"; got != want {
		t.Errorf("error page: got %s, want %s", got, want)
	}
}

// FuzzCallback sends arbitrary queries and cookies to the callback: it
// must never panic, and always answer a 302 to the frontend's page.
func FuzzCallback(f *testing.F) {
	fx := newFixture(f)
	b := fx.register("fuzz@example.com")
	live := fx.authorize(b, "acme").Query().Get("state")
	f.Add("state="+live+"&code=x", CookieName+"="+b.binding)
	f.Add("state=&code=", "")
	f.Add("state=00000000-0000-4000-8000-000000000000&code=x&error=access_denied", CookieName+"="+newBinding())
	f.Add("state=%zz&code=%", CookieName+"=;;;")
	f.Add("error=&error=access_denied&state=a&state=b", "svc_session=x; svc_oauth=\"quoted\"")
	f.Add(strings.Repeat("state=a&", 1000), strings.Repeat("svc_oauth=a;", 1000))
	const page = "https://app.example/ui/integrations?status="
	fx.logs.mu.Lock()
	fx.logs.discard = true
	fx.logs.mu.Unlock()
	f.Fuzz(func(t *testing.T, query, cookie string) {
		req := httptest.NewRequest("GET", "/v1/user-integration/oauth/acme/callback", nil)
		req.URL.RawQuery = query
		req.Header.Set("Cookie", cookie)
		rec := httptest.NewRecorder()
		fx.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusFound || !strings.HasPrefix(rec.Header().Get("Location"), page) {
			t.Fatalf("query %q cookie %q: got %d to %q, want 302 to the frontend", query, cookie, rec.Code, rec.Header().Get("Location"))
		}
	})
}
