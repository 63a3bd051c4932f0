package dropbox_test

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/dropbox"
	"searchsvc/integrations/dropbox/dropboxtest"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer/syncfx"
)

// syncRig is a Dropbox account on the fake, synced by the real Syncer.
type syncRig struct {
	fake *dropboxtest.Server
	fx   *syncfx.Fixture
	rec  records.Record
	tap  *tap
}

// tap counts the downloads answered 200, by file id, and can make the
// fake fail one request of a kind once that kind was asked n times.
type tap struct {
	next http.RoundTripper
	fake *dropboxtest.Server

	mu     gosync.Mutex
	got    map[string]int // 200 downloads by Dropbox-API-Result: file and version
	seen   map[string]int // requests by path
	failAt map[string]failure
	// corrupt flips a byte of every download's content, after the
	// content hash was computed.
	corrupt bool
}

type failure struct {
	n, status  int
	retryAfter string
}

func (t *tap) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.seen[r.URL.Path]++
	if f, ok := t.failAt[r.URL.Path]; ok && t.seen[r.URL.Path] == f.n {
		t.fake.Fail(1, f.status, f.retryAfter)
	}
	t.mu.Unlock()
	resp, err := t.next.RoundTrip(r)
	if err == nil && r.URL.Path == "/2/files/download" && resp.StatusCode == http.StatusOK {
		t.mu.Lock()
		t.got[resp.Header.Get("Dropbox-API-Result")]++
		if t.corrupt {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			b[len(b)/2] ^= 1
			resp.Body = io.NopCloser(bytes.NewReader(b))
		}
		t.mu.Unlock()
	}
	return resp, err
}

// twice returns the files downloaded more than once.
func (t *tap) twice() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for arg, n := range t.got {
		if n > 1 {
			out = append(out, arg)
		}
	}
	return out
}

func newSyncRig(t testing.TB, opts dropboxtest.Options, cfg dropbox.Config) *syncRig {
	t.Helper()
	fake := dropboxtest.New(t, opts)
	tp := &tap{next: fake.Client().Transport, fake: fake, got: map[string]int{}, seen: map[string]int{}, failAt: map[string]failure{}}
	fx := syncfx.New(t, syncfx.Options{
		Definition: dropbox.NewDefinition(cfg),
		Env: map[string]string{
			"DROPBOX_OAUTH_CLIENT_ID": "dropboxtest-client", "DROPBOX_OAUTH_CLIENT_SECRET": "dropboxtest-secret",
			"DROPBOX_API_BASE_URL": fake.URL, "DROPBOX_OAUTH_TOKEN_URL": fake.URL + "/oauth2/token",
		},
		Client: &http.Client{Transport: tp},
	})
	rec := fx.Connect("user-1", integrations.Credentials{AccessToken: fake.AccessToken, RefreshToken: "refresh"})
	return &syncRig{fake: fake, fx: fx, rec: rec, tap: tp}
}

// byPath returns the stored items by lower-case path.
func (r *syncRig) byPath(t *testing.T) map[string]syncfx.Item {
	t.Helper()
	out := map[string]syncfx.Item{}
	for pid, it := range r.fx.Items(r.rec) {
		parts := strings.SplitN(pid, "|", 3)
		if len(parts) != 3 {
			t.Fatalf("provider id %q is not id|hash|path", pid)
		}
		out[parts[2]] = it
	}
	return out
}

// checkIndex fails unless the Indexer holds exactly the stored items.
func (r *syncRig) checkIndex(t *testing.T) {
	t.Helper()
	stored := r.fx.Items(r.rec)
	titles := r.fx.Index.Titles()
	if len(titles) != len(stored) {
		t.Errorf("index: got %d items, want the %d stored", len(titles), len(stored))
	}
	for _, it := range stored {
		if titles[it.ID] != it.Title {
			t.Errorf("index: item %s titled %q, want %q", it.ID, titles[it.ID], it.Title)
		}
	}
}

