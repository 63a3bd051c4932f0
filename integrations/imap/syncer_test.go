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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	isync "searchsvc/integrations/sync"
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
	indexed map[string]isync.IndexedItem // by item id
	removed []string                     // item ids, in order
}

func (x *indexer) Index(_ string, its []isync.IndexedItem) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, it := range its {
		x.indexed[it.ID] = it
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
	x.indexed, x.removed = map[string]isync.IndexedItem{}, nil
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
	syncer *isync.Syncer
	h      http.Handler
}

func newE2E(t *testing.T, srv *imaptest.Server, d imap.Dialer) *e2e {
	t.Helper()
	v, err := vault.NewVault(bytes.Repeat([]byte{7}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	f := &e2e{t: t, dir: t.TempDir(), srv: srv, def: d.Definition(), vault: v, ix: &indexer{indexed: map[string]isync.IndexedItem{}},
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
	f.syncer, err = isync.New(isync.Config{
		Records: f.recs, Registry: reg, DataDir: f.dir, PollInterval: poll, Workers: 1,
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
	h := api.New(api.Config{
		Registry: reg, Records: f.recs, Items: f.syncer.Items(), Sync: f.syncer,
		UserID: func(r *http.Request) (string, bool) {
			id := r.Header.Get("X-Test-User")
			return id, id != ""
		},
	})
	mux := http.NewServeMux()
	mux.Handle("POST /v1/user-integrations/{integration}/credentials", h.SubmitCredentials())
	mux.Handle("GET /v1/user-integrations/{id}", h.Get())
	f.h = httpx.Handler(mux, httpx.Config{})
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

func TestSyncerIMAP(t *testing.T) {
	srv := imaptest.New(t)
	srv.AddMailbox("Archive", `\Archive`)
	srv.AddMailbox("Junk", `\Junk`)
	srv.AddMailbox("Trash", `\Trash`)
	fill(srv, "INBOX", 0, 5)
	fill(srv, "Archive", 5, 8)
	fill(srv, "Junk", 8, 10)
	fill(srv, "Trash", 10, 11)
	f := newE2E(t, srv, imap.Dialer{Limits: imap.Limits{BatchMessages: 2}})
	rec := f.connect()
	srv.ResetStats()

	// First sync: every message of INBOX and Archive, none of Junk and
	// Trash, in batches of two, through the index.
	f.runOnce()
	live := f.live(rec.ID)
	if got, want := titles(live), wantTitles(0, 8); !slices.Equal(got, want) {
		t.Fatalf("items after the first sync: got %q, want %q", got, want)
	}
	wantStats(t, srv, 8, map[string]int{"LIST": 1, "EXAMINE": 4, "UID SEARCH": 2, "UID FETCH": 2 + 5})
	if n, removed := f.ix.take(); n != 8 || len(removed) != 0 {
		t.Errorf("index after the first sync: %d indexed, %q removed; want 8 and none", n, removed)
	}
	f.wantView(rec.ID, records.StatusConnected, 8, "", true)
	for title, it := range live {
		text, raw, err := f.syncer.Items().Content(&it)
		if err != nil || !strings.Contains(text, "body of "+title) || !bytes.HasPrefix(raw, []byte("From: Ana")) {
			t.Errorf("item %q content: got %q, %d bytes raw, %v", title, text, len(raw), err)
		}
	}

	// Second sync, nothing changed: one EXAMINE per folder, nothing else.
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 2})
	if n, removed := f.ix.take(); n != 0 || len(removed) != 0 {
		t.Errorf("index after a quiet sync: %d indexed, %q removed; want none", n, removed)
	}
	f.wantView(rec.ID, records.StatusConnected, 8, "", true)

	// New mail: only it is downloaded.
	fill(srv, "INBOX", 20, 23)
	f.next()
	wantStats(t, srv, 3, map[string]int{"LIST": 1, "EXAMINE": 3, "UID SEARCH": 1, "UID FETCH": 1 + 2})
	live = f.live(rec.ID)
	if got, want := titles(live), append(wantTitles(0, 8), wantTitles(20, 23)...); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("items after new mail: got %q", got)
	}
	if n, _ := f.ix.take(); n != 3 {
		t.Errorf("indexed after new mail: got %d, want 3", n)
	}

	// A new UIDVALIDITY: the same items, re-keyed, nothing downloaded,
	// nothing for the index (the items' ids stay).
	before := f.live(rec.ID)
	srv.Renumber("Archive")
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 2, "UID SEARCH": 1, "UID FETCH": 1})
	after := f.live(rec.ID)
	if !sameIDs(before, after) {
		t.Errorf("items after a renumbering: got %v, want the same ids as %v", after, before)
	}
	if n, removed := f.ix.take(); n != 0 || len(removed) != 0 {
		t.Errorf("index after a renumbering: %d indexed, %q removed; want none", n, removed)
	}
	for _, title := range wantTitles(5, 8) {
		it := after[title]
		m, _ := f.syncer.Items().OpenMeta(&it)
		id, err := imap.ParseID(m.ProviderID)
		if err != nil || id.Folder != "Archive" || !slices.Contains(srv.UIDs("Archive"), id.UID) {
			t.Errorf("item %q after the renumbering: provider id %q, %v", title, m.ProviderID, err)
		}
	}
	// The next sync is quiet again: the state was stored.
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 2})

	// Expunged mail leaves the items, their files and the index.
	srv.Expunge("INBOX", srv.UIDs("INBOX")[1])
	gone := idsOf(after, "message 1")
	path := f.syncer.Items().Path(ptr(after["message 1"]))
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 2, "UID SEARCH": 1})
	if _, removed := f.ix.take(); !slices.Equal(removed, gone) {
		t.Errorf("removed from the index after an expunge: got %q, want %q", removed, gone)
	}
	if _, ok := f.live(rec.ID)["message 1"]; ok {
		t.Error("an expunged message is still a live item")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("content file of an expunged message: %v, want it removed", err)
	}

	// A folder deleted on the server: its items go.
	gone = idsOf(after, wantTitles(5, 8)...)
	srv.DeleteMailbox("Archive")
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 1})
	if _, removed := f.ix.take(); !slices.Equal(removed, gone) {
		t.Errorf("removed from the index after a folder's deletion: got %q, want %q", removed, gone)
	}
	want := slices.Sorted(slices.Values(append([]string{"message 0", "message 2", "message 3", "message 4"}, wantTitles(20, 23)...)))
	if got := titles(f.live(rec.ID)); !slices.Equal(got, want) {
		t.Errorf("items after a folder's deletion: got %q, want %q", got, want)
	}
	f.wantView(rec.ID, records.StatusConnected, 11, "", true)

	assertNothingPlain(t, f.dir, "ana@example.com", "bo@example.com", "body of message", "Subject: message",
		"message 2", imaptest.Password, imaptest.Username, "Archive", "UIDVALIDITY")
}

