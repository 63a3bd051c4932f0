package imap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// The IMAP sync through the real task system: the manual form's handler
// connects the account, a real Syncer on a real store in a temporary
// DATA_DIR runs the tasks against imaptest, and a recording Indexer hears
// what the search index would.

// clock is a clock the test steps forward.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// indexer records what the Syncer tells the index.
type indexer struct {
	mu      sync.Mutex
	indexed map[string]syncer.IndexedItem // by item id
	removed []string                      // item ids, in order
	// onIndex, if set, runs after each Index call, on the sync's worker:
	// a test looks there at a sync between two of its commits.
	onIndex func()
}

func (x *indexer) Index(_ string, its []syncer.IndexedItem) {
	x.mu.Lock()
	for _, it := range its {
		x.indexed[it.ID] = it
	}
	on := x.onIndex
	x.mu.Unlock()
	if on != nil {
		on()
	}
}

func (x *indexer) Remove(_ string, ids []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removed = append(x.removed, ids...)
}

func (x *indexer) RemoveRecord(string, string) {}
func (x *indexer) RemoveUser(string)           {}

// take returns how many items were indexed and which were removed since
// the last take, and forgets them.
func (x *indexer) take() (int, []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	n, removed := len(x.indexed), x.removed
	x.indexed, x.removed = map[string]syncer.IndexedItem{}, nil
	slices.Sort(removed)
	return n, removed
}

const poll = 15 * time.Minute

// e2e is the Syncer and the record routes on a real store, with the IMAP
// definition whose dialer trusts nothing special: the form's certificate
// field carries the test server's CA.
type e2e struct {
	t      *testing.T
	dir    string
	clock  *clock
	srv    *imaptest.Server
	def    integrations.Definition
	vault  *vault.Vault
	ix     *indexer
	st     *storage.Store
	recs   *records.Records
	syncer *syncer.Syncer
	h      http.Handler
}

