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
	"sync"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	isync "searchsvc/integrations/sync"
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
	syncer  *isync.Syncer
}

func newGmailSync(tb testing.TB, opts gmailtest.Options, mode storage.SyncMode) *gmailSync {
	tb.Helper()
	g := &gmailSync{dir: tb.TempDir(), gm: gmailtest.New(tb, opts), sync: mode}
	vars := map[string]string{
		"GMAIL_OAUTH_CLIENT_ID":     "gmailtest-client",
		"GMAIL_OAUTH_CLIENT_SECRET": "gmailtest-secret",
		"GMAIL_API_BASE_URL":        g.gm.URL,
	}
	g.getenv = func(k string) string { return vars[k] }
	var err error
	if g.vault, err = vault.NewVault(bytes.Repeat([]byte{6}, vault.KeySize)); err != nil {
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
	s, err := isync.New(isync.Config{
		Records: g.records, Registry: g.reg, DataDir: g.dir, Getenv: g.getenv,
		Client: g.gm.Client(), PollInterval: time.Nanosecond,
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

	// A second run downloads only what is new: the first page holds the
	// 2 new messages, the second nothing new, and listing stops there.
	g.gm.Add(2)
	if err := g.syncer.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l, n := g.gm.Requests(); l != listed+2 || n != gets+2 {
		t.Errorf("second run: got %d lists and %d gets, want 2 and the 2 new messages", l-listed, n-gets)
	}

	// The newest item, over HTTP, with its text; nothing of it in plain
	// text on disk.
	h := api.New(api.Config{Registry: g.reg, Records: g.records, Items: g.syncer.Items(), Sync: g.syncer,
		UserID: func(*http.Request) (string, bool) { return "u1", true }})
	mux := http.NewServeMux()
	mux.Handle("GET /v1/items", h.ListItems())
	mux.Handle("GET /v1/items/{id}", h.GetItem())
	srv := httpx.Handler(mux, httpx.Config{})
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
