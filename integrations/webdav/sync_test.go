package webdav_test

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations/records"
	"searchsvc/integrations/webdav"
)

// TestSyncIncremental: the first sync downloads the files the extractor
// reads (GET) and stores the others from the listing alone; a second
// sync makes PROPFIND requests only; a changed file is downloaded again
// and keeps one item; a moved file keeps its item without a download;
// a deleted file's item leaves.
func TestSyncIncremental(t *testing.T) {
	r := newRig(t, webdav.Config{})
	r.dav.put("a.txt", "alpha words")
	r.dav.put("sub/b.txt", "bravo words")
	r.dav.put("sub/deep/c.bin", "\x00\x01binary")
	r.dav.put("name with space & pipe|.txt", "charlie")

	got := r.sync()
	if want := map[string]int{"PROPFIND": 3, "GET": 3}; !maps.Equal(got, want) {
		t.Fatalf("first sync requests: got %v, want %v; %q\n%s", got, want, r.fx.Record(r.rec).LastError, r.fx.Log())
	}
	items := r.byPath()
	if len(items) != 4 {
		t.Fatalf("got %d items, want 4: %v", len(items), items)
	}
	if it := items["sub/b.txt"]; it.Title != "b.txt" || !strings.Contains(it.Text, "bravo words") || it.Size != 11 {
		t.Errorf("sub/b.txt: got %+v", it)
	}
	if it := items["sub/deep/c.bin"]; it.Title != "c.bin" || it.Text != "sub/deep/c.bin" {
		t.Errorf("c.bin (stored by name): got %+v", it)
	}
	if it := items["name with space & pipe|.txt"]; !strings.Contains(it.Text, "charlie") {
		t.Errorf("escaped name: got %+v", it)
	}
	if rec := r.fx.Record(r.rec); rec.Status != records.StatusConnected || rec.LastError != "" || rec.ItemsSynced != 4 {
		t.Errorf("record: status %q, error %q, items %d", rec.Status, rec.LastError, rec.ItemsSynced)
	}

	if got := r.sync(); !maps.Equal(got, map[string]int{"PROPFIND": 3}) {
		t.Errorf("second sync requests: got %v, want PROPFIND only", got)
	}

	r.dav.put("sub/b.txt", "bravo changed")
	if got := r.sync(); got["GET"] != 1 {
		t.Errorf("changed file: %d GET, want 1", got["GET"])
	}
	items2 := r.byPath()
	if it := items2["sub/b.txt"]; !strings.Contains(it.Text, "bravo changed") || len(items2) != 4 {
		t.Errorf("changed file: got %+v, %d items", it, len(items2))
	}

	r.dav.move("a.txt", "sub/moved.txt")
	if got := r.sync(); got["GET"] != 0 {
		t.Errorf("moved file: %d GET, want 0", got["GET"])
	}
	items3 := r.byPath()
	if it, ok := items3["sub/moved.txt"]; !ok || it.ID != items["a.txt"].ID || it.Title != "moved.txt" || !strings.Contains(it.Text, "alpha words") {
		t.Errorf("moved file: got %+v (ok %v), want the item %s re-keyed", it, ok, items["a.txt"].ID)
	}
	if _, ok := items3["a.txt"]; ok {
		t.Errorf("a.txt still stored after its move")
	}

	r.dav.remove("sub/deep/c.bin")
	r.sync()
	if items4 := r.byPath(); len(items4) != 3 {
		t.Errorf("after a deletion: %d items, want 3", len(items4))
	} else if _, ok := items4["sub/deep/c.bin"]; ok {
		t.Errorf("a deleted file is still stored")
	}
	if n := r.fx.Record(r.rec).ItemsSynced; n != 3 {
		t.Errorf("itemsSynced %d, want 3", n)
	}
}

