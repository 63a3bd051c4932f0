package feed_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/feed"
	"searchsvc/integrations/syncer/syncfx"
)

// etagSite serves one feed with an ETag and a Last-Modified, answering
// 304 with no body to a request that sends them back; it records each
// request's validators and the body bytes it wrote.
type etagSite struct {
	*httptest.Server
	mu        sync.Mutex
	body      string
	etag      string
	requests  []string // "If-None-Match|If-Modified-Since" of each request
	bodyBytes int
	answer    func(w http.ResponseWriter) bool // a scripted answer instead, when it returns true
}

func newEtagSite(t testing.TB, body string) *etagSite {
	s := &etagSite{body: body, etag: `"v1"`}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests = append(s.requests, r.Header.Get("If-None-Match")+"|"+r.Header.Get("If-Modified-Since"))
		if s.answer != nil && s.answer(w) {
			return
		}
		w.Header().Set("ETag", s.etag)
		w.Header().Set("Last-Modified", "Mon, 01 Jun 2026 09:00:00 GMT")
		if r.Header.Get("If-None-Match") == s.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/atom+xml")
		n, _ := io.WriteString(w, s.body)
		s.bodyBytes += n
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *etagSite) counts() (requests []string, bodyBytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...), s.bodyBytes
}

// files returns every file under dir with its content, but the main
// store's log, which each sync appends its run to.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mainLog returns the main store's log files, concatenated.
func mainLog(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for p, c := range files(t, filepath.Join(dir, "main")) {
		if strings.HasSuffix(p, ".log") || strings.Contains(filepath.Base(p), "log") {
			b.WriteString(c)
		}
	}
	return b.String()
}

// TestConditionalPoll: the second poll of an unchanged feed sends its
// ETag and Last-Modified back, is answered 304 with no body, and writes
// nothing to the store: no item and no kept value changes. The record
// keeps the feed's own title and last status, and a changed feed is read
// again in full.
func TestConditionalPoll(t *testing.T) {
	site := newEtagSite(t, atomFeed)
	fx := syncfx.New(t, syncfx.Options{Definition: feed.Definition(), Client: site.Client()})
	rec := fx.Connect("u1", integrations.Credentials{Fields: map[string]string{feed.FieldURL: site.URL + "/feed.xml"}})
	fx.Sync(rec)
	if got := fx.Count(rec); got != 3 {
		t.Fatalf("first poll: got %d items, want 3", got)
	}
	details := func() string {
		kept, err := fx.Syncer.KeptState(rec)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(feed.Details(integrations.Credentials{Fields: map[string]string{feed.FieldURL: site.URL + "/feed.xml"}},
			func(k string) string { return kept[k] }))
		return string(b)
	}
	want := `[{"source":"` + site.URL + `/feed.xml","title":"Example blog","status":"ok"}]`
	if got := details(); got != want {
		t.Errorf("details after the first poll: got %s, want %s", got, want)
	}
	before := files(t, fx.Dir)
	logBefore := mainLog(t, fx.Dir)
	if !strings.Contains(logBefore, `"syncstate"`) || !strings.Contains(logBefore, `"items"`) {
		t.Fatalf("the first poll's log names neither table: the check of the second sees nothing: %.2000s", logBefore)
	}
	_, bytesBefore := site.counts()

	fx.Clock.Advance(time.Hour)
	fx.Sync(rec)
	reqs, bodyBytes := site.counts()
	if want := `"v1"|Mon, 01 Jun 2026 09:00:00 GMT`; len(reqs) != 2 || reqs[1] != want {
		t.Fatalf("requests: got %q, want the second to send %q", reqs, want)
	}
	if bodyBytes != bytesBefore {
		t.Errorf("second poll: %d body bytes sent, want 0", bodyBytes-bytesBefore)
	}
	if got := fx.Count(rec); got != 3 {
		t.Errorf("second poll: got %d items, want 3", got)
	}
	after := files(t, fx.Dir)
	for p, c := range before {
		if strings.HasPrefix(p, filepath.Join(fx.Dir, "main")) {
			continue
		}
		if after[p] != c {
			t.Errorf("%s changed on a 304", p)
		}
	}
	if added := strings.TrimPrefix(mainLog(t, fx.Dir), logBefore); strings.Contains(added, `"syncstate"`) || strings.Contains(added, `"items"`) {
		t.Errorf("the 304 wrote kept values or items: %s", added)
	}
	if got := details(); got != want {
		t.Errorf("details after the 304: got %s, want %s", got, want)
	}

	// A new version is read in full, with its own title.
	site.mu.Lock()
	site.etag, site.body = `"v2"`, strings.Replace(atomFeed, "Example blog", "Example blog, renamed", 1)
	site.mu.Unlock()
	fx.Clock.Advance(time.Hour)
	fx.Sync(rec)
	if _, n := site.counts(); n == bytesBefore {
		t.Errorf("a changed feed: no body read")
	}
	want = strings.Replace(want, "Example blog", "Example blog, renamed", 1)
	if got := details(); got != want {
		t.Errorf("details after a new version: got %s, want %s", got, want)
	}
}

