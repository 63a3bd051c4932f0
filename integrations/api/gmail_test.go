package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// The syncer with the real Gmail integration against gmailtest's fake
// Gmail API: the end of the chain main wires.

type gmailSync struct {
	dir     string
	gm      *gmailtest.Server
	vault   *vault.Vault
	reg     *integrations.Registry
	getenv  func(string) string
	sync    storage.SyncMode
	st      *storage.Store
	records *records.Records
	syncer  *syncer.Syncer
	// now is the syncer's clock: the wall clock plus skip.
	skip  atomic.Int64
	index *removals
}

// removals is an Indexer that notes the items removed, by id.
type removals struct {
	mu      sync.Mutex
	indexed int
	removed []string
}

func (x *removals) Index(_ string, its []syncer.IndexedItem) {
	x.mu.Lock()
	x.indexed += len(its)
	x.mu.Unlock()
}

func (x *removals) Remove(_ string, ids []string) {
	x.mu.Lock()
	x.removed = append(x.removed, ids...)
	x.mu.Unlock()
}
func (x *removals) RemoveRecord(string, string) {}
func (x *removals) RemoveUser(string)           {}

func (x *removals) got() (int, []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.indexed, slices.Clone(x.removed)
}

func (g *gmailSync) now() time.Time { return time.Now().Add(time.Duration(g.skip.Load())) }

// advance moves the syncer's clock forward by d.
func (g *gmailSync) advance(d time.Duration) { g.skip.Add(int64(d)) }

func newGmailSync(tb testing.TB, opts gmailtest.Options, mode storage.SyncMode) *gmailSync {
	tb.Helper()
	g := &gmailSync{dir: tb.TempDir(), gm: gmailtest.New(tb, opts), sync: mode, index: &removals{}}
	vars := map[string]string{
		"GMAIL_OAUTH_CLIENT_ID":     "gmailtest-client",
		"GMAIL_OAUTH_CLIENT_SECRET": "gmailtest-secret",
		"GMAIL_API_BASE_URL":        g.gm.URL,
	}
	g.getenv = func(k string) string { return vars[k] }
	var err error
	if g.vault, err = vault.New(bytes.Repeat([]byte{6}, vault.KeySize)); err != nil {
		tb.Fatal(err)
	}
	if g.reg, err = integrations.NewRegistry(gmail.Definition()); err != nil {
		tb.Fatal(err)
	}
	g.open(tb)
	return g
}

func (g *gmailSync) open(tb testing.TB) {
	tb.Helper()
	g.st = storage.New(filepath.Join(g.dir, "main"), storage.Options{Sync: g.sync})
	g.records = records.New(g.st, g.vault, nil)
	s, err := syncer.New(syncer.Config{
		Records: g.records, Items: items.New(g.st, g.vault, filepath.Join(g.dir, "items")), Tasks: syncer.NewTasks(g.st, g.vault),
		Registry: g.reg, Getenv: g.getenv,
		Client: g.gm.Client(), PollInterval: time.Nanosecond, Now: g.now, Indexer: g.index,
	})
	if err != nil {
		tb.Fatal(err)
	}
	g.syncer = s
	if err := g.st.Open(); err != nil {
		tb.Fatal(err)
	}
	st := g.st
	tb.Cleanup(func() { st.Close() })
}

