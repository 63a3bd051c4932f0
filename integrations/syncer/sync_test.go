package syncer

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/fakemail"
	"searchsvc/integrations/items"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/oauthtest"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
	"searchsvc/storage/storagetest"
)

// syncClock is a clock tests move by hand.
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

// syncLog is a log sink the syncer and the test share.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

const syncPoll = 15 * time.Minute

func testVault(t testing.TB, fill byte, previous ...[]byte) *vault.Vault {
	t.Helper()
	return testVaultOf(t, bytes.Repeat([]byte{fill}, vault.KeySize), previous...)
}

func testVaultOf(t testing.TB, current []byte, previous ...[]byte) *vault.Vault {
	t.Helper()
	v, err := vault.New(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testKey(t testing.TB) []byte {
	t.Helper()
	k := make([]byte, vault.KeySize)
	rand.Read(k)
	return k
}

// syncFixture is a syncer on a real store in a temporary DATA_DIR, with
// the fake mail provider behind a real fake OAuth server.
type syncFixture struct {
	t       *testing.T
	dir     string
	clock   *syncClock
	srv     *oauthtest.Server
	mail    *fakemail.Server
	env     map[string]string
	reg     *integrations.Registry
	client  *http.Client // the syncer's
	vault   *vault.Vault
	workers int
	logs    *syncLog
	fs      storage.FS // the store's file system; nil: the operating system's

	st      *storage.Store
	records *records.Records
	tasks   *Tasks
	syncer  *Syncer
}

func newSyncFixture(t *testing.T, workers int) *syncFixture {
	t.Helper()
	f := &syncFixture{
		t: t, dir: t.TempDir(), workers: workers, logs: &syncLog{},
		clock: &syncClock{t: time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)},
		vault: testVault(t, 9),
	}
	f.srv = oauthtest.New(t, oauthtest.Options{ClientID: fakemail.ClientID, ClientSecret: fakemail.ClientSecret, Body: true, Scope: "mail.read"})
	f.mail = fakemail.New(t, f.srv)
	f.env = fakemail.Env(f.srv)
	reg, err := integrations.NewRegistry(fakemail.OAuthDefinition(f.mail), fakemail.ManualDefinition(f.mail))
	if err != nil {
		t.Fatal(err)
	}
	f.reg = reg
	f.client = f.srv.Client()
	f.open()
	return f
}

// newLocalFixture is newSyncFixture with the fake mail provider served
// in-process and no OAuth server: nothing listens, so it works inside a
// testing/synctest bubble (the fake clock only moves when every goroutine
// of the bubble waits on it, and a listening socket never does). It has
// the static-token definition only.
func newLocalFixture(t *testing.T, workers int) *syncFixture {
	t.Helper()
	f := &syncFixture{
		t: t, dir: t.TempDir(), workers: workers, logs: &syncLog{},
		clock: &syncClock{t: time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)},
		vault: testVault(t, 9),
		mail:  fakemail.NewLocal(),
	}
	reg, err := integrations.NewRegistry(fakemail.ManualDefinition(f.mail))
	if err != nil {
		t.Fatal(err)
	}
	f.reg = reg
	f.client = f.mail.Client()
	f.open()
	return f
}

