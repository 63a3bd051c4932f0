package auth

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations/vault"
	"searchsvc/sessions"
	"searchsvc/storage"
)

// tinyParams make Argon2 cheap in tests where the cost is not the point.
var tinyParams = Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

// testClock is a clock the test moves by hand.
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

// setup is what a test may change before the env is built.
type setup struct {
	cfg      Config
	sess     sessions.Config
	params   Params
	sync     storage.SyncMode
	hashJobs int
	// loneWindow is the session store's storage.Options.LoneWindow.
	loneWindow time.Duration
	// beforeOpen registers a test's own tables on the main store.
	beforeOpen func(main *storage.Store)
}

// testEnv is a running auth: real stores in a temporary directory, a real
// sessions.Manager, and the handlers mounted as main mounts them, behind
// httpx.Handler.
type testEnv struct {
	t         testing.TB
	clock     *testClock
	mainStore *storage.Store
	sessStore *storage.Store
	sm        *sessions.Manager
	users     *Users
	h         *Handlers
	handler   http.Handler
}

func newEnv(t testing.TB, opts ...func(*setup)) *testEnv {
	t.Helper()
	clock := &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := &setup{
		cfg:    Config{Registration: true, SignupRateLimit: 1000}, // tests register many users from one address
		sess:   sessions.Config{MaxAge: 7 * 24 * time.Hour, IdleTimeout: 24 * time.Hour, Secure: true, TouchInterval: time.Minute, Secret: testSecret},
		params: tinyParams,
		sync:   storage.SyncNone,
	}
	for _, o := range opts {
		o(s)
	}
	dir := t.TempDir()
	mainStore := storage.New(dir+"/main", storage.Options{Sync: s.sync, Now: clock.Now})
	sessStore := storage.New(dir+"/sessions", storage.Options{Sync: s.sync, Now: clock.Now, LoneWindow: s.loneWindow})
	v, err := vault.New(testKey)
	if err != nil {
		t.Fatal(err)
	}
	users, err := NewUsers(mainStore, v)
	if err != nil {
		t.Fatal(err)
	}
	s.sess.Now = clock.Now
	s.sess.CSRF = s.cfg.CSRF
	sm, err := sessions.New(sessStore, s.sess)
	if err != nil {
		t.Fatal(err)
	}
	if s.beforeOpen != nil {
		s.beforeOpen(mainStore)
	}
	for _, st := range []*storage.Store{mainStore, sessStore} {
		if err := st.Open(); err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { st.Close() })
	}
	hasher, err := NewHasher(s.params, s.hashJobs)
	if err != nil {
		t.Fatalf("NewHasher: %v", err)
	}
	cfg := s.cfg
	cfg.Sessions, cfg.Users, cfg.Store, cfg.Hasher, cfg.Now = sm, users, mainStore, hasher, clock.Now
	h, err := NewHandlers(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	addRoutes(mux, h)
	return &testEnv{
		t: t, clock: clock, mainStore: mainStore, sessStore: sessStore, sm: sm, users: users, h: h,
		handler: newStack(t, mux, httpx.Config{Now: clock.Now}),
	}
}

// addRoutes mounts auth's handlers as main's addRoutes does.
func addRoutes(mux *http.ServeMux, a *Handlers) {
	mux.Handle("POST /v1/auth/register", a.Register())
	mux.Handle("POST /v1/auth/login", a.Login())
	mux.Handle("POST /v1/auth/logout", a.Require(a.Logout()))
	mux.Handle("GET /v1/auth/sessions", a.Require(a.ListSessions()))
	mux.Handle("DELETE /v1/auth/sessions/{sessionId}", a.Require(a.DeleteSession()))
	mux.Handle("POST /v1/auth/logout-all", a.Require(a.LogoutAll()))
	mux.Handle("POST /v1/admin/users/{userId}/force-logout", a.RequireAdmin(a.ForceLogout()))
	mux.Handle("GET /v1/user/profile", a.Require(a.Profile()))
	mux.Handle("GET /v1/user/sessions", a.Require(a.ListSessions()))
	mux.Handle("DELETE /v1/user/sessions/{sessionId}", a.Require(a.DeleteSession()))
	mux.Handle("PUT /v1/user/password", a.Require(a.ChangePassword()))
	mux.Handle("POST /v1/user/totp", a.Require(a.BeginTOTP()))
	mux.Handle("POST /v1/user/totp/confirm", a.Require(a.ConfirmTOTP()))
	mux.Handle("POST /v1/user/totp/recovery-codes", a.Require(a.RegenerateRecoveryCodes()))
	mux.Handle("DELETE /v1/user/totp", a.Require(a.DisableTOTP()))
	mux.Handle("DELETE /v1/admin/users/{userId}/totp", a.RequireAdmin(a.ResetTOTP()))
	mux.Handle("GET /v1/admin/users", a.RequireAdmin(a.ListUsers()))
	mux.Handle("DELETE /v1/admin/users/{userId}", a.RequireAdmin(a.DeleteUser()))
}

// request is one request a test sends.
type request struct {
	method, path string
	body         any // nil, a string sent as is, or a value sent as JSON
	cookie       string
	csrfHeader   string
	ip           string // client address; "192.0.2.1" when empty
	userAgent    string
	header       map[string]string // set last; "" deletes (Content-Type included)
}