func TestSyncerSyncsDropbox(t *testing.T) {
	const secret = "the quarterly plan of the otter project"
	r := newSyncRig(t, dropboxtest.Options{Files: map[string][]byte{
		"/Private/secret-plans.txt": []byte(secret),
		"/notes.md":                 []byte("# Notes\n\nbuy *milk*"),
		"/data/list.json":           []byte(`{"fruit": "kumquat"}`),
		"/big.txt":                  []byte(strings.Repeat("large ", 400)),
		"/photo.jpg":                []byte("\xff\xd8\xff\xe0 not text"),
	}}, dropbox.Config{MaxFileSize: 1 << 10})

	r.fx.Sync(r.rec)
	got := r.byPath(t)
	want := map[string]struct{ title, text string }{
		"/private/secret-plans.txt": {"secret-plans.txt", "/Private/secret-plans.txt\n\n" + secret},
		"/notes.md":                 {"notes.md", "/notes.md\n\n# Notes\n\nbuy *milk*"},
		"/data/list.json":           {"list.json", "/data/list.json\n\nkumquat"},
		"/big.txt":                  {"big.txt", "/big.txt"},
		"/photo.jpg":                {"photo.jpg", "/photo.jpg"},
	}
	if len(got) != len(want) {
		t.Errorf("first sync: got %d items, want %d", len(got), len(want))
	}
	for path, w := range want {
		it := got[path]
		if it.Title != w.title || it.Text != w.text {
			t.Errorf("item %s: got %q, text %q; want %q, text with %q", path, it.Title, it.Text, w.title, w.text)
		}
	}
	if c := r.fake.Counts(); c.Lists != 1 || c.Continues != 0 || c.Downloads != 3 {
		t.Errorf("first sync: got %+v, want 1 list, 0 continues, 3 downloads (big.txt and photo.jpg by name)", c)
	}
	rec := r.fx.Record(r.rec)
	if rec.Status != records.StatusConnected || rec.LastError != "" || rec.ItemsSynced != 5 || rec.LastSyncAt == nil {
		t.Errorf("record: got %s %q, %d items, lastSyncAt %v; want connected, no error, 5, set", rec.Status, rec.LastError, rec.ItemsSynced, rec.LastSyncAt)
	}
	r.checkIndex(t)

	// Nothing changed: one continue, no download.
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	if c := r.fake.Counts(); c.Lists != 1 || c.Continues != 1 || c.Downloads != 3 {
		t.Errorf("second sync: got %+v, want 1 list, 1 continue, 3 downloads", c)
	}

	// An edit, a deletion, a new file and a folder deleted.
	r.fake.Put("/notes.md", []byte("# Notes\n\nbuy *bread*"))
	r.fake.Delete("/photo.jpg")
	r.fake.Delete("/data/list.json")
	r.fake.Put("/todo.txt", []byte("call the plumber"))
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	got = r.byPath(t)
	if _, ok := got["/photo.jpg"]; ok {
		t.Error("photo.jpg deleted at Dropbox is still stored")
	}
	if _, ok := got["/data/list.json"]; ok {
		t.Error("list.json deleted at Dropbox is still stored")
	}
	if it := got["/notes.md"]; !strings.HasSuffix(it.Text, "buy *bread*") {
		t.Errorf("edited notes.md: got text %q, want the new content", it.Text)
	}
	if it := got["/todo.txt"]; !strings.HasSuffix(it.Text, "call the plumber") {
		t.Errorf("new todo.txt: got text %q", it.Text)
	}
	if len(got) != 4 {
		t.Errorf("third sync: got %d items, want 4", len(got))
	}
	if c := r.fake.Counts(); c.Lists != 1 || c.Continues != 2 || c.Downloads != 5 {
		t.Errorf("third sync: got %+v, want 1 list, 2 continues, 5 downloads", c)
	}
	r.checkIndex(t)

	// A reset cursor lists again and downloads nothing unchanged.
	r.fake.ResetCursors()
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	if c := r.fake.Counts(); c.Lists != 2 || c.Continues != 3 || c.Downloads != 5 {
		t.Errorf("after a reset: got %+v, want 2 lists, 3 continues (one reset), 5 downloads", c)
	}
	if n := len(r.byPath(t)); n != 4 {
		t.Errorf("after a reset: got %d items, want 4", n)
	}
	rec = r.fx.Record(r.rec)
	// itemsSynced is what the record holds: deleted files and the old
	// versions of edited ones left the count.
	if rec.Status != records.StatusConnected || rec.LastError != "" || rec.ItemsSynced != 4 {
		t.Errorf("record: got %s %q, %d items; want connected, no error, 4", rec.Status, rec.LastError, rec.ItemsSynced)
	}
	r.checkIndex(t)
	if twice := r.tap.twice(); len(twice) != 0 {
		t.Errorf("downloaded twice: %q", twice)
	}
	if leaks := r.fx.PlainText(secret, "otter", "secret-plans", "kumquat", "plumber", r.fake.AccessToken); len(leaks) != 0 {
		t.Errorf("plain text under DATA_DIR: %q", leaks)
	}
}