// TestNoETag: a server that lists no ETag: files are told apart by their
// modification time and length.
func TestNoETag(t *testing.T) {
	r := newRig(t, webdav.Config{})
	r.dav.files["a.txt"] = davFile{body: "one", mtime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if got := r.sync(); got["GET"] != 1 {
		t.Fatalf("first sync: %d GET, want 1", got["GET"])
	}
	if got := r.sync(); got["GET"] != 0 {
		t.Errorf("unchanged: %d GET, want 0", got["GET"])
	}
	r.dav.files["a.txt"] = davFile{body: "one!", mtime: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
	if got := r.sync(); got["GET"] != 1 {
		t.Errorf("changed: %d GET, want 1", got["GET"])
	}
	if it := r.byPath()["a.txt"]; !strings.Contains(it.Text, "one!") || len(r.byPath()) != 1 {
		t.Errorf("changed: got %+v", it)
	}
}

// failOnce answers every request with status (and Retry-After) until it
// is cleared.
func (r *rig) fail(status int, retryAfter string) {
	r.dav.hook = func(w http.ResponseWriter, _ *http.Request) bool {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, "down", status)
		return true
	}
}

// TestUnauthorized: a 401 makes the record needs_reauth and keeps its
// items.
func TestUnauthorized(t *testing.T) {
	r := newRig(t, webdav.Config{})
	r.dav.put("a.txt", "alpha")
	r.sync()
	r.fail(http.StatusUnauthorized, "")
	r.sync()
	rec := r.fx.Record(r.rec)
	if rec.Status != records.StatusNeedsReauth || rec.LastError != "WebDAV folder refused the stored authorization. Connect it again to resume syncing." {
		t.Errorf("record: status %q, error %q", rec.Status, rec.LastError)
	}
	if n := len(r.byPath()); n != 1 {
		t.Errorf("%d items kept, want 1", n)
	}
}

// TestInsufficientStorageRetryAfter: a 507 with Retry-After is retried
// after that many seconds, not before; then the sync goes through.
func TestInsufficientStorageRetryAfter(t *testing.T) {
	r := newRig(t, webdav.Config{})
	r.dav.put("a.txt", "alpha")
	r.fail(http.StatusInsufficientStorage, "600")
	r.sync()
	rec := r.fx.Record(r.rec)
	if want := "WebDAV folder is having trouble at the moment (it answered 507). The sync will try again by itself."; rec.Status != records.StatusError || rec.LastError != want {
		t.Errorf("record: status %q, error %q; want error %q", rec.Status, rec.LastError, want)
	}
	r.dav.counts()
	r.fx.Clock.Advance(599 * time.Second)
	r.fx.Run()
	if got := r.dav.counts(); len(got) != 0 {
		t.Errorf("retried before Retry-After: %v", got)
	}
	r.dav.hook = nil
	r.fx.Clock.Advance(2 * time.Second)
	r.fx.Run()
	if got := r.dav.counts(); got["PROPFIND"] != 1 || got["GET"] != 1 {
		t.Errorf("retry after Retry-After: got %v", got)
	}
	if rec := r.fx.Record(r.rec); rec.Status != records.StatusConnected || len(r.byPath()) != 1 {
		t.Errorf("after the retry: status %q, %d items", rec.Status, len(r.byPath()))
	}
}

// TestServerErrorBackoff: a 503 without Retry-After is retried with the
// backoff: not at once.
func TestServerErrorBackoff(t *testing.T) {
	r := newRig(t, webdav.Config{})
	r.dav.put("a.txt", "alpha")
	r.fail(http.StatusServiceUnavailable, "")
	r.sync()
	if rec := r.fx.Record(r.rec); rec.Status != records.StatusError || !strings.Contains(rec.LastError, "(it answered 503)") {
		t.Errorf("record: status %q, error %q", rec.Status, rec.LastError)
	}
	r.dav.counts()
	r.fx.Run()
	if got := r.dav.counts(); len(got) != 0 {
		t.Errorf("retried at once: %v", got)
	}
	r.dav.hook = nil
	r.fx.Clock.Advance(time.Hour)
	r.fx.Run()
	if n := len(r.byPath()); n != 1 {
		t.Errorf("after the backoff: %d items, want 1", n)
	}
}

// hostile answers PROPFIND with status 207 and body.
func (r *rig) hostile(body func(w http.ResponseWriter)) {
	r.dav.hook = func(w http.ResponseWriter, req *http.Request) bool {
		if req.Method != "PROPFIND" {
			return false
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusMultiStatus)
		body(w)
		return true
	}
}

// TestHostileAnswers: an XML bomb, a huge answer, deep nesting, and
// garbage each give the record a clear error, keep the stored items,
// and fetch nothing.
func TestHostileAnswers(t *testing.T) {
	bomb := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
		`<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>` +
		`<d:multistatus xmlns:d="DAV:"><d:response><d:href>&lol3;</d:href></d:response></d:multistatus>`
	cases := []struct {
		name string
		body func(w http.ResponseWriter)
		want string
	}{
		{"bomb", func(w http.ResponseWriter) { fmt.Fprint(w, bomb) },
			"The WebDAV server answered a folder listing that declares a document type, as an XML bomb does; it is not read. The next sync tries again."},
		{"huge", func(w http.ResponseWriter) {
			fmt.Fprint(w, `<d:multistatus xmlns:d="DAV:">`)
			for range 40_000 {
				fmt.Fprint(w, `<d:response><d:href>/dav/me/x</d:href></d:response>`)
			}
		}, "The WebDAV server answered a folder listing larger than 1 MiB; the sync stops there. The next sync tries again."},
		{"deep", func(w http.ResponseWriter) {
			fmt.Fprint(w, strings.Repeat(`<d:x xmlns:d="DAV:">`, 1000))
		}, "The WebDAV server answered a folder listing nested deeper than 24 levels. The next sync tries again."},
		{"garbage", func(w http.ResponseWriter) { fmt.Fprint(w, "<html><body>hello</html>") },
			"The WebDAV server answered a folder listing that is not valid XML. The next sync tries again."},
		{"long value", func(w http.ResponseWriter) {
			fmt.Fprint(w, `<d:multistatus xmlns:d="DAV:"><d:response><d:href>`+strings.Repeat("a", 9000)+`</d:href>`)
		}, "The WebDAV server answered a folder listing with a value longer than 8192 bytes. The next sync tries again."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, webdav.Config{List: webdav.ListLimits{MaxAnswerBytes: 1 << 20}})
			r.dav.put("a.txt", "alpha")
			r.sync()
			r.hostile(c.body)
			got := r.sync()
			rec := r.fx.Record(r.rec)
			if rec.LastError != c.want {
				t.Errorf("lastError: got %q, want %q", rec.LastError, c.want)
			}
			if got["GET"] != 0 || len(r.byPath()) != 1 {
				t.Errorf("requests %v, %d items; want no GET and the item kept", got, len(r.byPath()))
			}
		})
	}
}