// response is a recorded answer with its JSON body decoded.
type response struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
	cookie *http.Cookie // the svc_session Set-Cookie, if any
}

func (e *testEnv) send(rq request) *response {
	e.t.Helper()
	var body io.Reader
	switch b := rq.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("marshal body: %v", err)
		}
		body = strings.NewReader(string(raw))
	}
	r := httptest.NewRequest(rq.method, rq.path, body)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	ip := rq.ip
	if ip == "" {
		ip = "192.0.2.1"
	}
	if strings.Contains(ip, ":") {
		ip = "[" + ip + "]"
	}
	r.RemoteAddr = ip + ":40000"
	if rq.cookie != "" {
		r.AddCookie(&http.Cookie{Name: sessions.CookieName, Value: rq.cookie})
	}
	if rq.csrfHeader != "" {
		r.Header.Set("X-CSRF-Token", rq.csrfHeader)
	}
	if rq.userAgent != "" {
		r.Header.Set("User-Agent", rq.userAgent)
	}
	for k, v := range rq.header {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, r)
	res := w.Result()
	out := &response{status: res.StatusCode, header: res.Header, raw: w.Body.String()}
	if w.Body.Len() == 0 {
		return out
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out.body); err != nil {
		e.t.Fatalf("%s %s: body is not JSON: %v: %q", rq.method, rq.path, err, out.raw)
	}
	for _, c := range res.Cookies() {
		if c.Name == sessions.CookieName {
			out.cookie = c
		}
	}
	return out
}

// errMessage is the error message of an error response, or "".
func (r *response) errMessage() string {
	e, _ := r.body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// details are the validation details as field → message.
func (r *response) details() map[string]string {
	out := map[string]string{}
	e, _ := r.body["error"].(map[string]any)
	ds, _ := e["details"].([]any)
	for _, d := range ds {
		m := d.(map[string]any)
		out[m["field"].(string)] = m["message"].(string)
	}
	return out
}

func (r *response) cleared() bool {
	return r.cookie != nil && r.cookie.Value == "" && r.cookie.MaxAge < 0
}

func (r *response) field(path ...string) any {
	var v any = r.body
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// wantError checks an error answer's status and message.
func (r *response) wantError(t testing.TB, status int, message string) {
	t.Helper()
	if r.status != status || r.errMessage() != message {
		t.Fatalf("got %d %q, want %d %q (body %s)", r.status, r.errMessage(), status, message, r.raw)
	}
}

func (r *response) wantStatus(t testing.TB, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("got status %d, want %d (body %s)", r.status, status, r.raw)
	}
}

// client is a signed-in browser: its session cookie and CSRF token.
type client struct {
	e      *testEnv
	userID string
	cookie string
	csrf   string
	ip     string
}

func (c *client) do(method, path string, body any) *response {
	c.e.t.Helper()
	return c.e.send(request{method: method, path: path, body: body, cookie: c.cookie, csrfHeader: c.csrf, ip: c.ip})
}

const testPassword = "correct horse battery"

// testKey is the CREDENTIALS_KEY of the tests.
var testKey = []byte("fedcba9876543210fedcba9876543210")

// testSecret is the SESSION_SECRET of the tests.
var testSecret = []byte("0123456789abcdef0123456789abcdef")

// register registers a user and returns the signed-in client.
func (e *testEnv) register(email, name string) *client {
	e.t.Helper()
	r := e.send(request{method: "POST", path: "/v1/auth/register",
		body: map[string]string{"email": email, "name": name, "password": testPassword}})
	r.wantStatus(e.t, http.StatusCreated)
	return e.clientFrom(r)
}

// login signs in and returns the client.
func (e *testEnv) login(email, password string) *client {
	e.t.Helper()
	r := e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.77",
		body: map[string]string{"email": email, "password": password}})
	r.wantStatus(e.t, http.StatusOK)
	return e.clientFrom(r)
}

func (e *testEnv) clientFrom(r *response) *client {
	e.t.Helper()
	if r.cookie == nil || r.cookie.Value == "" {
		e.t.Fatalf("no session cookie set: %v", r.header)
	}
	c := &client{e: e, cookie: r.cookie.Value}
	c.userID, _ = r.field("user", "id").(string)
	c.csrf, _ = r.body["csrfToken"].(string)
	return c
}

func newStoreAt(t testing.TB, dir string, now func() time.Time) *storage.Store {
	t.Helper()
	return storage.New(dir, storage.Options{Sync: storage.SyncNone, Now: now})
}

// wrap puts mux behind httpx.Handler with the env's clock.
func wrap(mux *http.ServeMux, e *testEnv) http.Handler {
	return newStack(e.t, mux, httpx.Config{Now: e.clock.Now})
}

// manyIDs is a comma-separated list of n distinct ids.
func manyIDs(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "id" + itoa(i)
	}
	return strings.Join(ids, ",")
}

// newStack is httpx.Handler, failing the test on an error.
func newStack(tb testing.TB, mux *http.ServeMux, cfg httpx.Config) *httpx.Stack {
	tb.Helper()
	s, err := httpx.Handler(mux, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