func newE2E(t *testing.T, srv *imaptest.Server, d imap.Dialer) *e2e {
	t.Helper()
	v, err := vault.New(bytes.Repeat([]byte{7}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	f := &e2e{t: t, dir: t.TempDir(), srv: srv, def: d.Definition(), vault: v, ix: &indexer{indexed: map[string]syncer.IndexedItem{}},
		clock: &clock{t: time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)}}
	f.open(f.def)
	return f
}

// open opens the store and a new Syncer on the fixture's DATA_DIR, with
// def as the IMAP definition.
func (f *e2e) open(def integrations.Definition) {
	f.t.Helper()
	reg, err := integrations.NewRegistry(def)
	if err != nil {
		f.t.Fatal(err)
	}
	f.st = storage.New(filepath.Join(f.dir, "main"), storage.Options{Sync: storage.SyncNone, Now: f.clock.Now})
	f.recs = records.New(f.st, f.vault, f.clock.Now)
	f.syncer, err = syncer.New(syncer.Config{
		Records: f.recs, Items: items.New(f.st, f.vault, filepath.Join(f.dir, "items")), Tasks: syncer.NewTasks(f.st, f.vault),
		Registry: reg, PollInterval: poll, Workers: 1,
		ShutdownGrace: time.Minute, Now: f.clock.Now, Rand: func(int64) int64 { return 0 }, Indexer: f.ix,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.st.Open(); err != nil {
		f.t.Fatal(err)
	}
	st := f.st
	f.t.Cleanup(func() { st.Close() })
	h, err := api.New(api.Config{
		Registry: reg, Records: f.recs, Items: f.syncer.Items(), Sync: f.syncer,
		UserID: func(r *http.Request) (string, bool) {
			id := r.Header.Get("X-Test-User")
			return id, id != ""
		},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/user-integrations/{integration}/credentials", h.SubmitCredentials())
	mux.Handle("GET /v1/user-integrations/{id}", h.Get())
	mux.Handle("GET /v1/items/{id}/original", h.GetOriginal())
	mux.Handle("GET /v1/items/{id}/attachments/{index}", h.GetAttachment())
	stack, err := httpx.Handler(mux, httpx.Config{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.h = stack
}

// reopen closes the store and opens it again with a new Syncer, as a
// restart does.
func (f *e2e) reopen(def integrations.Definition) {
	f.t.Helper()
	if err := f.st.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.open(def)
}

// do sends a request as user u1 and decodes the envelope.
func (f *e2e) do(method, path string, body any) (int, map[string]any) {
	f.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-User", "u1")
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		f.t.Fatalf("%s %s: body is not JSON: %q", method, path, rec.Body)
	}
	return rec.Code, out
}

// form is the manual form for the test server, trusting it through the
// certificate field, with password.
func (f *e2e) form(password string) map[string]any {
	port, _ := strconv.Atoi(f.srv.Port)
	return map[string]any{"fields": map[string]any{
		"host": f.srv.Host, "port": port, "username": imaptest.Username, "password": password,
		"tls": true, "certificate": f.srv.CAPEM(),
	}}
}

// connect submits the form and returns the new record.
func (f *e2e) connect() records.Record {
	f.t.Helper()
	status, body := f.do("POST", "/v1/user-integrations/imap/credentials", f.form(imaptest.Password))
	if status != http.StatusCreated {
		f.t.Fatalf("connect: got %d %v, want 201", status, body)
	}
	res, _ := body["result"].(map[string]any)
	rec, ok := f.recs.ByID(fmt.Sprint(res["id"]))
	if !ok || rec.Status != records.StatusConnected {
		f.t.Fatalf("connect: record %v, want a connected record", res)
	}
	return rec
}

func (f *e2e) runOnce() {
	f.t.Helper()
	if err := f.syncer.RunOnce(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

// next moves the clock past the poll interval and runs the scheduler.
func (f *e2e) next() {
	f.t.Helper()
	f.clock.Advance(poll + time.Second)
	f.runOnce()
}

// live returns the record's live items by title.
func (f *e2e) live(recordID string) map[string]items.ItemRecord {
	f.t.Helper()
	out := map[string]items.ItemRecord{}
	for _, it := range f.syncer.Items().ForRecord(recordID) {
		if !it.Live() {
			continue
		}
		m, err := f.syncer.Items().OpenMeta(&it)
		if err != nil {
			f.t.Fatal(err)
		}
		out[m.Title] = it
	}
	return out
}

// view returns the record as GET /v1/user-integrations/{id} shows it.
func (f *e2e) view(id string) map[string]any {
	f.t.Helper()
	status, body := f.do("GET", "/v1/user-integrations/"+id, nil)
	if status != http.StatusOK {
		f.t.Fatalf("GET record: got %d %v", status, body)
	}
	res, _ := body["result"].(map[string]any)
	return res
}

// wantView checks the record's status, itemsSynced, lastError, and that
// lastSyncAt is set (or not).
func (f *e2e) wantView(id, status string, itemsSynced int, lastError string, synced bool) {
	f.t.Helper()
	v := f.view(id)
	gotErr, _ := v["lastError"].(string)
	if v["status"] != status || v["itemsSynced"] != float64(itemsSynced) || gotErr != lastError {
		f.t.Errorf("record: got status %v, itemsSynced %v, lastError %q; want %s, %d, %q",
			v["status"], v["itemsSynced"], gotErr, status, itemsSynced, lastError)
	}
	if _, ok := v["lastSyncAt"]; ok != synced {
		f.t.Errorf("record lastSyncAt: got %v, want set %v", v["lastSyncAt"], synced)
	}
}

func titles(m map[string]items.ItemRecord) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func idsOf(m map[string]items.ItemRecord, ts ...string) []string {
	var out []string
	for _, t := range ts {
		out = append(out, m[t].ID)
	}
	slices.Sort(out)
	return out
}

// sessionCommands are those of logging in and out, once a sync.
var sessionCommands = []string{"CAPABILITY", "LOGIN", "AUTHENTICATE", "LOGOUT"}

// wantStats checks the server's counts since the last reset: commands by
// name (others must be absent) and whole messages sent.
func wantStats(t *testing.T, srv *imaptest.Server, bodies int, commands map[string]int) {
	t.Helper()
	st := srv.Stats()
	for k := range st.Commands {
		if _, ok := commands[k]; !ok && !slices.Contains(sessionCommands, k) {
			commands[k] = 0
		}
	}
	for k, want := range commands {
		if got := st.Commands[k]; got != want {
			t.Errorf("%s commands: got %d, want %d (all: %v)", k, got, want, st.Commands)
		}
	}
	if st.Commands["LOGIN"] != 1 || st.Commands["LOGOUT"] != 1 {
		t.Errorf("logins and logouts: got %d and %d, want one of each for the whole sync", st.Commands["LOGIN"], st.Commands["LOGOUT"])
	}
	if st.Bodies != bodies {
		t.Errorf("messages downloaded: got %d, want %d", st.Bodies, bodies)
	}
	srv.ResetStats()
}

// sameIDs reports whether a and b hold the same titles with the same
// item ids.
func sameIDs(a, b map[string]items.ItemRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k].ID != v.ID {
			return false
		}
	}
	return true
}

// assertNothingPlain fails if a file under dir holds one of the strings.
func assertNothingPlain(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q in plain text", path, s)
			}
		}
		return nil
	})
	if err != nil || files < 2 {
		t.Fatalf("walking DATA_DIR: %d files, %v", files, err)
	}
}