func ptr[T any](v T) *T { return &v }

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

// stopAfter is an IMAP instance that stops the Syncer (cancels its Run)
// once it has run k fetchMessages tasks: a restart between two batches.
type stopAfter struct {
	integrations.Integration
	n    *atomic.Int32
	k    int32
	stop context.CancelFunc
}

func (s stopAfter) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	res, err := s.Integration.RunTask(ctx, task)
	if task.Type == imap.TaskFetchMessages && s.n.Add(1) == s.k {
		s.stop()
	}
	return res, err
}

func TestSyncerIMAPResumesAfterRestart(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 23)
	d := imap.Dialer{Limits: imap.Limits{BatchMessages: 5}}
	f := newE2E(t, srv, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopping := d.Definition()
	stopping.New = func(env integrations.Env) (integrations.Integration, error) {
		in, err := d.Definition().New(env)
		return stopAfter{Integration: in, n: new(atomic.Int32), k: 2, stop: cancel}, err
	}
	f.reopen(stopping)
	rec := f.connect()
	srv.ResetStats()

	// Stopped after two batches of five: they are stored, the three
	// batches left wait in the task queue.
	if err := f.syncer.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wantStats(t, srv, 10, map[string]int{"LIST": 1, "EXAMINE": 1, "UID SEARCH": 1, "UID FETCH": 1 + 2})
	if got, want := titles(f.live(rec.ID)), wantTitles(0, 10); !slices.Equal(got, want) {
		t.Fatalf("items after the stop: got %q, want %q", got, want)
	}
	if n := f.syncer.Pending(rec.ID); n != 4 {
		t.Errorf("tasks left after the stop: got %d, want 4 (three batches and folderDone)", n)
	}
	f.wantView(rec.ID, records.StatusConnected, 10, "", false)
	if got := f.view(rec.ID)["pendingTasks"]; got != float64(4) {
		t.Errorf("pendingTasks shown: got %v, want 4", got)
	}

	// A new Syncer on the same store downloads the rest, and only it: no
	// new listing, no message twice.
	f.reopen(d.Definition())
	f.runOnce()
	wantStats(t, srv, 13, map[string]int{"EXAMINE": 1, "UID FETCH": 3})
	if got, want := titles(f.live(rec.ID)), wantTitles(0, 23); !slices.Equal(got, want) {
		t.Errorf("items after the restart: got %q, want %q", got, want)
	}
	if n := f.syncer.Pending(rec.ID); n != 0 {
		t.Errorf("tasks left after the restart: got %d, want 0", n)
	}
	f.wantView(rec.ID, records.StatusConnected, 23, "", true)
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 1})
}