// open opens the store and a new syncer on the fixture's DATA_DIR.
func (f *syncFixture) open() {
	f.t.Helper()
	f.st = storage.New(filepath.Join(f.dir, "main"), storage.Options{Sync: storage.SyncNone, Now: f.clock.Now, FS: f.fs})
	f.records = records.New(f.st, f.vault, f.clock.Now)
	f.tasks = NewTasks(f.st, f.vault)
	s, err := New(Config{
		Records: f.records, Items: items.New(f.st, f.vault, filepath.Join(f.dir, "items")), Tasks: f.tasks, Registry: f.reg,
		Getenv: func(k string) string { return f.env[k] }, Client: f.client,
		PollInterval: syncPoll, Workers: f.workers, ShutdownGrace: 50 * time.Millisecond,
		Now: f.clock.Now, Rand: func(int64) int64 { return 0 },
		Logger: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
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

// reopen closes the store and opens it again with a new syncer, as a
// restart does.
func (f *syncFixture) reopen() {
	f.t.Helper()
	if err := f.st.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.open()
}

// connect authorizes user's box at the fake OAuth server and stores the
// record, as the OAuth callback does.
func (f *syncFixture) connect(user, box string) (records.Record, integrations.Credentials) {
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
	return rec, creds
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

func (f *syncFixture) record(id string) records.Record {
	f.t.Helper()
	var rec records.Record
	ok := false
	f.records.ScanAll(func(r records.Record) bool {
		if r.ID == id {
			rec, ok = r, true
		}
		return !ok
	})
	if !ok {
		f.t.Fatalf("record %s not found", id)
	}
	return rec
}

// liveItems returns the record's live items.
func (f *syncFixture) liveItems(recordID string) []items.ItemRecord {
	var out []items.ItemRecord
	for _, it := range f.syncer.items.ForRecord(recordID) {
		if it.Live() {
			out = append(out, it)
		}
	}
	return out
}

func (f *syncFixture) wantStatus(rec records.Record, status, lastErrorPart string) records.Record {
	f.t.Helper()
	got := f.record(rec.ID)
	if got.Status != status {
		f.t.Fatalf("status: got %q (lastError %q), want %q\nlog:\n%s", got.Status, got.LastError, status, f.logs)
	}
	if lastErrorPart == "" && got.LastError != "" || !strings.Contains(got.LastError, lastErrorPart) {
		f.t.Fatalf("lastError: got %q, want it to contain %q", got.LastError, lastErrorPart)
	}
	return got
}

// assertNothingPlain fails if any file under the fixture's DATA_DIR holds
// one of secrets in plain text.
func (f *syncFixture) assertNothingPlain(secrets ...string) {
	f.t.Helper()
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
				f.t.Errorf("%s holds %q in plain text", path, s)
			}
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

func TestSyncStoresItemsSealedAndOnce(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("alice", 25, f.clock.Now().Add(-48*time.Hour))
	rec, creds := f.connect("u1", "alice")

	f.runOnce()
	got := f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 25 || got.LastSyncAt == nil || !got.LastSyncAt.Equal(f.clock.Now()) {
		t.Errorf("record: itemsSynced %d lastSyncAt %v, want 25 and %v", got.ItemsSynced, got.LastSyncAt, f.clock.Now())
	}
	_, downloads, most := f.mail.Counts()
	if downloads != 25 || most != 1 {
		t.Errorf("downloads: got %d (at most %d of one), want 25, once each", downloads, most)
	}
	if n := f.syncer.Pending(rec.ID); n != 0 {
		t.Errorf("pending tasks: got %d, want 0", n)
	}
	items := f.liveItems(rec.ID)
	if len(items) != 25 {
		t.Fatalf("items: got %d, want 25", len(items))
	}
	msgs := f.mail.Boxes["alice"]
	for _, it := range items {
		view, err := f.syncer.items.View(&it)
		if err != nil {
			t.Fatal(err)
		}
		var msg fakemail.Msg
		for _, m := range msgs {
			if m.ID == view.ProviderID {
				msg = m
			}
		}
		if view.Title != msg.Subject || view.From != msg.From || !it.Date.Equal(msg.Date) || it.UserID != "u1" {
			t.Errorf("item %s: got %+v, want the message %s", it.ID, view, msg.ID)
		}
		text, err := f.syncer.items.Text(&it)
		if err != nil || text != msg.Body {
			t.Errorf("item %s content: got %q, %v", it.ID, text, err)
		}
		st, err := os.Stat(f.syncer.items.Path(&it))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("content file mode: got %v, %v, want 0600", st.Mode(), err)
		}
	}
	if st, err := os.Stat(f.syncer.items.RecordDir(rec.ID)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("content directory mode: got %v, %v, want 0700", st.Mode(), err)
	}

	// Nothing personal and no secret in plain text anywhere under DATA_DIR.
	var secrets []string
	for _, m := range msgs {
		secrets = append(secrets, m.Subject, m.From, m.Body[:30], m.ID)
	}
	stored, err := f.records.Credentials(f.record(rec.ID))
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, creds.AccessToken, creds.RefreshToken, stored.AccessToken, fakemail.ClientSecret)
	f.assertNothingPlain(secrets...)

	// Within the poll interval nothing is scheduled.
	requests, _, _ := f.mail.Counts()
	f.clock.Advance(syncPoll - time.Second)
	f.runOnce()
	if r2, _, _ := f.mail.Counts(); r2 != requests {
		t.Errorf("requests before the poll interval: got %d more, want none", r2-requests)
	}

	// A second run lists again and downloads nothing new.
	f.clock.Advance(time.Second)
	f.runOnce()
	_, downloads, _ = f.mail.Counts()
	if downloads != 25 {
		t.Errorf("downloads after a second run: got %d, want still 25", downloads)
	}
	got = f.wantStatus(rec, records.StatusConnected, "")
	// An idle poll's lastSyncAt is kept in memory (idle.go).
	if got.ItemsSynced != 25 || !f.syncer.LastSyncAt(got).Equal(f.clock.Now()) || len(f.liveItems(rec.ID)) != 25 {
		t.Errorf("after a second run: itemsSynced %d, lastSyncAt %v, items %d; want 25, now, 25",
			got.ItemsSynced, got.LastSyncAt, len(f.liveItems(rec.ID)))
	}
	if lists := f.mail.Listed(); len(lists) != 6 {
		t.Errorf("list requests: got %v, want 3 pages twice", lists)
	}
}

func TestSyncResumesAfterRestart(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("bob", 35, f.clock.Now().Add(-time.Hour))
	rec, _ := f.connect("u1", "bob")

	// Stop the service right after the second page was listed.
	ctx, cancel := context.WithCancel(context.Background())
	f.mail.OnList = func(_, token string) {
		if token == "p10" {
			cancel()
		}
	}
	if err := f.syncer.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	f.mail.OnList = nil
	if n := f.syncer.Pending(rec.ID); n == 0 {
		t.Fatal("no task pending after the interrupted run")
	}
	before := len(f.liveItems(rec.ID))
	if before == 0 || before >= 35 {
		t.Fatalf("items after the interrupted run: got %d, want some of 35", before)
	}

	f.reopen()
	f.runOnce()
	_, downloads, most := f.mail.Counts()
	if downloads != 35 || most != 1 {
		t.Errorf("downloads: got %d (at most %d of one message), want 35, each once", downloads, most)
	}
	want := []string{"bob:", "bob:p10", "bob:p20", "bob:p30"}
	if got := f.mail.Listed(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pages listed: got %v, want %v (resumed from the saved pageToken)", got, want)
	}
	got := f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 35 || len(f.liveItems(rec.ID)) != 35 || got.LastSyncAt == nil {
		t.Errorf("after the restart: itemsSynced %d, items %d, lastSyncAt %v; want 35, 35, set",
			got.ItemsSynced, len(f.liveItems(rec.ID)), got.LastSyncAt)
	}
}

func TestSyncRefreshesExpiringToken(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("carol", 3, f.clock.Now())
	rec, creds := f.connect("u1", "carol")
	f.runOnce()
	tokenRequests := f.srv.TokenRequests()

	// The access token (3599 s) expires within the refresh margin.
	f.clock.Advance(3599*time.Second - 30*time.Second)
	f.mail.Fill("carol", 2, f.clock.Now())
	f.runOnce()
	if got := f.srv.TokenRequests() - tokenRequests; got != 1 {
		t.Fatalf("token requests: got %d, want 1 refresh", got)
	}
	got := f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 5 {
		t.Errorf("itemsSynced: got %d, want 5", got.ItemsSynced)
	}
	fresh, err := f.records.Credentials(got)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.AccessToken == creds.AccessToken || !f.srv.Live(fresh.AccessToken) || fresh.RefreshToken != creds.RefreshToken {
		t.Errorf("stored credentials were not re-sealed with the refreshed token")
	}
	if !fresh.ExpiresAt.After(f.clock.Now().Add(time.Hour - time.Minute)) {
		t.Errorf("refreshed expiry: got %v", fresh.ExpiresAt)
	}
	f.assertNothingPlain(fresh.AccessToken, creds.AccessToken, creds.RefreshToken)

	// The refreshed token is used as it is until it nears its own expiry.
	f.clock.Advance(syncPoll)
	f.runOnce()
	if got := f.srv.TokenRequests() - tokenRequests; got != 1 {
		t.Errorf("token requests after another run: got %d, want still 1", got)
	}
}

func TestSyncRevokedRefreshToken(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("dave", 3, f.clock.Now())
	rec, creds := f.connect("u1", "dave")
	f.runOnce()

	f.srv.Kill(creds.RefreshToken)
	f.clock.Advance(2 * time.Hour) // the access token expired too
	f.runOnce()
	got := f.wantStatus(rec, records.StatusNeedsReauth, "Connect it again")
	if o := f.syncer.Outcomes(); o["reauth"] != 1 {
		t.Errorf("outcomes: got %v, want one reauth", o)
	}
	if runs := f.syncer.RunsByIntegration()[rec.Integration]; runs["reauth"] != 1 {
		t.Errorf("runs: got %v, want one reauth", runs)
	}
	if strings.Contains(got.LastError, creds.RefreshToken) {
		t.Errorf("lastError holds the refresh token")
	}
	if n := f.syncer.Pending(rec.ID); n != 0 {
		t.Errorf("pending tasks: got %d, want 0", n)
	}

	// No more scheduling: no token request, no API call, no task.
	tokenRequests, _ := f.srv.TokenRequests(), 0
	requests, _, _ := f.mail.Counts()
	f.clock.Advance(3 * syncPoll)
	f.runOnce()
	if f.srv.TokenRequests() != tokenRequests || f.syncer.Pending(rec.ID) != 0 {
		t.Errorf("a needs_reauth record was scheduled again")
	}
	if r, _, _ := f.mail.Counts(); r != requests {
		t.Errorf("API requests for a needs_reauth record: got %d more", r-requests)
	}
	if err := f.syncer.SyncNow(rec.UserID, rec.ID); !errors.Is(err, ErrNeedsReauth) {
		t.Errorf("SyncNow: got %v, want ErrNeedsReauth", err)
	}

	// Reconnecting updates the same record, which syncs again.
	f.mail.Fill("dave", 2, f.clock.Now())
	again, _ := f.connect("u1", "dave")
	if again.ID != rec.ID {
		t.Fatalf("reconnect made record %s, want the same %s", again.ID, rec.ID)
	}
	f.syncer.Connected(again)
	f.runOnce()
	got = f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 5 {
		t.Errorf("itemsSynced after reconnecting: got %d, want 5", got.ItemsSynced)
	}
}

func TestSyncRefusedAccessTokenIsRefreshedOnce(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("erin", 4, f.clock.Now())
	rec, creds := f.connect("u1", "erin")

	// The provider refuses a token that has not expired: refresh, retry.
	f.mail.Reject[creds.AccessToken] = true
	f.runOnce()
	if got := f.srv.TokenRequests(); got != 2 { // the exchange and one refresh
		t.Errorf("token requests: got %d, want the exchange and 1 refresh", got)
	}
	got := f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 4 {
		t.Errorf("itemsSynced: got %d, want 4", got.ItemsSynced)
	}

	// Refused again and the refresh token revoked: needs_reauth.
	fresh, _ := f.records.Credentials(got)
	f.mail.Mu.Lock()
	f.mail.Reject[fresh.AccessToken] = true
	f.mail.Mu.Unlock()
	f.srv.Kill(creds.RefreshToken)
	f.clock.Advance(syncPoll)
	f.runOnce()
	f.wantStatus(rec, records.StatusNeedsReauth, "Connect it again")
}

func TestSyncRetryAfter(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("frank", 3, f.clock.Now())
	rec := f.connectManual("u1", "frank")
	f.mail.FailNext(fakemail.Fail{Kind: "get", Status: 429, RetryAfter: "120"})

	f.runOnce()
	f.wantStatus(rec, records.StatusError, "asked the sync to slow down")
	pending := f.syncer.Pending(rec.ID)
	if pending == 0 {
		t.Fatal("the failed task was not kept")
	}
	requests, _, _ := f.mail.Counts()

	f.clock.Advance(119 * time.Second)
	f.runOnce()
	if r, _, _ := f.mail.Counts(); r != requests {
		t.Errorf("requests before Retry-After: got %d more, want none", r-requests)
	}
	f.clock.Advance(time.Second)
	f.runOnce()
	got := f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 3 || f.syncer.Pending(rec.ID) != 0 || got.LastSyncAt == nil {
		t.Errorf("after the retry: itemsSynced %d, pending %d, lastSyncAt %v", got.ItemsSynced, f.syncer.Pending(rec.ID), got.LastSyncAt)
	}
	if o := f.syncer.Outcomes(); o["retried"] != 1 || o["ok"] == 0 || o["dropped"] != 0 || o["reauth"] != 0 {
		t.Errorf("outcomes: got %v, want one retried, some ok, none dropped or reauth", o)
	}
	// Two runs: the first ended on the task's error, the second ok.
	if runs := f.syncer.RunsByIntegration()[rec.Integration]; runs["error"] != 1 || runs["ok"] != 1 || runs["reauth"] != 0 || runs["interrupted"] != 0 {
		t.Errorf("runs: got %v, want one error, one ok", runs)
	}
	// The same counts, by integration: all of them the record's.
	all := f.syncer.Outcomes()
	by := f.syncer.OutcomesByIntegration()
	if len(by) < 2 {
		t.Fatalf("by integration: got %v, want every integration of the registry", by)
	}
	for domain, o := range by {
		for k, n := range o {
			want := int64(0)
			if domain == rec.Integration {
				want = all[k]
			}
			if n != want {
				t.Errorf("by integration: %s %s got %d, want %d", domain, k, n, want)
			}
		}
		if len(o) != 6 {
			t.Errorf("by integration: %s has %v, want the six outcomes", domain, o)
		}
	}
}

func TestSyncBackoff(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("gina", 2, f.clock.Now())
	rec := f.connectManual("u1", "gina")
	f.mail.FailNext(fakemail.Fail{Kind: "list", Status: 500}, fakemail.Fail{Kind: "list", Status: 503})

	// With the jitter at 0, the waits are half of 30 s, then half of 60 s.
	for i, wait := range []time.Duration{15 * time.Second, 30 * time.Second} {
		f.runOnce()
		f.wantStatus(rec, records.StatusError, "will try again by itself")
		tasks := f.syncer.recordTasks(rec.ID)
		if len(tasks) != 1 || tasks[0].Attempts != i+1 || !tasks[0].NotBefore.Equal(f.clock.Now().Add(wait)) {
			t.Fatalf("failure %d: got tasks %+v, want one with attempts %d, notBefore now+%v", i+1, tasks, i+1, wait)
		}
		requests, _, _ := f.mail.Counts()
		f.clock.Advance(wait - time.Second)
		f.runOnce()
		if r, _, _ := f.mail.Counts(); r != requests {
			t.Fatalf("failure %d: retried before the backoff", i+1)
		}
		f.clock.Advance(time.Second)
	}
	f.runOnce()
	got := f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 2 {
		t.Errorf("itemsSynced: got %d, want 2", got.ItemsSynced)
	}
}

func TestSyncRunsOneTaskPerRecordAtATime(t *testing.T) {
	f := newSyncFixture(t, 4)
	var recs []records.Record
	for i := range 3 {
		box := fmt.Sprintf("box%d", i)
		f.mail.Fill(box, 20, f.clock.Now())
		rec, _ := f.connect(fmt.Sprintf("u%d", i), box)
		recs = append(recs, rec)
	}
	// An expiring token makes every record refresh as it starts.
	f.clock.Advance(3590 * time.Second)
	f.runOnce()
	for i, rec := range recs {
		got := f.wantStatus(rec, records.StatusConnected, "")
		if got.ItemsSynced != 20 {
			t.Errorf("record %d: itemsSynced %d, want 20", i, got.ItemsSynced)
		}
	}
	for box, n := range f.mail.MaxActive {
		if n != 1 {
			t.Errorf("box %s: %d tasks ran at once, want 1", box, n)
		}
	}
}

func TestSyncTaskDroppedAfterAttempts(t *testing.T) {
	f := newSyncFixture(t, 1)
	f.mail.Fill("hal", 1, f.clock.Now())
	rec := f.connectManual("u1", "hal")
	for range maxAttempts {
		f.mail.FailNext(fakemail.Fail{Kind: "list", Status: 400})
	}
	for i := range maxAttempts {
		f.runOnce()
		f.wantStatus(rec, records.StatusError, "(it answered 400)")
		f.clock.Advance(backoffCap)
		if i < maxAttempts-1 && f.syncer.Pending(rec.ID) != 1 {
			t.Fatalf("attempt %d: task not kept", i+1)
		}
	}
	if n := f.syncer.Pending(rec.ID); n != 0 {
		t.Fatalf("pending after %d failures: got %d, want the task dropped", maxAttempts, n)
	}
	if !strings.Contains(f.logs.String(), "task dropped") {
		t.Error("dropping the task was not logged")
	}
	// The next scheduled start lists again and succeeds.
	f.clock.Advance(syncPoll)
	f.runOnce()
	if got := f.wantStatus(rec, records.StatusConnected, ""); got.ItemsSynced != 1 {
		t.Errorf("itemsSynced: got %d, want 1", got.ItemsSynced)
	}
}

// TestSyncShutdownParksInFlightTask runs in a testing/synctest bubble:
// the shutdown grace passes on the bubble's clock, and a Run that never
// returned would be reported as a deadlock at once, not after a guess at
// how long is long enough.
func TestSyncShutdownParksInFlightTask(t *testing.T) {
	synctest.Test(t, testSyncShutdownParksInFlightTask)
}

func testSyncShutdownParksInFlightTask(t *testing.T) {
	f := newLocalFixture(t, 2)
	f.mail.Fill("ivy", 3, f.clock.Now())
	rec := f.connectManual("u1", "ivy")
	ctx, cancel := context.WithCancel(context.Background())
	// The first download hangs until its request is cancelled, which only
	// the end of the shutdown grace does.
	var once sync.Once
	f.mail.OnGet = func(r *http.Request) {
		hang := false
		once.Do(func() { hang = true })
		if hang {
			cancel()
			<-r.Context().Done()
		}
	}
	done := make(chan error)
	go func() { done <- f.syncer.Run(ctx) }()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	f.mail.OnGet = nil
	got := f.record(rec.ID)
	if got.Status != records.StatusConnected || got.LastError != "" {
		t.Errorf("a parked task changed the record: status %q lastError %q", got.Status, got.LastError)
	}
	tasks := f.syncer.recordTasks(rec.ID)
	if len(tasks) == 0 || tasks[0].Type != integrations.TaskDownloadEmail || tasks[0].Attempts != 0 {
		t.Fatalf("parked tasks: got %+v, want the download, unattempted", tasks)
	}

	f.reopen()
	f.runOnce()
	got = f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 3 {
		t.Errorf("itemsSynced after restart: got %d, want 3", got.ItemsSynced)
	}
}

func TestSyncSweepsOrphans(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("jan", 2, f.clock.Now())
	rec := f.connectManual("u1", "jan")
	f.runOnce()
	dir := f.syncer.items.RecordDir(rec.ID)
	orphans := []string{
		filepath.Join(dir, "0c1e4a3a-5b8e-4b7e-9d57-0e4f3c1d2b6a"),
		filepath.Join(dir, ".tmp-"+"1c1e4a3a-5b8e-4b7e-9d57-0e4f3c1d2b6a"),
		filepath.Join(f.syncer.items.Dir(), "2c1e4a3a-5b8e-4b7e-9d57-0e4f3c1d2b6a", "x"),
	}
	for _, p := range orphans {
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("left over"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.reopen()
	f.runOnce()
	for _, p := range orphans {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("orphan %s: still there (%v)", p, err)
		}
	}
	for _, it := range f.liveItems(rec.ID) {
		if _, err := f.syncer.items.Text(&it); err != nil {
			t.Errorf("item %s: %v after the sweep", it.ID, err)
		}
	}
}

// TestSyncRunWakesOnSyncNow runs in a testing/synctest bubble, like
// TestSyncShutdownParksInFlightTask.
func TestSyncRunWakesOnSyncNow(t *testing.T) {
	synctest.Test(t, testSyncRunWakesOnSyncNow)
}

func testSyncRunWakesOnSyncNow(t *testing.T) {
	f := newLocalFixture(t, 2)
	f.mail.Fill("lou", 2, f.clock.Now())
	rec := f.connectManual("u1", "lou")
	f.runOnce() // synced: the next start is an interval away

	f.mail.Fill("lou", 3, f.clock.Now())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	gets := 0
	f.mail.OnGet = func(*http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if gets++; gets == 3 {
			cancel() // the last new message: stop once it is stored
		}
	}
	done := make(chan error)
	go func() { done <- f.syncer.Run(ctx) }()
	if err := f.syncer.SyncNow(rec.UserID, rec.ID); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 5 || f.syncer.Pending(rec.ID) != 0 {
		t.Errorf("after SyncNow: itemsSynced %d, pending %d; want 5, 0", got.ItemsSynced, f.syncer.Pending(rec.ID))
	}
}

// TestSyncPauseEndsWhenSpaceIsBack: a session that the store refused for
// want of space pauses its record, which the record's activity says with
// the reason; once the disk has room again the next pass syncs, without
// waiting out brokenRest. A person's Sync now ends any pause at once.
func TestSyncPauseEndsWhenSpaceIsBack(t *testing.T) {
	var full atomic.Bool
	f := &syncFixture{
		t: t, dir: t.TempDir(), workers: 1, logs: &syncLog{},
		clock: &syncClock{t: time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)},
		vault: testVault(t, 9),
		mail:  fakemail.NewLocal(),
		fs:    storagetest.FullFS{Full: &full},
	}
	reg, err := integrations.NewRegistry(fakemail.ManualDefinition(f.mail))
	if err != nil {
		t.Fatal(err)
	}
	f.reg, f.client = reg, f.mail.Client()
	f.open()
	f.mail.Fill("hal", 3, f.clock.Now())
	rec := f.connectManual("u1", "hal")
	if err := f.syncer.SyncNow(rec.UserID, rec.ID); err != nil { // the start task, queued while there is room
		t.Fatal(err)
	}
	full.Store(true)
	f.runOnce()
	a := f.syncer.Activity(rec.ID)
	if a.State != ActivityPaused || a.Paused != PausedDiskFull || !a.RetryAt.Equal(f.clock.Now().Add(brokenRest)) {
		t.Fatalf("on a full disk: activity %+v, want paused for disk_full until %v", a, f.clock.Now().Add(brokenRest))
	}
	// The scheduler looks again as often as the store probes for space.
	if _, next, _ := f.syncer.restingUntil(rec.ID, f.clock.Now()); !next.Equal(f.clock.Now().Add(spaceProbe)) {
		t.Errorf("next look at a record waiting for space: %v, want in %v", next, spaceProbe)
	}
	before, _, _ := f.mail.Counts()
	f.runOnce()
	if r, _, _ := f.mail.Counts(); r != before {
		t.Errorf("requests while paused on a full disk: %d, want none", r-before)
	}
	full.Store(false)
	f.clock.Advance(2 * time.Second) // the store probes for space at most once a second
	f.runOnce()
	if got := f.wantStatus(rec, records.StatusConnected, ""); got.ItemsSynced != 3 {
		t.Errorf("once space is back: itemsSynced %d, want 3", got.ItemsSynced)
	}
	if a := f.syncer.Activity(rec.ID); a.State != ActivityIdle || a.Paused != "" {
		t.Errorf("once synced: activity %+v, want idle", a)
	}

	// Item files that found the disk full say so, but leave the store no
	// state to ask: they rest brokenRest. So does any other reason,
	// unless a person asks.
	f.syncer.rest(rec.ID, &fs.PathError{Op: "write", Path: "item", Err: syscall.ENOSPC})
	if a := f.syncer.Activity(rec.ID); a.State != ActivityPaused || a.Paused != PausedDiskFull {
		t.Fatalf("after item files found the disk full: activity %+v, want paused, disk_full", a)
	}
	if _, next, _ := f.syncer.restingUntil(rec.ID, f.clock.Now()); !next.Equal(f.clock.Now().Add(brokenRest)) {
		t.Errorf("next look at a record whose item files found the disk full: %v, want in %v", next, brokenRest)
	}
	f.syncer.rest(rec.ID, errors.New("commit refused"))
	if a := f.syncer.Activity(rec.ID); a.State != ActivityPaused || a.Paused != PausedNotSaved {
		t.Fatalf("after a broken session: activity %+v, want paused, not_saved", a)
	}
	f.mail.Fill("hal", 1, f.clock.Now())
	if err := f.syncer.SyncNow(rec.UserID, rec.ID); err != nil {
		t.Fatal(err)
	}
	f.runOnce()
	if got := f.wantStatus(rec, records.StatusConnected, ""); got.ItemsSynced != 4 {
		t.Errorf("after Sync now: itemsSynced %d, want 4", got.ItemsSynced)
	}
}

// TestSyncRestsRecordAfterBrokenSession: a session whose progress could not
// be stored (item files or the store refused writes) rests its record for
// brokenRest instead of fetching and failing the same batch in a loop.
func TestSyncRestsRecordAfterBrokenSession(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("gina", 3, f.clock.Now())
	rec := f.connectManual("u1", "gina")
	f.syncer.rest(rec.ID, errors.New("commit refused")) // what a broken session does on its way out
	f.runOnce()
	if r, _, _ := f.mail.Counts(); r != 0 {
		t.Errorf("requests while resting: got %d, want none", r)
	}
	f.clock.Advance(brokenRest)
	f.runOnce()
	if got := f.wantStatus(rec, records.StatusConnected, ""); got.ItemsSynced != 3 {
		t.Errorf("after the rest: itemsSynced %d, want 3", got.ItemsSynced)
	}
}
