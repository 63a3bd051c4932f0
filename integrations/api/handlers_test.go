package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/oauthtest"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

const (
	davUser     = "alice"
	davPassword = "correct horse battery staple"
)

// davServer is a file server that accepts davUser and davPassword.
func davServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != davUser || p != davPassword {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// dav is a manual integration whose form is checked by logging in.
func dav() integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{
			Domain: "dav", DisplayName: "WebDAV", Kind: integrations.KindFiles, AuthType: integrations.AuthManual,
			Fields: []integrations.Field{
				{Name: "url", Label: "Server URL", Type: integrations.FieldURL, Required: true},
				{Name: "username", Label: "User name", Type: integrations.FieldText, Required: true},
				{Name: "password", Label: "Password", Type: integrations.FieldPassword, Required: true, Secret: true},
				{Name: "depth", Label: "Depth", Type: integrations.FieldNumber, Default: "3"},
				{Name: "insecure", Label: "Skip TLS checks", Type: integrations.FieldBool},
			},
		},
		ValidateManual: func(ctx context.Context, f map[string]string, c *http.Client) (integrations.Credentials, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, f["url"], nil)
			if err != nil {
				return integrations.Credentials{}, &integrations.ValidationError{Field: "url", Message: "is not a usable URL"}
			}
			req.SetBasicAuth(f["username"], f["password"])
			resp, err := c.Do(req)
			if err != nil {
				return integrations.Credentials{}, err
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return integrations.Credentials{}, &integrations.ValidationError{Field: "password", Message: "the server refused the user name or password"}
			}
			return integrations.Credentials{Fields: f}, nil
		},
		New: func(integrations.Env) (integrations.Integration, error) { return nil, nil },
	}
}

// revocable is acme with a revocation endpoint at the fake provider.
func revocable() integrations.Definition {
	d := acme()
	spec := *d.OAuth
	spec.RevokeURL = "https://acme.example/revoke"
	spec.Revoke = func(ctx context.Context, env integrations.Env) error {
		p, c := env.Provider, env.Credentials
		form := url.Values{"token": {c.RefreshToken}}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.RevokeURL(), strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := p.Client().Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			var body struct {
				Error string `json:"error"`
			}
			json.NewDecoder(resp.Body).Decode(&body)
			return &oauthclient.TokenError{Status: resp.StatusCode, Code: body.Error}
		}
		return nil
	}
	d.OAuth = &spec
	return d
}

// item is a row of a table of the test's own, which fakeSync.Disconnect
// soft-deletes with the record.
type item struct {
	ID        string `json:"id"`
	RecordID  string `json:"recordId"`
	DeletedAt string `json:"deletedAt,omitempty"`
}

type fixture struct {
	t        *testing.T
	srv      *oauthtest.Server
	dav      *httptest.Server
	st       *storage.Store
	records  *records.Records
	items    *storage.Table[item]
	handler  http.Handler
	dir      string
	env      map[string]string
	logs     *syncBuffer
	revokeOK bool

	mu        sync.Mutex
	revoked   []string
	connected []string
}