func TestSyncGmailResumesAndSyncsOnce(t *testing.T) {
	const total = 250
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	lists := 0
	g := newGmailSync(t, gmailtest.Options{Messages: total, Fault: func(r *http.Request) (int, string) {
		if r.URL.Path == "/gmail/v1/users/me/messages" {
			mu.Lock()
			if lists++; lists == 2 {
				cancel() // stop the service while the second page is listed
			}
			mu.Unlock()
		}
		return 0, ""
	}}, storage.SyncNone)
	rec, err := g.records.Connect("u1", gmail.Domain, g.gm.Credentials())
	if err != nil {
		t.Fatal(err)
	}
	if err := g.syncer.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if g.syncer.Pending(rec.ID) == 0 {
		t.Fatal("nothing left to do after the interrupted run")
	}
	// A page's downloads are queued as one task, and a listing of the
	// next page behind it: the sync shows its downloads, counted against
	// every message listed.
	cur, _ := g.records.ByID(rec.ID)
	if a := g.syncer.Activity(rec.ID); a.State != syncer.ActivityDownloading || a.ItemsLeft != gmail.PageSize || a.Pending != 2 ||
		int64(a.ItemsTotal) != int64(a.ItemsLeft)+cur.ItemsSynced {
		t.Errorf("activity of the interrupted sync: got %+v with %d synced, want downloading, with the downloads queued left of all listed", a, cur.ItemsSynced)
	}

	if err := g.st.Close(); err != nil {
		t.Fatal(err)
	}
	g.open(t)
	if err := g.syncer.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	listed, gets := g.gm.Requests()
	if gets != total || listed != 3 {
		t.Errorf("requests: got %d lists and %d gets, want 3 pages (none twice) and %d messages (each once)", listed, gets, total)
	}
	got, _ := g.records.ByID(rec.ID)
	if got.Status != records.StatusConnected || got.ItemsSynced != total || got.LastSyncAt == nil {
		t.Fatalf("record: status %s (%q), itemsSynced %d, lastSyncAt %v", got.Status, got.LastError, got.ItemsSynced, got.LastSyncAt)
	}

	// A second run reads the history: one request, and downloads only
	// the 2 new messages.
	g.gm.Add(2)
	if err := g.syncer.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := g.gm.Counts(); c.Lists != listed || c.Gets != gets+2 || c.Histories != 1 {
		t.Errorf("second run: got %+v, want 1 history request, no listing and the 2 new messages", c)
	}

	// The newest item, over HTTP, with its text; nothing of it in plain
	// text on disk.
	h, err := api.New(api.Config{Registry: g.reg, Records: g.records, Items: g.syncer.Items(), Sync: g.syncer,
		UserID: func(*http.Request) (string, bool) { return "u1", true }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/items", h.ListItems())
	mux.Handle("GET /v1/items/{id}", h.GetItem())
	srv := newStack(t, mux, httpx.Config{})
	var list struct {
		Results []items.View `json:"results"`
	}
	getJSON(t, srv, "/v1/items?limit=1", &list)
	newest := total + 2
	if len(list.Results) != 1 || list.Results[0].Title != gmailtest.Subject(newest) || list.Results[0].ProviderID != gmailtest.ID(newest) {
		t.Fatalf("newest item: got %+v, want message %d", list.Results, newest)
	}
	var one struct {
		Result items.Detail `json:"result"`
	}
	getJSON(t, srv, "/v1/items/"+list.Results[0].ID, &one)
	if one.Result.Text == "" || !bytes.Contains(gmailtest.Message(newest), []byte(firstLine(one.Result.Text))) {
		t.Errorf("item text: got %q", one.Result.Text)
	}
	filepath.WalkDir(g.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		for _, s := range []string{gmailtest.Subject(newest), gmailtest.Subject(1), gmailtest.ID(7), firstLine(one.Result.Text), g.gm.AccessToken} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q in plain text", path, s)
			}
		}
		return nil
	})
}

func firstLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i > 0 {
		return s[:i]
	}
	return s
}

func getJSON(t *testing.T, h http.Handler, path string, into any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), into); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSync5000Gmail syncs 5,000 messages (gmailtest's, about 1 KB
// each) with the real Gmail integration over HTTP, two workers, fsync on,
// and reports the time and the peak resident memory (VmHWM, reset first;
// -1 where /proc is missing).
func BenchmarkSync5000Gmail(b *testing.B) {
	const total = 5000
	for b.Loop() {
		b.StopTimer()
		g := newGmailSync(b, gmailtest.Options{Messages: total}, storage.SyncFsync)
		rec, err := g.records.Connect("u1", gmail.Domain, g.gm.Credentials())
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		debug.FreeOSMemory()
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		b.StartTimer()

		start := time.Now()
		if err := g.syncer.RunOnce(context.Background()); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)

		b.StopTimer()
		peak := vmHWM()
		got, _ := g.records.ByID(rec.ID)
		if got.ItemsSynced != total {
			b.Fatalf("synced %d items (%s %q), want %d", got.ItemsSynced, got.Status, got.LastError, total)
		}
		b.ReportMetric(elapsed.Seconds(), "s/sync")
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
		g.st.Close()
		b.StartTimer()
	}
}

// vmHWM returns the process's peak resident memory in bytes, or -1.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			var kb int64
			for _, c := range bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB"))) {
				kb = kb*10 + int64(c-'0')
			}
			return kb << 10
		}
	}
	return -1
}