// TestFeedStatusAndRetryAfter: a feed that answers 503 with Retry-After
// shows that failure as its last status, is not asked again before the
// time it named (the task waits for it), and then is.
func TestFeedStatusAndRetryAfter(t *testing.T) {
	site := newEtagSite(t, atomFeed)
	busy := true
	site.answer = func(w http.ResponseWriter) bool {
		if !busy {
			return false
		}
		w.Header().Set("Retry-After", "600")
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}
	other := newEtagSite(t, fullFeed)
	fx := syncfx.New(t, syncfx.Options{Definition: feed.Definition(), Client: site.Client()})
	creds := integrations.Credentials{Fields: map[string]string{feed.FieldURL: site.URL + "/a.xml\n" + other.URL + "/b.xml"}}
	rec := fx.Connect("u1", creds)
	fx.Sync(rec)
	details := func() string {
		kept, err := fx.Syncer.KeptState(rec)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(feed.Details(creds, func(k string) string { return kept[k] }))
		return string(b)
	}
	// The record's tasks run in order: the feed after the busy one
	// waits with it.
	want := `[{"source":"` + site.URL + `/a.xml","status":"the server answered 503 Service Unavailable"},` +
		`{"source":"` + other.URL + `/b.xml"}]`
	if got := details(); got != want {
		t.Errorf("details: got %s, want %s", got, want)
	}
	if reqs, _ := site.counts(); len(reqs) != 1 {
		t.Fatalf("busy feed: %d requests, want 1", len(reqs))
	}
	site.mu.Lock()
	busy = false
	site.mu.Unlock()
	// Sooner than Retry-After: neither the retried task nor a new sync
	// asks the busy feed again.
	fx.Clock.Advance(5 * time.Minute)
	fx.Sync(rec)
	if reqs, _ := site.counts(); len(reqs) != 1 {
		t.Errorf("5 minutes after Retry-After: 600: %d requests, want still 1", len(reqs))
	}
	fx.Clock.Advance(6 * time.Minute)
	fx.Run()
	fx.Sync(rec)
	if reqs, _ := site.counts(); len(reqs) < 2 {
		t.Errorf("after Retry-After: %d requests, want the feed asked again", len(reqs))
	}
	want = `[{"source":"` + site.URL + `/a.xml","title":"Example blog","status":"ok"},` +
		`{"source":"` + other.URL + `/b.xml","title":"Full","status":"ok"}]`
	if got := details(); got != want {
		t.Errorf("details after the wait: got %s, want %s", got, want)
	}
	if !strings.Contains(fx.Log(), "retry_in=10m0s") {
		t.Errorf("log: got %s, want the task retried in 10m0s", fx.Log())
	}
}
