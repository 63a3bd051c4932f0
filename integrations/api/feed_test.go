package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/feed"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// Many feeds for one user, through the real Syncer, store and routes.

const feedRSS = `<?xml version="1.0"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>Long reads</title>
  <item>
    <guid>long-1</guid>
    <title>The whole story</title>
    <link>https://reads.example/whole-story</link>
    <description>A teaser only.</description>
    <content:encoded><![CDATA[<p>The teaser, then <b>every word</b> of the story.</p>]]></content:encoded>
  </item>
</channel></rss>`

const feedAtom = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Notes</title><author><name>Ann</name></author>
  <entry><id>urn:note:1</id><title>Note one</title><link href="https://notes.example/1"/>
    <updated>2026-05-01T08:00:00Z</updated><summary>First note</summary></entry>
  <entry><id>urn:note:2</id><title>Note two</title><link href="https://notes.example/2"/>
    <updated>2026-05-02T08:00:00Z</updated><summary>Second note</summary></entry>
</feed>`

func TestFeedsManyForOneUser(t *testing.T) {
	var brokenStatus atomic.Int32
	brokenStatus.Store(http.StatusNotFound)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reads.xml":
			io.WriteString(w, feedRSS)
		case "/notes.xml":
			io.WriteString(w, feedAtom)
		case "/moved.xml":
			if s := int(brokenStatus.Load()); s != http.StatusOK {
				w.WriteHeader(s)
				return
			}
			io.WriteString(w, strings.ReplaceAll(feedAtom, "urn:note:", "urn:moved:"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	urls := []string{site.URL + "/reads.xml", site.URL + "/notes.xml", site.URL + "/moved.xml"}

	e := newFeedEnv(t, site, nil)
	clock, st, sy, h := e.clock, e.st, e.sy, e.h
	mux := http.NewServeMux()
	mux.Handle("POST /v1/user-integrations/{integration}/credentials", h.SubmitCredentials())
	mux.Handle("GET /v1/user-integrations/{id}", h.Get())
	mux.Handle("GET /v1/items", h.ListItems())
	mux.Handle("GET /v1/items/{id}", h.GetItem())
	srv := newStack(t, mux, httpx.Config{})

	// The form checks every feed, and names the one that fails.
	post := func(list string) (int, map[string]any) {
		body, _ := json.Marshal(map[string]any{"fields": map[string]string{"url": list}})
		w := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/user-integrations/feed/credentials", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(w, req)
		var out map[string]any
		json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out
	}
	code, out := post(strings.Join(urls, "\n"))
	if code != http.StatusBadRequest || !strings.Contains(string(mustJSON(out["error"])), urls[2]+": the server answered 404 Not Found") {
		t.Fatalf("form with a missing feed: got %d %v, want 400 naming %s", code, out, urls[2])
	}
	brokenStatus.Store(http.StatusOK)
	code, out = post(strings.Join(urls, "\n"))
	if code != http.StatusCreated {
		t.Fatalf("form: got %d %v, want 201", code, out)
	}
	id := out["result"].(map[string]any)["id"].(string)

	// The feed at the third address goes away before the first sync.
	brokenStatus.Store(http.StatusGone)
	if err := sy.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Result api.RecordView `json:"result"`
	}
	getJSON(t, srv, "/v1/user-integrations/"+id, &rec)
	r := rec.Result
	const sentence = "RSS or Atom feed: the feed number 3 of 3 could not be fetched: the server answered 410 Gone. The next sync tries again."
	if strings.Join(r.Sources, " ") != strings.Join(urls, " ") || r.Status != records.StatusError || r.LastError != sentence ||
		r.ItemsSynced != 3 || r.LastSyncAt == nil || r.Activity != syncer.ActivityIdle || r.PendingTasks != 0 || r.ItemsLeft != 0 {
		t.Errorf("record view: got %+v,\nwant the 3 sources, error %q, 3 items, a lastSyncAt, idle", r, sentence)
	}
	// Each feed says its own title and how its last fetch went.
	wantDetails := `[{"source":"` + urls[0] + `","title":"Long reads","status":"ok"},{"source":"` + urls[1] +
		`","title":"Notes","status":"ok"},{"source":"` + urls[2] + `","status":"the server answered 410 Gone"}]`
	if got := string(mustJSON(r.SourceDetails)); got != wantDetails {
		t.Errorf("sourceDetails: got %s, want %s", got, wantDetails)
	}

	// Items keep the full content and the link to the original.
	var list struct {
		Results []items.View `json:"results"`
	}
	getJSON(t, srv, "/v1/items?limit=50", &list)
	links := make(map[string]string)
	var storyID string
	for _, it := range list.Results {
		links[it.Title] = it.Link
		if it.Title == "The whole story" {
			storyID = it.ID
		}
	}
	if links["The whole story"] != "https://reads.example/whole-story" || links["Note two"] != "https://notes.example/2" || len(links) != 3 {
		t.Errorf("item links: got %v", links)
	}
	var one struct {
		Result items.Detail `json:"result"`
	}
	getJSON(t, srv, "/v1/items/"+storyID, &one)
	if one.Result.Text != "The teaser, then every word of the story." || one.Result.Link != "https://reads.example/whole-story" {
		t.Errorf("item: got text %q link %q, want the full content and the link", one.Result.Text, one.Result.Link)
	}

	// The feed comes back: the next sync stores its entries, nothing twice,
	// and the record is connected again.
	brokenStatus.Store(http.StatusOK)
	clock.Advance(16 * time.Minute)
	if err := sy.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.Result = api.RecordView{}
	getJSON(t, srv, "/v1/user-integrations/"+id, &rec)
	if r := rec.Result; r.Status != records.StatusConnected || r.LastError != "" || r.ItemsSynced != 5 {
		t.Errorf("after the feed came back: got %s %q, itemsSynced %d; want connected, 5", r.Status, r.LastError, r.ItemsSynced)
	}
	wantDetails = strings.Replace(wantDetails, `"status":"the server answered 410 Gone"`, `"title":"Notes","status":"ok"`, 1)
	if got := string(mustJSON(rec.Result.SourceDetails)); got != wantDetails {
		t.Errorf("sourceDetails after the feed came back: got %s, want %s", got, wantDetails)
	}

	// A poll that finds nothing new stores nothing; the view shows its
	// time as lastSyncAt all the same (docs/operations.md).
	clock.Advance(16 * time.Minute)
	commits := st.Stats().Commits
	if err := sy.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.Result = api.RecordView{}
	getJSON(t, srv, "/v1/user-integrations/"+id, &rec)
	if n, r := st.Stats().Commits-commits, rec.Result; n != 0 || r.LastSyncAt == nil || !r.LastSyncAt.Equal(clock.Now()) ||
		r.ItemsSynced != 5 || r.Activity != syncer.ActivityIdle {
		t.Errorf("after an idle poll: %d commits, lastSyncAt %v, itemsSynced %d, %s; want 0, %v, 5, idle",
			n, r.LastSyncAt, r.ItemsSynced, r.Activity, clock.Now())
	}
}

// feedEnv is the feed integration through the real Syncer, store and
// routes, as the tests of this file use it.
type feedEnv struct {
	clock *syncClock
	st    *storage.Store
	sy    *syncer.Syncer
	h     *api.Handlers
}

// newFeedEnv opens a fresh store with the syncer and the API handlers of
// the feed integration, fetching through site's client, all as user u1;
// the syncer logs to logs, at debug level, when it is not nil.
func newFeedEnv(t *testing.T, site *httptest.Server, logs io.Writer) feedEnv {
	t.Helper()
	dir := t.TempDir()
	clock := &syncClock{t: time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)}
	v, err := vault.New(bytes.Repeat([]byte{4}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := integrations.NewRegistry(feed.Definition())
	if err != nil {
		t.Fatal(err)
	}
	var log *slog.Logger
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	st := storage.New(filepath.Join(dir, "main"), storage.Options{Sync: storage.SyncNone, Now: clock.Now})
	recs := records.New(st, v, clock.Now)
	sy, err := syncer.New(syncer.Config{Records: recs, Items: items.New(st, v, filepath.Join(dir, "items")), Tasks: syncer.NewTasks(st, v), Registry: reg, Client: site.Client(),
		PollInterval: 15 * time.Minute, Now: clock.Now, Rand: func(int64) int64 { return 0 }, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := api.New(api.Config{Registry: reg, Records: recs, Items: sy.Items(), Sync: sy, ManualClient: site.Client(),
		UserID: func(*http.Request) (string, bool) { return "u1", true }})
	if err != nil {
		t.Fatal(err)
	}
	return feedEnv{clock: clock, st: st, sy: sy, h: h}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// A feed's address may carry a token in its query: a fetch that fails
// before any answer (the server hangs up) must not write it to the log.
func TestFeedFetchFailureLogsNoAddress(t *testing.T) {
	var hangUp atomic.Bool
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hangUp.Load() {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		io.WriteString(w, feedAtom)
	}))
	t.Cleanup(site.Close)
	const secret = "tok3n-s3cret"
	urls := []string{site.URL + "/private.xml?token=" + secret, site.URL + "/other.xml?key=" + secret}

	for _, list := range [][]string{urls[:1], urls} {
		logs := &syncBuffer{}
		e := newFeedEnv(t, site, logs)
		sy, h := e.sy, e.h
		hangUp.Store(false)
		body, _ := json.Marshal(map[string]any{"fields": map[string]string{"url": strings.Join(list, "\n")}})
		w := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/user-integrations/feed/credentials", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.SetPathValue("integration", "feed")
		h.SubmitCredentials().ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			t.Fatalf("%d feeds: form: got %d %s, want 201", len(list), w.Code, w.Body)
		}
		hangUp.Store(true)
		if err := sy.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := logs.String()
		if want := fmt.Sprintf("feed number 1 of %d", len(list)); len(list) == 1 && !strings.Contains(got, "fetch feed 1 of 1: Get: EOF") ||
			len(list) > 1 && !strings.Contains(got, want) {
			t.Errorf("%d feeds: log: got %q, want the failed fetch logged", len(list), got)
		}
		if strings.Contains(got, secret) || strings.Contains(got, "private.xml") || strings.Contains(got, site.Listener.Addr().String()) {
			t.Errorf("%d feeds: log holds the feed's address: %s", len(list), got)
		}
	}
}
