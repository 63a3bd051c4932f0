// Package syncfx runs a provider's tasks through the real syncer.Syncer on
// a real store in a temporary DATA_DIR, for the providers' tests and
// benchmarks: connect a record, sync it, restart, move the clock, read
// the stored items back opened, and see what the Indexer was told.
package syncfx

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// Options configure a Fixture.
type Options struct {
	Definition integrations.Definition
	// Env is the provider's configuration (<P>_OAUTH_CLIENT_ID, …).
	Env map[string]string
	// Client reaches the fake provider.
	Client *http.Client
}

// Fixture is a syncer with one provider on a real store.
type Fixture struct {
	tb      testing.TB
	opts    Options
	Dir     string // DATA_DIR
	Clock   *Clock
	Index   *Indexer
	Logs    *bytes.Buffer
	vault   *vault.Vault
	st      *storage.Store
	reg     *integrations.Registry
	Records *records.Records
	Syncer  *syncer.Syncer
}

// New opens a fixture in a temporary directory.
func New(tb testing.TB, opts Options) *Fixture {
	tb.Helper()
	v, err := vault.New(bytes.Repeat([]byte{7}, vault.KeySize))
	if err != nil {
		tb.Fatal(err)
	}
	f := &Fixture{tb: tb, opts: opts, Dir: tb.TempDir(), vault: v, Index: &Indexer{Live: map[string]syncer.IndexedItem{}},
		Clock: &Clock{t: time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)}, Logs: &bytes.Buffer{}}
	f.open()
	return f
}

