package api_test

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/fakemail"
	"searchsvc/integrations/items"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/oauthtest"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// syncClock is a clock the test steps forward.
type syncClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *syncClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *syncClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncFixture is the real syncer on a real store in a temporary DATA_DIR,
// with the fake mail provider behind a real fake OAuth server, and the
// handlers on them.
type syncFixture struct {
	t     testing.TB
	dir   string
	clock *syncClock
	srv   *oauthtest.Server
	mail  *fakemail.Server
	env   map[string]string
	reg   *integrations.Registry
	vault *vault.Vault

	st      *storage.Store
	records *records.Records
	syncer  *syncer.Syncer
	indexer syncer.Indexer // nil: none
}

func newSyncFixture(t testing.TB) *syncFixture {
	t.Helper()
	v, err := vault.New(bytes.Repeat([]byte{9}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	f := &syncFixture{t: t, dir: t.TempDir(), vault: v,
		clock: &syncClock{t: time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)}}
	f.srv = oauthtest.New(t, oauthtest.Options{ClientID: fakemail.ClientID, ClientSecret: fakemail.ClientSecret, Body: true, Scope: "mail.read"})
	f.mail = fakemail.New(t, f.srv)
	f.env = fakemail.Env(f.srv)
	if f.reg, err = integrations.NewRegistry(fakemail.OAuthDefinition(f.mail), fakemail.ManualDefinition(f.mail)); err != nil {
		t.Fatal(err)
	}
	f.open()
	return f
}

// open opens the store and a new syncer on the fixture's DATA_DIR.
func (f *syncFixture) open() {
	f.t.Helper()
	f.st = storage.New(filepath.Join(f.dir, "main"), storage.Options{Sync: storage.SyncNone, Now: f.clock.Now})
	f.records = records.New(f.st, f.vault, f.clock.Now)
	s, err := syncer.New(syncer.Config{
		Records: f.records, Items: items.New(f.st, f.vault, filepath.Join(f.dir, "items")), Tasks: syncer.NewTasks(f.st, f.vault),
		Registry: f.reg,
		Getenv:   func(k string) string { return f.env[k] }, Client: f.srv.Client(),
		PollInterval: 15 * time.Minute, Workers: 2, ShutdownGrace: 50 * time.Millisecond,
		Now: f.clock.Now, Rand: func(int64) int64 { return 0 }, Indexer: f.indexer,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.syncer = s
	if err := f.st.Open(); err != nil {
		f.t.Fatal(err)
	}
	st := f.st
	f.t.Cleanup(func() { st.Close() })
}

// reopen closes the store and opens it again, as a restart does.
func (f *syncFixture) reopen() {
	f.t.Helper()
	if err := f.st.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.open()
}

func (f *syncFixture) items() *items.Store { return f.syncer.Items() }

// connect authorizes user's box at the fake OAuth server and stores the
// record, as the OAuth callback does.
func (f *syncFixture) connect(user, box string) records.Record {
	f.t.Helper()
	p, err := oauthclient.NewProvider(fakemail.OAuthDefinition(f.mail), func(k string) string { return f.env[k] }, f.srv.Client())
	if err != nil {
		f.t.Fatal(err)
	}
	p.Now = f.clock.Now
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk0123456789"
	const redirect = "https://search.example/v1/user-integration/oauth/fakemail/callback"
	authURL, err := p.GenerateAuthorizationURL(redirect, "state-"+user, verifier)
	if err != nil {
		f.t.Fatal(err)
	}
	raw, err := p.ExchangeCodeForTokens(context.Background(), f.srv.Authorize(f.t, authURL), redirect, verifier)
	if err != nil {
		f.t.Fatal(err)
	}
	creds, err := p.ValidateTokens(raw)
	if err != nil {
		f.t.Fatal(err)
	}
	creds.Fields = map[string]string{"mailbox": box}
	rec, err := f.records.Connect(user, fakemail.OAuthDomain, creds)
	if err != nil {
		f.t.Fatal(err)
	}
	return rec
}

// connectManual stores a record of the static-token fake for user's box.
func (f *syncFixture) connectManual(user, box string) records.Record {
	f.t.Helper()
	rec, err := f.records.Connect(user, fakemail.ManualDomain, integrations.Credentials{Fields: map[string]string{"mailbox": box}})
	if err != nil {
		f.t.Fatal(err)
	}
	return rec
}

func (f *syncFixture) runOnce() {
	f.t.Helper()
	if err := f.syncer.RunOnce(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

// liveItems returns the record's live items.
func (f *syncFixture) liveItems(recordID string) []items.ItemRecord {
	var out []items.ItemRecord
	for _, it := range f.items().ForRecord(recordID) {
		if it.Live() {
			out = append(out, it)
		}
	}
	return out
}

// server serves the sync, items and disconnect routes of f, with the
// caller taken from the X-Test-User header.
func (f *syncFixture) server() http.Handler {
	h, err := api.New(api.Config{
		Registry: f.reg, Records: f.records, Items: f.syncer.Items(), Sync: f.syncer,
		Getenv: func(k string) string { return f.env[k] }, Client: f.srv.Client(),
		UserID: testUser,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/user-integrations/{id}/sync", h.SyncNow())
	mux.Handle("GET /v1/items", h.ListItems())
	mux.Handle("GET /v1/items/{id}", h.GetItem())
	mux.Handle("DELETE /v1/user-integrations/{id}", h.Delete())
	return newStack(f.t, mux, httpx.Config{})
}

// testUser is api.Config's UserID as the tests give it: the user a
// request names in its X-Test-User header, and none without one.
func testUser(r *http.Request) (string, bool) {
	id := r.Header.Get("X-Test-User")
	return id, id != ""
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