// syncBuffer is a log sink that handlers and the test can share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, dav: davServer(t), dir: t.TempDir(), logs: &syncBuffer{}, revokeOK: true}
	f.srv = oauthtest.New(t, oauthtest.Options{
		ClientID: clientID, ClientSecret: clientSecret, Body: true,
		Scope: "mail.read profile", AuthParams: map[string]string{"access_type": "offline"},
	})
	f.srv.Mux.HandleFunc("POST /revoke", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f.mu.Lock()
		ok := f.revokeOK
		f.revoked = append(f.revoked, r.PostForm.Get("token"))
		f.mu.Unlock()
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"temporarily_unavailable"}`)
			return
		}
		f.srv.Kill(r.PostForm.Get("token"))
	})
	f.env = map[string]string{
		"ACME_OAUTH_CLIENT_ID":     clientID,
		"ACME_OAUTH_CLIENT_SECRET": clientSecret,
		"ACME_OAUTH_AUTH_URL":      f.srv.URL + "/authorize",
		"ACME_OAUTH_TOKEN_URL":     f.srv.URL + "/token",
		"ACME_OAUTH_REVOKE_URL":    f.srv.URL + "/revoke",
	}
	other := oauthDefinition("other")
	reg, err := integrations.NewRegistry(revocable(), dav(), other)
	if err != nil {
		t.Fatal(err)
	}
	st := storage.New(f.dir, storage.Options{Sync: storage.SyncNone})
	v, err := vault.New(bytes.Repeat([]byte{7}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	f.records = records.New(st, v, func() time.Time { return testNow })
	f.items = storage.Register(st, "items", storage.TableConfig[item]{ID: func(i *item) string { return i.ID }})
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	h, err := api.New(api.Config{
		Registry: reg,
		Sync:     fakeSync{f},
		Records:  f.records,
		Getenv:   func(k string) string { return f.env[k] },
		Client:   f.srv.Client(),
		UserID: func(r *http.Request) (string, bool) {
			id := r.Header.Get("X-Test-User")
			return id, id != ""
		},
		Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/integrations", h.Catalogue())
	mux.Handle("GET /v1/user-integrations", h.List())
	mux.Handle("GET /v1/user-integrations/{id}", h.Get())
	mux.Handle("DELETE /v1/user-integrations/{id}", h.Delete())
	mux.Handle("POST /v1/user-integrations/{integration}/credentials", h.SubmitCredentials())
	f.handler = newStack(t, mux, httpx.Config{})
	return f
}

// fakeSync is the sync scheduler as the record routes see it: Disconnect
// soft-deletes the test's items with the record, Activity counts numbers
// made of the id, Connected keeps a list.
type fakeSync struct{ f *fixture }

func (s fakeSync) Connected(rec records.Record) {
	s.f.mu.Lock()
	s.f.connected = append(s.f.connected, rec.ID)
	s.f.mu.Unlock()
}

func (s fakeSync) Disconnect(rec records.Record) error {
	var ops []storage.Op
	for _, it := range s.f.itemsOf(rec.ID) {
		ops = append(ops, s.f.items.Update(it.ID, func(i *item) error { i.DeletedAt = "now"; return nil }))
	}
	_, err := s.f.records.Disconnect(rec.ID, ops...)
	return err
}

func (s fakeSync) Activity(recordID string) syncer.Activity {
	return syncer.Activity{State: syncer.ActivityDownloading, Pending: len(recordID) % 7, ItemsLeft: len(recordID) % 5, ItemsTotal: 40}
}

func (s fakeSync) SyncNow(string, string) error { return nil }

func (s fakeSync) KeptState(records.Record) (map[string]string, error) { return nil, nil }

// Fetch has no provider to ask: the download routes are tested with the
// real syncer against each provider's fake (original_test.go of gmail,
// imap, folder, webdav and dropbox).
func (s fakeSync) Fetch(context.Context, records.Record, string) (io.ReadCloser, error) {
	return nil, syncer.ErrNoOriginal
}

func oauthDefinition(domain string) integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{Domain: domain, DisplayName: "Other", Kind: integrations.KindChat,
			AuthType: integrations.AuthOAuth, Scopes: []string{"read"}},
		OAuth: &integrations.OAuthSpec{AuthURL: "https://other.example/auth", TokenURL: "https://other.example/token"},
		New:   func(integrations.Env) (integrations.Integration, error) { return nil, nil },
	}
}

func (f *fixture) itemsOf(recordID string) []item {
	var out []item
	f.items.Scan(func(i item) bool {
		if i.RecordID == recordID {
			out = append(out, i)
		}
		return true
	})
	return out
}

// connectAcme runs a real authorization against the fake provider and
// stores the result as user's acme record.
func (f *fixture) connectAcme(user string) (records.Record, integrations.Credentials) {
	f.t.Helper()
	p, err := oauthclient.NewProvider(revocable(), func(k string) string { return f.env[k] }, f.srv.Client())
	if err != nil {
		f.t.Fatal(err)
	}
	authURL, err := p.GenerateAuthorizationURL(redirectURI, "st", verifier)
	if err != nil {
		f.t.Fatal(err)
	}
	code := f.srv.Authorize(f.t, authURL)
	raw, err := p.ExchangeCodeForTokens(context.Background(), code, redirectURI, verifier)
	if err != nil {
		f.t.Fatal(err)
	}
	creds, err := p.ValidateTokens(raw)
	if err != nil {
		f.t.Fatal(err)
	}
	rec, err := f.records.Connect(user, "acme", creds)
	if err != nil {
		f.t.Fatal(err)
	}
	return rec, creds
}

type response struct {
	status int
	raw    string
	body   map[string]any
}

func (f *fixture) do(method, path, user string, body any) response {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.Header.Set("X-Test-User", user)
	}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	out := response{status: rec.Code, raw: rec.Body.String()}
	if err := json.Unmarshal(rec.Body.Bytes(), &out.body); err != nil {
		f.t.Fatalf("%s %s: body is not JSON: %q", method, path, out.raw)
	}
	if out.body["requestId"] == nil || out.body["timestamp"] == nil || out.body["duration"] == nil {
		f.t.Errorf("%s %s: envelope incomplete: %s", method, path, out.raw)
	}
	return out
}

// want checks the status, operation and, for errors, code and message.
func (r response) want(t *testing.T, status int, op, code, message string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status: got %d, want %d (%s)", r.status, status, r.raw)
	}
	if got := r.body["operation"]; got != op {
		t.Errorf("operation: got %v, want %s", got, op)
	}
	if code == "" {
		return
	}
	e, _ := r.body["error"].(map[string]any)
	if e["code"] != code || e["message"] != message {
		t.Errorf("error: got %v / %v, want %s / %s", e["code"], e["message"], code, message)
	}
}

func (r response) details() map[string]string {
	e, _ := r.body["error"].(map[string]any)
	out := map[string]string{}
	ds, _ := e["details"].([]any)
	for _, d := range ds {
		m := d.(map[string]any)
		out[m["field"].(string)] = m["message"].(string)
	}
	return out
}

func (r response) results() []map[string]any {
	rs, _ := r.body["results"].([]any)
	out := make([]map[string]any, len(rs))
	for i, x := range rs {
		out[i] = x.(map[string]any)
	}
	return out
}

func TestCatalogue(t *testing.T) {
	f := newFixture(t)
	r := f.do("GET", "/v1/integrations", "u1", nil)
	r.want(t, http.StatusOK, "integration.readMany", "", "")
	got := map[string]map[string]any{}
	for _, e := range r.results() {
		got[e["domain"].(string)] = e
	}
	if len(got) != 3 || r.body["count"] != 3.0 {
		t.Fatalf("catalogue: got %d entries, count %v; want 3", len(got), r.body["count"])
	}
	tests := []struct {
		domain, authType string
		configured       bool
		scopes, fields   int
	}{
		{"acme", "oauth", true, 2, 0},
		{"dav", "manual", true, 0, 5},
		{"other", "oauth", false, 1, 0}, // OTHER_OAUTH_CLIENT_ID is not set
	}
	for _, tt := range tests {
		e := got[tt.domain]
		if e == nil {
			t.Errorf("%s: missing", tt.domain)
			continue
		}
		scopes, _ := e["scopes"].([]any)
		fields, _ := e["fields"].([]any)
		if e["authType"] != tt.authType || e["configured"] != tt.configured || len(scopes) != tt.scopes ||
			len(fields) != tt.fields || e["displayName"] == "" || e["kind"] == nil {
			t.Errorf("%s: got %v", tt.domain, e)
		}
		if e["scopes"] == nil || e["fields"] == nil {
			t.Errorf("%s: scopes or fields is null, want []", tt.domain)
		}
	}
	pw := got["dav"]["fields"].([]any)[2].(map[string]any)
	if pw["name"] != "password" || pw["secret"] != true || pw["type"] != "password" {
		t.Errorf("dav password field: got %v", pw)
	}
	if strings.Contains(r.raw, clientSecret) || strings.Contains(r.raw, clientID) {
		t.Errorf("catalogue shows client configuration: %s", r.raw)
	}

	r = f.do("GET", "/v1/integrations?inIds=acme,dav&ninIds=dav", "u1", nil)
	if res := r.results(); len(res) != 1 || res[0]["domain"] != "acme" {
		t.Errorf("inIds=acme,dav&ninIds=dav: got %v, want acme only", res)
	}
	long := strings.Repeat("x", 200)
	f.do("GET", "/v1/integrations?inIds="+long, "u1", nil).want(t, http.StatusBadRequest, "integration.readMany", "validation_failed", "validation failed")
}

func TestSubmitCredentials(t *testing.T) {
	f := newFixture(t)
	good := map[string]any{"url": f.dav.URL, "username": davUser, "password": davPassword, "insecure": false}
	const path = "/v1/user-integrations/dav/credentials"

	t.Run("refusals", func(t *testing.T) {
		const op = "userIntegration.create"
		f.do("POST", "/v1/user-integrations/nope/credentials", "u1", map[string]any{"fields": good}).
			want(t, http.StatusNotFound, op, "integration_not_found", "integration not found")

		r := f.do("POST", "/v1/user-integrations/acme/credentials", "u1", map[string]any{"fields": good})
		r.want(t, http.StatusBadRequest, op, "validation_failed", "validation failed")
		if d := r.details()["integration"]; !strings.Contains(d, "/v1/user-integration/oauth/acme/authorize") {
			t.Errorf("oauth integration detail: got %q, want a pointer to the authorize endpoint", d)
		}

		f.do("POST", path, "u1", map[string]any{"fields": good, "extra": 1}).
			want(t, http.StatusBadRequest, op, "invalid_request_body", "invalid request body")

		bad := map[string]any{"url": "not a url", "password": davPassword, "depth": "deep", "insecure": "maybe",
			"surprise": "x", "username": []string{"a"}}
		r = f.do("POST", path, "u1", map[string]any{"fields": bad})
		r.want(t, http.StatusBadRequest, op, "validation_failed", "validation failed")
		want := map[string]string{
			"fields.surprise": "is not a field of this form",
			"fields.url":      "must be an absolute URL",
			"fields.username": "must be a string, a number or a boolean",
			"fields.depth":    "must be a number",
			"fields.insecure": "must be true or false",
		}
		if got := r.details(); !maps.Equal(got, want) {
			t.Errorf("details: got %v, want %v", got, want)
		}

		r = f.do("POST", path, "u1", map[string]any{"fields": map[string]any{"url": f.dav.URL, "password": "  "}})
		r.want(t, http.StatusBadRequest, op, "validation_failed", "validation failed")
		if got := r.details(); got["fields.username"] != "is required" || len(got) != 1 {
			t.Errorf("required: got %v, want fields.username only (a password of spaces is a password)", got)
		}

		wrong := map[string]any{"url": f.dav.URL, "username": davUser, "password": "wrong password"}
		r = f.do("POST", path, "u1", map[string]any{"fields": wrong})
		r.want(t, http.StatusBadRequest, op, "validation_failed", "validation failed")
		if got := r.details()["fields.password"]; got != "the server refused the user name or password" {
			t.Errorf("wrong password detail: got %q", got)
		}

		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		unreachable := map[string]any{"url": down.URL, "username": davUser, "password": davPassword}
		f.do("POST", path, "u1", map[string]any{"fields": unreachable}).
			want(t, http.StatusBadGateway, op, "integration_unreachable", "could not check the credentials with dav; try again later")

		if n := len(f.records.ForUser("u1")); n != 0 {
			t.Errorf("records after refusals: got %d, want 0", n)
		}
	})

	var id string
	t.Run("connect", func(t *testing.T) {
		r := f.do("POST", path, "u1", map[string]any{"fields": good})
		r.want(t, http.StatusCreated, "userIntegration.create", "", "")
		res, _ := r.body["result"].(map[string]any)
		id, _ = res["id"].(string)
		if res["integration"] != "dav" || res["userId"] != "u1" || res["status"] != "connected" || !uuid.Valid(id) {
			t.Errorf("result: got %v", res)
		}
		if _, ok := res["credentials"]; ok || strings.Contains(r.raw, davPassword) {
			t.Errorf("response shows credentials: %s", r.raw)
		}
		rec, _ := f.records.ByID(id)
		creds, err := f.records.Credentials(rec)
		if err != nil {
			t.Fatal(err)
		}
		wantFields := map[string]string{"url": f.dav.URL, "username": davUser, "password": davPassword, "depth": "3", "insecure": "false"}
		if !maps.Equal(creds.Fields, wantFields) {
			t.Errorf("stored fields: got keys %v, want %v", creds, slices.Sorted(maps.Keys(wantFields)))
		}

		// Submitting again replaces the credentials of the same record.
		r = f.do("POST", path, "u1", map[string]any{"fields": good})
		r.want(t, http.StatusOK, "userIntegration.create", "", "")
		if res, _ := r.body["result"].(map[string]any); res["id"] != id {
			t.Errorf("resubmit: got record %v, want %s", res["id"], id)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if !slices.Equal(f.connected, []string{id, id}) {
			t.Errorf("OnConnect: got %v, want [%s %s]", f.connected, id, id)
		}
	})

	assertNotOnDisk(t, f.dir, davPassword)
	if strings.Contains(f.logs.String(), davPassword) {
		t.Errorf("log holds the password:\n%s", f.logs.String())
	}
}

func TestListGetFilters(t *testing.T) {
	f := newFixture(t)
	a, creds := f.connectAcme("u1")
	b, err := f.records.Connect("u1", "dav", integrations.Credentials{Fields: map[string]string{"password": davPassword}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.connectAcme("u2")
	secrets := []string{creds.AccessToken, creds.RefreshToken, clientSecret, davPassword}

	ids := func(r response) []string {
		var out []string
		for _, x := range r.results() {
			out = append(out, x["id"].(string))
			if _, ok := x["credentials"]; ok {
				t.Errorf("list item shows credentials: %v", x)
			}
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }
	tests := []struct {
		query string
		want  []string
	}{
		{"", sorted(a.ID, b.ID)},
		{"?inIds=" + a.ID, []string{a.ID}},
		{"?ninIds=" + a.ID, []string{b.ID}},
		{"?inIds=" + a.ID + "," + c.ID, []string{a.ID}}, // another user's id is never listed
		{"?inIds=" + a.ID + "&ninIds=" + a.ID, nil},
	}
	for _, tt := range tests {
		r := f.do("GET", "/v1/user-integrations"+tt.query, "u1", nil)
		r.want(t, http.StatusOK, "userIntegration.readMany", "", "")
		if got := ids(r); !slices.Equal(got, tt.want) {
			t.Errorf("list%s: got %v, want %v", tt.query, got, tt.want)
		}
		for _, s := range secrets {
			if strings.Contains(r.raw, s) {
				t.Errorf("list%s shows a secret", tt.query)
			}
		}
	}
	if r := f.do("GET", "/v1/user-integrations", "u3", nil); r.body["count"] != 0.0 || r.body["results"] == nil {
		t.Errorf("empty list: got %s, want results [] and count 0", r.raw)
	}

	const op = "userIntegration.readOne"
	r := f.do("GET", "/v1/user-integrations/"+a.ID, "u1", nil)
	r.want(t, http.StatusOK, op, "", "")
	if res, _ := r.body["result"].(map[string]any); res["id"] != a.ID || res["integration"] != "acme" || res["credentials"] != nil ||
		res["pendingTasks"] != float64(len(a.ID)%7) || res["activity"] != "downloading" || res["itemsLeft"] != float64(len(a.ID)%5) ||
		res["itemsTotal"] != 40.0 || res["itemsSynced"] != 0.0 || res["sources"] != nil || res["retryAt"] != nil {
		t.Errorf("get: got %v, want the record with pendingTasks %d, activity downloading, itemsLeft %d, itemsTotal 40", res, len(a.ID)%7, len(a.ID)%5)
	}
	for _, s := range secrets {
		if strings.Contains(r.raw, s) {
			t.Error("get shows a secret")
		}
	}
	for _, path := range []string{c.ID, uuid.New(), "not-a-uuid"} {
		f.do("GET", "/v1/user-integrations/"+path, "u1", nil).
			want(t, http.StatusNotFound, op, "integration_record_not_found", "integration record not found")
	}
	var many []string
	for range 101 {
		many = append(many, uuid.New())
	}
	f.do("GET", "/v1/user-integrations?inIds="+strings.Join(many, ","), "u1", nil).
		want(t, http.StatusBadRequest, "userIntegration.readMany", "validation_failed", "validation failed")
}

func TestDelete(t *testing.T) {
	f := newFixture(t)
	a, creds := f.connectAcme("u1")
	other, _ := f.connectAcme("u2")
	for _, id := range []string{"i1", "i2"} {
		if err := f.st.Commit(f.items.Put(item{ID: id, RecordID: a.ID})); err != nil {
			t.Fatal(err)
		}
	}
	const op = "userIntegration.deleteOne"

	f.do("DELETE", "/v1/user-integrations/"+other.ID, "u1", nil).
		want(t, http.StatusNotFound, op, "integration_record_not_found", "integration record not found")
	if _, ok := f.records.ByID(other.ID); !ok {
		t.Fatal("another user's record was deleted")
	}

	r := f.do("DELETE", "/v1/user-integrations/"+a.ID, "u1", nil)
	r.want(t, http.StatusOK, op, "", "")
	if r.body["success"] != true {
		t.Errorf("body: got %s, want success true", r.raw)
	}
	if _, ok := f.records.ByID(a.ID); ok {
		t.Error("record still live after delete")
	}
	var got records.Record
	f.records.ScanAll(func(r records.Record) bool {
		if r.ID == a.ID {
			got = r
		}
		return true
	})
	if got.Status != records.StatusDisconnected || got.DeletedAt == nil || got.Credentials != nil {
		t.Errorf("stored record: got status %s deletedAt %v credentials %d bytes; want disconnected, set, none",
			got.Status, got.DeletedAt, len(got.Credentials))
	}
	for _, it := range f.itemsOf(a.ID) {
		if it.DeletedAt == "" {
			t.Errorf("item %s not soft-deleted by OnDisconnect's ops", it.ID)
		}
	}
	f.mu.Lock()
	revoked := slices.Clone(f.revoked)
	f.mu.Unlock()
	if !slices.Equal(revoked, []string{creds.RefreshToken}) {
		t.Errorf("revoked at provider: got %d tokens, want the record's refresh token", len(revoked))
	}
	if f.srv.Live(creds.RefreshToken) {
		t.Error("refresh token still live at the provider")
	}
	f.do("DELETE", "/v1/user-integrations/"+a.ID, "u1", nil).
		want(t, http.StatusNotFound, op, "integration_record_not_found", "integration record not found")
	f.do("GET", "/v1/user-integrations/"+a.ID, "u1", nil).
		want(t, http.StatusNotFound, "userIntegration.readOne", "integration_record_not_found", "integration record not found")

	// The same user connects again: a fresh record, not the disconnected one.
	again, _ := f.connectAcme("u1")
	if again.ID == a.ID {
		t.Error("reconnect after disconnect reused the disconnected record")
	}
}

func TestDeleteRevocationFailureDoesNotBlock(t *testing.T) {
	f := newFixture(t)
	f.revokeOK = false
	a, creds := f.connectAcme("u1")
	r := f.do("DELETE", "/v1/user-integrations/"+a.ID, "u1", nil)
	r.want(t, http.StatusOK, "userIntegration.deleteOne", "", "")
	if _, ok := f.records.ByID(a.ID); ok {
		t.Error("record still live after a delete whose revocation failed")
	}
	logs := f.logs.String()
	if !strings.Contains(logs, "revocation at the provider failed") || !strings.Contains(logs, "provider_error=temporarily_unavailable") ||
		!strings.Contains(logs, "status=503") {
		t.Errorf("log: want the failed revocation with the provider's code and status, got:\n%s", logs)
	}
	for _, s := range []string{creds.AccessToken, creds.RefreshToken, clientSecret} {
		if strings.Contains(logs, s) {
			t.Errorf("log holds a secret:\n%s", logs)
		}
	}
	assertNotOnDisk(t, f.dir, creds.AccessToken, creds.RefreshToken, clientSecret)
}

func TestHandlersWithoutUser(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct{ method, path, op string }{
		{"GET", "/v1/user-integrations", "userIntegration.readMany"},
		{"GET", "/v1/user-integrations/" + uuid.New(), "userIntegration.readOne"},
		{"DELETE", "/v1/user-integrations/" + uuid.New(), "userIntegration.deleteOne"},
	} {
		f.do(tt.method, tt.path, "", nil).want(t, http.StatusInternalServerError, tt.op, "internal_error", "internal error")
	}
}

func TestStoreFailureIs503(t *testing.T) {
	f := newFixture(t)
	a, _ := f.connectAcme("u1")
	f.st.Close()
	f.do("DELETE", "/v1/user-integrations/"+a.ID, "u1", nil).
		want(t, http.StatusServiceUnavailable, "userIntegration.deleteOne", "unavailable", "service unavailable")
	good := map[string]any{"url": f.dav.URL, "username": davUser, "password": davPassword}
	f.do("POST", "/v1/user-integrations/dav/credentials", "u1", map[string]any{"fields": good}).
		want(t, http.StatusServiceUnavailable, "userIntegration.create", "unavailable", "service unavailable")
}

func TestCheckForm(t *testing.T) {
	m := dav().Manifest
	raw := func(s string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	got, errs := m.CheckForm(raw(`{"url":" https://x.example/dav ","username":"a","password":" p ","depth":7,"insecure":"1"}`))
	want := map[string]string{"url": "https://x.example/dav", "username": "a", "password": " p ", "depth": "7", "insecure": "true"}
	if errs != nil || !maps.Equal(got, want) {
		t.Errorf("CheckForm: got %v, %v; want %v", got, errs, want)
	}
	_, errs = m.CheckForm(raw(`{"url":null,"username":"` + strings.Repeat("a", integrations.MaxFieldBytes+1) + `","password":"p"}`))
	if len(errs) != 2 || errs[0].Field != "url" || errs[0].Message != "is required" || errs[1].Field != "username" {
		t.Errorf("CheckForm: got %v, want url required and username too long", errs)
	}
	many := map[string]json.RawMessage{}
	for i := range 500 {
		many[strings.Repeat("k", i%60+1)+string(rune('a'+i%26))] = json.RawMessage(`"x"`)
	}
	if _, errs := m.CheckForm(many); len(errs) > 20 {
		t.Errorf("CheckForm of 500 unknown fields: got %d errors, want a bounded number", len(errs))
	}
}

// assertNotOnDisk fails if any secret appears in any file under dir.
func assertNotOnDisk(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if s != "" && bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a secret in plain text", path)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// TestOperations checks that each handler names its operation, so that
// auth's Require answers its 401s under the same name.
func TestOperations(t *testing.T) {
	h, err := api.New(api.Config{Registry: &integrations.Registry{}, Records: &records.Records{}, Sync: fakeSync{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		h  http.Handler
		op string
	}{
		{h.Catalogue(), "integration.readMany"},
		{h.List(), "userIntegration.readMany"},
		{h.Get(), "userIntegration.readOne"},
		{h.Delete(), "userIntegration.deleteOne"},
		{h.SubmitCredentials(), "userIntegration.create"},
	} {
		if got := httpx.OperationOf(tt.h, ""); got != tt.op {
			t.Errorf("got %T with operation %q, want %s", tt.h, got, tt.op)
		}
	}
}