func (f *Fixture) open() {
	f.tb.Helper()
	reg, err := integrations.NewRegistry(f.opts.Definition)
	if err != nil {
		f.tb.Fatal(err)
	}
	f.reg = reg
	f.st = storage.New(filepath.Join(f.Dir, "main"), storage.Options{Sync: storage.SyncNone, Now: f.Clock.Now})
	f.Records = records.New(f.st, f.vault, f.Clock.Now)
	f.Syncer, err = syncer.New(syncer.Config{
		Records: f.Records, Items: items.New(f.st, f.vault, filepath.Join(f.Dir, "items")),
		Tasks: syncer.NewTasks(f.st, f.vault), Registry: reg,
		Getenv: func(k string) string { return f.opts.Env[k] }, Client: f.opts.Client,
		Workers: 1, Now: f.Clock.Now, Rand: func(int64) int64 { return 0 }, Indexer: f.Index,
		Logger: slog.New(slog.NewTextHandler(lockedWriter{f.Logs, &f.Index.mu}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		f.tb.Fatal(err)
	}
	if err := f.st.Open(); err != nil {
		f.tb.Fatal(err)
	}
	st := f.st
	f.tb.Cleanup(func() { st.Close() })
}

// Reopen closes the store and opens it again with a new syncer, as a
// restart does.
func (f *Fixture) Reopen() {
	f.tb.Helper()
	if err := f.st.Close(); err != nil {
		f.tb.Fatal(err)
	}
	f.open()
}

// Connect stores a record of the fixture's integration for user, as the
// OAuth callback does.
func (f *Fixture) Connect(user string, creds integrations.Credentials) records.Record {
	f.tb.Helper()
	rec, err := f.Records.Connect(user, f.opts.Definition.Manifest.Domain, creds)
	if err != nil {
		f.tb.Fatal(err)
	}
	return rec
}

// Sync queues a sync of rec now and runs every task that is due.
func (f *Fixture) Sync(rec records.Record) {
	f.tb.Helper()
	if err := f.Syncer.SyncNow(rec.UserID, rec.ID); err != nil {
		f.tb.Fatal(err)
	}
	f.Run()
}

// Run runs every task that is due, without queueing a syncer.
func (f *Fixture) Run() {
	f.tb.Helper()
	if err := f.Syncer.RunOnce(context.Background()); err != nil {
		f.tb.Fatal(err)
	}
}

// Record returns rec as stored now.
func (f *Fixture) Record(rec records.Record) records.Record {
	f.tb.Helper()
	r, err := f.Records.Get(rec.UserID, rec.ID)
	if err != nil {
		f.tb.Fatal(err)
	}
	return r
}

// Item is a stored item opened.
type Item struct {
	ID, ProviderID, Title, From, Text string
	Path                              string
	Date                              time.Time
	Size                              int64
}

// Items returns the record's live items by provider id, opened.
func (f *Fixture) Items(rec records.Record) map[string]Item {
	f.tb.Helper()
	store := f.Syncer.Items()
	out := map[string]Item{}
	for _, it := range store.ForRecord(rec.ID) {
		if !it.Live() {
			continue
		}
		m, err := store.OpenMeta(&it)
		if err != nil {
			f.tb.Fatal(err)
		}
		text, err := store.Text(&it)
		if err != nil {
			f.tb.Fatal(err)
		}
		if _, dup := out[m.ProviderID]; dup {
			f.tb.Fatalf("provider id %q stored twice", m.ProviderID)
		}
		out[m.ProviderID] = Item{ID: it.ID, ProviderID: m.ProviderID, Title: m.Title, From: m.From, Path: m.Path, Text: text, Date: it.Date, Size: it.Size}
	}
	return out
}

// Count returns how many live items the record has, opening none.
func (f *Fixture) Count(rec records.Record) int {
	n := 0
	for _, it := range f.Syncer.Items().ForRecord(rec.ID) {
		if it.Live() {
			n++
		}
	}
	return n
}

// Answer is an HTTP answer read whole; Err is the error of a response
// cut short (a download aborted half way), with Body what came before.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error
}

// Get asks integrations/api's item routes (GET /v1/items/{id}, /original,
// /attachments/{index}) for path as user, over a real HTTP server, and
// reads the answer whole.
func (f *Fixture) Get(user, path string) Answer {
	f.tb.Helper()
	h, err := api.New(api.Config{Registry: f.reg, Records: f.Records, Items: f.Syncer.Items(), Sync: f.Syncer,
		UserID: func(*http.Request) (string, bool) { return user, true }})
	if err != nil {
		f.tb.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/items/{id}", h.GetItem())
	mux.Handle("GET /v1/items/{id}/original", h.GetOriginal())
	mux.Handle("GET /v1/items/{id}/attachments/{index}", h.GetAttachment())
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // an aborted download is what some tests want
	srv.Start()
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		f.tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: body, Err: err}
}

// Clock is a clock tests move by hand.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Indexer is a syncer.Indexer that keeps the items it was told are live.
type Indexer struct {
	mu      sync.Mutex
	Live    map[string]syncer.IndexedItem // by item id
	Removed int                           // items removed
}

// Index notes its as live.
func (x *Indexer) Index(_ string, its []syncer.IndexedItem) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, it := range its {
		x.Live[it.ID] = it
	}
}

// Remove forgets ids.
func (x *Indexer) Remove(_ string, ids []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, id := range ids {
		delete(x.Live, id)
		x.Removed++
	}
}

// RemoveRecord and RemoveUser are not used by the providers' tests.
func (x *Indexer) RemoveRecord(string, string) {}

// RemoveUser: see RemoveRecord.
func (x *Indexer) RemoveUser(string) {}

// Titles returns the titles of the items the index holds, by item id.
func (x *Indexer) Titles() map[string]string {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := map[string]string{}
	for id, it := range x.Live {
		out[id] = it.Title
	}
	return out
}

// Log returns what the syncer logged so far.
func (f *Fixture) Log() string {
	f.Index.mu.Lock()
	defer f.Index.mu.Unlock()
	return f.Logs.String()
}

// PlainText returns the files under DATA_DIR that hold one of needles in
// plain text, with the needle found.
func (f *Fixture) PlainText(needles ...string) []string {
	f.tb.Helper()
	var found []string
	err := filepath.WalkDir(f.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				found = append(found, path+": "+n)
			}
		}
		return nil
	})
	if err != nil {
		f.tb.Fatal(err)
	}
	return found
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
