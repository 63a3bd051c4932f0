package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
)

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
		UserID:   testUser,
		Logger:   slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
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