// TestRedirects: a redirect to the folder with its slash is followed; a
// loop and a redirect to another server stop the sync with a clear error.
func TestRedirects(t *testing.T) {
	r := newRig(t, webdav.Config{})
	r.dav.put("sub/a.txt", "alpha")
	r.dav.hook = func(w http.ResponseWriter, req *http.Request) bool {
		if req.Method == "PROPFIND" && req.URL.Path == "/dav/me/sub/" && req.URL.Query().Get("x") == "" {
			http.Redirect(w, req, "/dav/me/sub/?x=1", http.StatusMovedPermanently)
			return true
		}
		return false
	}
	r.sync()
	if n := len(r.byPath()); n != 1 {
		t.Fatalf("after a redirect: %d items, want 1", n)
	}
	for name, to := range map[string]string{"loop": "/dav/me/", "elsewhere": "https://other.example/dav/"} {
		r.dav.hook = func(w http.ResponseWriter, req *http.Request) bool {
			http.Redirect(w, req, to, http.StatusTemporaryRedirect)
			return true
		}
		got := r.sync()
		want := map[string]string{
			"loop":      "The WebDAV server redirected the sync more than 5 times in a row (a redirect loop). The next sync tries again.",
			"elsewhere": "The WebDAV server redirected the sync to another server or to http; connect the address it redirects to instead. The next sync tries again.",
		}[name]
		if rec := r.fx.Record(r.rec); rec.LastError != want {
			t.Errorf("%s: lastError %q, want %q", name, rec.LastError, want)
		}
		if name == "loop" && got["PROPFIND"] != 6 {
			t.Errorf("loop: %d PROPFIND, want 6", got["PROPFIND"])
		}
		if n := len(r.byPath()); n != 1 {
			t.Errorf("%s: %d items kept, want 1", name, n)
		}
	}
}