// manyFiles is n text files over pages of 10 entries.
func manyFiles(n int) dropboxtest.Options {
	files := map[string][]byte{}
	for i := range n {
		files[fmt.Sprintf("/f%02d.txt", i)] = []byte(fmt.Sprintf("file number %d", i))
	}
	return dropboxtest.Options{Files: files, PageSize: 10}
}

// TestSyncerResumesDropbox: a sync stopped in the middle (a failed
// download, then a restart) goes on from its queued tasks, downloading
// nothing twice; a 429 on a listing page waits its Retry-After and
// continues from that page's cursor, not from the start.
func TestSyncerResumesDropbox(t *testing.T) {
	r := newSyncRig(t, manyFiles(30), dropbox.Config{})
	r.tap.failAt["/2/files/download"] = failure{n: 5, status: http.StatusServiceUnavailable}
	r.tap.failAt["/2/files/list_folder/continue"] = failure{n: 2, status: http.StatusTooManyRequests, retryAfter: "120"}
	r.fx.Sync(r.rec)
	if p := r.fx.Syncer.Pending(r.rec.ID); p == 0 {
		t.Fatal("the sync finished despite the failures")
	}
	rec := r.fx.Record(r.rec)
	const want503 = "Dropbox is having trouble at the moment (it answered 503). The sync will try again by itself."
	if rec.Status != records.StatusError || rec.LastError != want503 {
		t.Errorf("record: got %s %q; want error, %q", rec.Status, rec.LastError, want503)
	}

	for range 10 {
		r.fx.Reopen()
		r.fx.Clock.Advance(time.Minute)
		r.fx.Run()
		if r.fx.Syncer.Pending(r.rec.ID) == 0 {
			break
		}
	}
	if n := len(r.fx.Items(r.rec)); n != 30 {
		t.Errorf("got %d items, want 30", n)
	}
	c := r.fake.Counts()
	if c.Lists != 1 || c.Continues != 3 || c.Downloads != 31 {
		t.Errorf("got %+v; want 1 list, 3 continues (one 429), 31 downloads (one 503)", c)
	}
	if twice := r.tap.twice(); len(twice) != 0 {
		t.Errorf("downloaded twice: %q", twice)
	}
	rec = r.fx.Record(r.rec)
	if rec.Status != records.StatusConnected || rec.LastError != "" || rec.ItemsSynced != 30 || rec.LastSyncAt == nil {
		t.Errorf("record: got %s %q, %d items, %v; want connected, no error, 30, lastSyncAt set", rec.Status, rec.LastError, rec.ItemsSynced, rec.LastSyncAt)
	}
	r.checkIndex(t)
}

