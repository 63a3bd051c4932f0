package webdav_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/syncer/syncfx"
	"searchsvc/integrations/webdav"
)

func errorOf(t *testing.T, a syncfx.Answer) (status int, code, message string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(a.Body, &e); err != nil {
		t.Fatalf("answer %d %q: %v", a.Status, a.Body, err)
	}
	return a.Status, e.Error.Code, e.Error.Message
}

// TestOriginal: GET /v1/items/{id}/original downloads a WebDAV file's
// bytes again (one GET), also one too large to have been read at the
// sync; a file the server no longer has is 404 file no longer
// available, a server refusing is a 502 in words, and a 401 says the
// connection must be made again.
func TestOriginal(t *testing.T) {
	r := newRig(t, webdav.Config{MaxFileSize: 4})
	r.dav.put("sub/big.bin", "\x00\x01 larger than the sync reads")
	r.dav.put("a.txt", "abc")
	r.sync()
	files := r.byPath()
	r.dav.counts()

	a := r.fx.Get("u1", "/v1/items/"+files["sub/big.bin"].ID+"/original")
	if a.Status != 200 || string(a.Body) != "\x00\x01 larger than the sync reads" || a.Header.Get("Content-Disposition") != "attachment; filename=big.bin" ||
		a.Header.Get("X-Content-Type-Options") != "nosniff" || a.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Fatalf("big.bin: %d %q %v", a.Status, a.Body, a.Header)
	}
	if got := r.dav.counts(); !maps.Equal(got, map[string]int{"GET": 1}) {
		t.Errorf("requests for one download: %v, want one GET", got)
	}
	if a := r.fx.Get("u2", "/v1/items/"+files["a.txt"].ID+"/original"); a.Status != 404 {
		t.Errorf("another user: %d %q", a.Status, a.Body)
	}

	r.dav.remove("sub/big.bin")
	if s, code, msg := errorOf(t, r.fx.Get("u1", "/v1/items/"+files["sub/big.bin"].ID+"/original")); s != 404 || code != "file_gone" || msg != "file no longer available" {
		t.Errorf("removed: %d %s %q", s, code, msg)
	}
	r.fail(http.StatusInternalServerError, "")
	if s, code, msg := errorOf(t, r.fx.Get("u1", "/v1/items/"+files["a.txt"].ID+"/original")); s != 502 || code != "provider_failed" ||
		msg != "WebDAV folder is having trouble at the moment (it answered 500)." {
		t.Errorf("server failing: %d %s %q", s, code, msg)
	}
	r.fail(http.StatusUnauthorized, "")
	const reauth = "the connection must be made again before anything can be downloaded from it"
	if s, code, msg := errorOf(t, r.fx.Get("u1", "/v1/items/"+files["a.txt"].ID+"/original")); s != 409 || code != "needs_reauth" || msg != reauth {
		t.Errorf("401: %d %s %q", s, code, msg)
	}
	// Once a sync found it so, the record needs reauthorization: nothing
	// is asked of the server.
	r.sync()
	r.dav.counts()
	if s, code, msg := errorOf(t, r.fx.Get("u1", "/v1/items/"+files["a.txt"].ID+"/original")); s != 409 || code != "needs_reauth" || msg != reauth {
		t.Errorf("record needs reauthorization: %d %s %q", s, code, msg)
	}
	if got := r.dav.counts(); len(got) != 0 {
		t.Errorf("requests for a record that needs reauthorization: %v", got)
	}
}

// TestOriginalOutlastsRequestTimeout: a download streams for as long as
// the file takes, past the bound the client puts on one request of a
// sync (here 1 s, the server pausing 2 s half way).
func TestOriginalOutlastsRequestTimeout(t *testing.T) {
	dav := newFakeDAV(t)
	fx := syncfx.New(t, syncfx.Options{Definition: webdav.Definition(webdav.Config{}), Client: &http.Client{Timeout: time.Second}})
	rec := fx.Connect("u1", integrations.Credentials{Fields: dav.fields()})
	dav.put("slow.txt", "first half, second half")
	fx.Sync(rec)
	var id string
	for _, it := range fx.Items(rec) {
		id = it.ID
	}
	if id == "" {
		t.Fatalf("not synced: %q", fx.Record(rec).LastError)
	}
	dav.hook = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet {
			return false
		}
		w.Write([]byte("first half, "))
		w.(http.Flusher).Flush()
		time.Sleep(2 * time.Second)
		w.Write([]byte("second half"))
		return true
	}
	if a := fx.Get("u1", "/v1/items/"+id+"/original"); a.Status != 200 || a.Err != nil || string(a.Body) != "first half, second half" {
		t.Errorf("slow download: %d (%v) %q", a.Status, a.Err, a.Body)
	}
}

// TestSlowAnswer: a server that trickles its folder listing slower than
// the bound on one request gives the record a clear error and keeps the
// stored items.
func TestSlowAnswer(t *testing.T) {
	dav := newFakeDAV(t)
	fx := syncfx.New(t, syncfx.Options{Definition: webdav.Definition(webdav.Config{}), Client: &http.Client{Timeout: time.Second}})
	rec := fx.Connect("u1", integrations.Credentials{Fields: dav.fields()})
	dav.put("a.txt", "alpha")
	fx.Sync(rec)
	if n := fx.Count(rec); n != 1 {
		t.Fatalf("%d items after the first sync: %q", n, fx.Record(rec).LastError)
	}
	dav.mu.Lock()
	dav.hook = func(w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusMultiStatus)
		for range 30 { // a byte every 100 ms: 3 s in all
			w.Write([]byte(" "))
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		return true
	}
	dav.mu.Unlock()
	fx.Clock.Advance(time.Hour)
	fx.Sync(rec)
	if got, want := fx.Record(rec).LastError, "WebDAV folder could not be reached (network, name lookup or a timeout). The sync will try again by itself."; got != want {
		t.Errorf("lastError: %q, want %q", got, want)
	}
	if n := fx.Count(rec); n != 1 {
		t.Errorf("%d items kept, want 1", n)
	}
}