// TestListLimits: entries past MaxEntries and folders past MaxDepth are
// left out, and the record's source says so.
func TestListLimits(t *testing.T) {
	r := newRig(t, webdav.Config{List: webdav.ListLimits{MaxEntries: 7, MaxDepth: 2}})
	for i := range 4 {
		r.dav.put(fmt.Sprintf("f%d.txt", i), "x")
	}
	r.dav.put("d1/d2/d3/deep.txt", "deep")
	r.sync()
	kept, err := r.fx.Syncer.KeptState(r.fx.Record(r.rec))
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 folder nested deeper than 2 levels is not searched"; kept["status"] != want {
		t.Errorf("status %q, want %q", kept["status"], want)
	}
	r.dav.put("f4.txt", "x")
	r.dav.put("f5.txt", "x")
	r.sync()
	kept, _ = r.fx.Syncer.KeptState(r.fx.Record(r.rec))
	if want := "the folder holds more than 7 files and folders; the rest is not searched"; kept["status"] != want {
		t.Errorf("status %q, want %q", kept["status"], want)
	}
	if n := len(r.byPath()); n != 6 {
		t.Errorf("%d items, want 6", n)
	}
}

// TestFolderGone: the connected folder gone from the server (404) says
// so on the record, keeps the items, and the next sync finds it again.
func TestFolderGone(t *testing.T) {
	r := newRig(t, webdav.Config{})
	r.dav.put("a.txt", "alpha")
	r.sync()
	r.dav.hook = func(w http.ResponseWriter, req *http.Request) bool {
		http.NotFound(w, req)
		return true
	}
	r.sync()
	rec := r.fx.Record(r.rec)
	if want := "The WebDAV server has no folder at the connected address any more (it answered 404). The next sync tries again."; rec.LastError != want {
		t.Errorf("lastError %q, want %q", rec.LastError, want)
	}
	if n := len(r.byPath()); n != 1 {
		t.Errorf("%d items kept, want 1", n)
	}
	r.dav.hook = nil
	r.sync()
	if rec := r.fx.Record(r.rec); rec.LastError != "" || rec.Status != records.StatusConnected {
		t.Errorf("back: status %q, error %q", rec.Status, rec.LastError)
	}
}

// TestDownloadRetryAfter: a 429 with Retry-After on a download waits
// that long, then downloads; the listing is not asked again meanwhile.
func TestDownloadRetryAfter(t *testing.T) {
	r := newRig(t, webdav.Config{})
	r.dav.put("a.txt", "alpha")
	r.dav.hook = func(w http.ResponseWriter, req *http.Request) bool {
		if req.Method != http.MethodGet {
			return false
		}
		w.Header().Set("Retry-After", "300")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return true
	}
	r.sync()
	rec := r.fx.Record(r.rec)
	if want := "WebDAV folder asked the sync to slow down (too many requests). The sync will try again by itself."; rec.LastError != want {
		t.Errorf("lastError %q, want %q", rec.LastError, want)
	}
	r.dav.counts()
	r.fx.Clock.Advance(299 * time.Second)
	r.fx.Run()
	if got := r.dav.counts(); len(got) != 0 {
		t.Errorf("asked again before Retry-After: %v", got)
	}
	r.dav.hook = nil
	r.fx.Clock.Advance(2 * time.Second)
	r.fx.Run()
	if got := r.dav.counts(); !maps.Equal(got, map[string]int{"GET": 1}) {
		t.Errorf("after Retry-After: %v, want one GET", got)
	}
	if it := r.byPath()["a.txt"]; !strings.Contains(it.Text, "alpha") {
		t.Errorf("a.txt: got %+v", it)
	}
}