// TestSyncerRelistsDropbox: after a cursor reset the whole Dropbox is
// listed again over several pages, nothing unchanged is downloaded, and
// files deleted while the cursor was reset, which no deleted entry
// reports, leave the items.
func TestSyncerRelistsDropbox(t *testing.T) {
	r := newSyncRig(t, manyFiles(30), dropbox.Config{})
	r.fx.Sync(r.rec)
	if n := len(r.fx.Items(r.rec)); n != 30 {
		t.Fatalf("first sync: got %d items, want 30", n)
	}
	r.fake.ResetCursors()
	r.fake.Delete("/f05.txt")
	r.fake.Delete("/f25.txt")
	r.fake.Put("/f12.txt", []byte("changed while reset"))
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	got := r.byPath(t)
	if len(got) != 28 {
		t.Errorf("after the re-listing: got %d items, want 28", len(got))
	}
	for _, gone := range []string{"/f05.txt", "/f25.txt"} {
		if _, ok := got[gone]; ok {
			t.Errorf("%s deleted while the cursor was reset is still stored", gone)
		}
	}
	if it := got["/f12.txt"]; it.Text != "/f12.txt\n\nchanged while reset" {
		t.Errorf("f12.txt: got %q", it.Text)
	}
	if c := r.fake.Counts(); c.Lists != 2 || c.Downloads != 31 {
		t.Errorf("got %+v; want 2 lists, 31 downloads (f12.txt again)", c)
	}
	r.checkIndex(t)

	// The next sync continues from the new cursor.
	r.fx.Clock.Advance(time.Hour)
	before := r.fake.Counts()
	r.fx.Sync(r.rec)
	if c := r.fake.Counts(); c.Lists != before.Lists || c.Continues != before.Continues+1 || c.Downloads != before.Downloads {
		t.Errorf("after: got %+v, want one more continue than %+v", c, before)
	}
	if n := len(r.fx.Items(r.rec)); n != 28 {
		t.Errorf("got %d items, want 28", n)
	}
}

// TestSyncerRenamedFolderDropbox: a renamed folder's files keep their
// items under their new paths (re-keyed, same item ids), with no
// download, whether the deleted entry of the old folder comes before or
// after the files at the new paths.
func TestSyncerRenamedFolderDropbox(t *testing.T) {
	files := map[string][]byte{}
	for i := range 8 {
		files[fmt.Sprintf("/Docs/f%d.txt", i)] = []byte(fmt.Sprintf("file number %d", i))
	}
	r := newSyncRig(t, dropboxtest.Options{Files: files, PageSize: 100}, dropbox.Config{})
	r.fx.Sync(r.rec)
	before := r.byPath(t)
	if len(before) != 8 {
		t.Fatalf("first sync: got %d items, want 8", len(before))
	}
	downloads := r.fake.Counts().Downloads
	r.fake.Move("/Docs", "/Papers")
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	if c := r.fake.Counts(); c.Downloads != downloads {
		t.Errorf("after the rename: got %d downloads, want 0", c.Downloads-downloads)
	}
	after := r.byPath(t)
	if len(after) != 8 {
		t.Errorf("after the rename: got %d items, want 8", len(after))
	}
	for i := range 8 {
		old, moved := before[fmt.Sprintf("/docs/f%d.txt", i)], after[fmt.Sprintf("/papers/f%d.txt", i)]
		if moved.ID == "" || moved.ID != old.ID {
			t.Errorf("f%d.txt: got item %q at the new path, want the same item %q re-keyed", i, moved.ID, old.ID)
		}
	}
	r.checkIndex(t)
}

// TestSyncerRelistingWritesPerPage: a full listing over stored files
// (after a reset) writes, per page, what the page listed: the store grows
// about twice as much for twice the pages, not four times.
func TestSyncerRelistingWritesPerPage(t *testing.T) {
	grown := func(n int) int64 {
		r := newSyncRig(t, manyFiles(n), dropbox.Config{})
		r.fx.Sync(r.rec)
		r.fake.ResetCursors()
		r.fx.Clock.Advance(time.Hour)
		start := dirSize(t, r.fx.Dir)
		r.fx.Sync(r.rec)
		if c := r.fake.Counts(); c.Downloads != n {
			t.Fatalf("%d files: got %d downloads, want %d (none again)", n, c.Downloads, n)
		}
		return dirSize(t, r.fx.Dir) - start
	}
	small, large := grown(200), grown(400) // pages of 10: 20 and 40 pages
	t.Logf("re-listing: grew %d bytes for 40 pages, %d for 20", large, small)
	if large > small*5/2 {
		t.Errorf("re-listing: grew %d bytes for 40 pages, %d for 20; want at most 2.5 times", large, small)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