// TestSyncerIMAPFailures: a server too slow, or one that hangs up in the
// middle of a message, fails the task with a clear lastError; the task
// is retried after its backoff and the sync then completes.
func TestSyncerIMAPFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		breakIt func(*imaptest.Server)
		mend    func(*imaptest.Server)
		message string
	}{
		{"stalled fetch", func(s *imaptest.Server) { s.Stall("UID FETCH") }, func(s *imaptest.Server) { s.Stall("") },
			"the IMAP server did not answer in time; will retry"},
		{"slow lines", func(s *imaptest.Server) { s.SetDelay(time.Second) }, func(s *imaptest.Server) { s.SetDelay(0) },
			"the IMAP server did not answer in time; will retry"},
		{"cut in a message", func(s *imaptest.Server) { s.CutBodies(40) }, func(s *imaptest.Server) { s.CutBodies(0) },
			"the IMAP server closed the connection in the middle of an answer; will retry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := imaptest.New(t)
			fill(srv, "INBOX", 0, 4)
			f := newE2E(t, srv, imap.Dialer{ReadTimeout: 200 * time.Millisecond, Limits: imap.Limits{BatchMessages: 2}})
			rec := f.connect()
			tc.breakIt(srv)
			f.runOnce()
			f.wantView(rec.ID, records.StatusError, 0, tc.message, false)
			if n := f.syncer.Pending(rec.ID); n == 0 {
				t.Fatal("no task left after a failure, want the failed one kept for a retry")
			}
			if got := f.syncer.Outcomes()["retried"]; got != 1 {
				t.Errorf("tasks retried: got %d, want 1", got)
			}
			// Not before its backoff.
			f.runOnce()
			if got := f.syncer.Outcomes()["retried"]; got != 1 {
				t.Errorf("tasks retried before the backoff ended: got %d, want still 1", got)
			}
			tc.mend(srv)
			f.clock.Advance(time.Minute)
			f.runOnce()
			if got, want := titles(f.live(rec.ID)), wantTitles(0, 4); !slices.Equal(got, want) {
				t.Errorf("items after the retry: got %q, want %q", got, want)
			}
			f.wantView(rec.ID, records.StatusConnected, 4, "", true)
		})
	}
}

// TestSyncerIMAPWrongPassword: the form refuses a wrong password naming
// the field; a password changed on the server after connecting puts the
// record in needs_reauth, with its tasks dropped.
func TestSyncerIMAPWrongPassword(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 2)
	f := newE2E(t, srv, imap.Dialer{})
	status, body := f.do("POST", "/v1/user-integrations/imap/credentials", f.form("wrong password"))
	details, _ := body["error"].(map[string]any)["details"].([]any)
	if status != http.StatusBadRequest || len(details) != 1 ||
		fmt.Sprint(details[0]) != "map[field:fields.password message:the server refused the username or password ([AUTHENTICATIONFAILED] Authentication failed.)]" {
		t.Errorf("form with a wrong password: got %d %v", status, body)
	}
	if _, ok := f.recs.Find("u1", imap.Domain); ok {
		t.Error("a record was stored for a refused password")
	}

	// Connected, then the password or the certificate changed on the
	// server.
	for _, tc := range []struct {
		name, password, certificate, message string
	}{
		{"password", "changed on the server", srv.CAPEM(),
			"the IMAP server refused the username or password; connect it again with the right ones"},
		{"certificate", imaptest.Password, "",
			"the IMAP server's TLS certificate is no longer the one trusted (it changed, or expired); " +
				"connect again, with its new CA certificate or fingerprint in the certificate field if it is on your network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fields := srv.Fields()
			fields["password"], fields["certificate"] = tc.password, tc.certificate
			user := "u-" + tc.name
			rec, err := f.recs.Connect(user, imap.Domain, integrations.Credentials{Fields: fields})
			if err != nil {
				t.Fatal(err)
			}
			f.runOnce()
			got, _ := f.recs.ByID(rec.ID)
			if got.Status != records.StatusNeedsReauth || got.LastError != tc.message || got.ItemsSynced != 0 {
				t.Errorf("record: got %s, %q, %d items; want %s, %q, 0", got.Status, got.LastError, got.ItemsSynced,
					records.StatusNeedsReauth, tc.message)
			}
			if n := f.syncer.Pending(rec.ID); n != 0 {
				t.Errorf("tasks left: got %d, want 0", n)
			}
		})
	}
	assertNothingPlain(t, f.dir, "changed on the server", imaptest.Username)
}
