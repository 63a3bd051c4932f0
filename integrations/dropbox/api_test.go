package dropbox_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/dropbox"
	"searchsvc/integrations/dropbox/dropboxtest"
)

// clock is a settable clock for the fake's rate limit and Retry-After.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newAPI(t *testing.T, opts dropboxtest.Options) (*dropboxtest.Server, *dropbox.Client, *clock) {
	t.Helper()
	clk := &clock{t: now}
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	srv := dropboxtest.New(t, opts)
	return srv, dropbox.NewClient(srv.Client(), srv.URL, srv.Token, clk.Now), clk
}

func files(n int) map[string][]byte {
	m := map[string][]byte{}
	for i := range n {
		m[fmt.Sprintf("/Docs/Sub%d/file%02d.txt", i%3, i)] = []byte(fmt.Sprintf("content of file %d", i))
	}
	return m
}

// listAll pages from a first page to the end, returning the entries and
// the last cursor.
func listAll(t *testing.T, c *dropbox.Client, page dropbox.Page, err error) ([]dropbox.Entry, string, int) {
	t.Helper()
	pages := 1
	entries := page.Entries
	for err == nil && page.HasMore {
		page, err = c.ListFolderContinue(context.Background(), page.Cursor)
		entries = append(entries, page.Entries...)
		pages++
	}
	if err != nil {
		t.Fatal(err)
	}
	return entries, page.Cursor, pages
}

func byTag(entries []dropbox.Entry, tag string) []string {
	var out []string
	for _, e := range entries {
		if e.Tag == tag {
			out = append(out, e.PathDisplay)
		}
	}
	slices.Sort(out)
	return out
}

func TestListFolder(t *testing.T) {
	ctx := context.Background()
	want := files(25)
	srv, c, _ := newAPI(t, dropboxtest.Options{Files: want, PageSize: 10})
	page, err := c.ListFolder(ctx, "")
	entries, cursor, pages := listAll(t, c, page, err)

	var wantPaths []string
	for p := range want {
		wantPaths = append(wantPaths, p)
	}
	slices.Sort(wantPaths)
	if got := byTag(entries, dropbox.TagFile); !slices.Equal(got, wantPaths) {
		t.Errorf("files: got %d %v, want %d", len(got), got, len(wantPaths))
	}
	if got, want := byTag(entries, dropbox.TagFolder), []string{"/Docs", "/Docs/Sub0", "/Docs/Sub1", "/Docs/Sub2"}; !slices.Equal(got, want) {
		t.Errorf("folders: got %v, want %v", got, want)
	}
	if pages != 3 { // 29 entries, 10 a page
		t.Errorf("got %d pages, want 3", pages)
	}
	for _, e := range entries {
		if e.Tag == dropbox.TagFile && (e.ContentHash != dropbox.ContentHash(want[e.PathDisplay]) || e.Size != int64(len(want[e.PathDisplay])) || e.ID == "") {
			t.Errorf("%s: got hash %s size %d id %q, want the content's", e.PathDisplay, e.ContentHash, e.Size, e.ID)
		}
	}

	t.Run("changes since the cursor", func(t *testing.T) {
		srv.Put("/Docs/new.md", []byte("# new"))
		srv.Put("/Docs/Sub0/file00.txt", []byte("changed"))
		srv.Delete("/Docs/Sub1/file01.txt")
		page, err := c.ListFolderContinue(ctx, cursor)
		entries, next, _ := listAll(t, c, page, err)
		if got, want := byTag(entries, dropbox.TagFile), []string{"/Docs/Sub0/file00.txt", "/Docs/new.md"}; !slices.Equal(got, want) {
			t.Errorf("changed files: got %v, want %v", got, want)
		}
		if got, want := byTag(entries, dropbox.TagDeleted), []string{"/docs/sub1/file01.txt"}; !slices.Equal(got, want) {
			t.Errorf("deleted: got %v, want %v", got, want)
		}
		before := srv.Counts()
		page, err = c.ListFolderContinue(ctx, next)
		if err != nil || len(page.Entries) != 0 || page.HasMore {
			t.Errorf("no change: got %d entries, has_more %v, err %v; want none", len(page.Entries), page.HasMore, err)
		}
		if after := srv.Counts(); after.Continues != before.Continues+1 || after.Downloads != before.Downloads {
			t.Errorf("no change: got %+v after %+v, want one continue and no download", after, before)
		}
		cursor = page.Cursor
	})

	t.Run("reset cursor", func(t *testing.T) {
		srv.ResetCursors()
		_, err := c.ListFolderContinue(ctx, cursor)
		var ae *integrations.APIError
		if !errors.Is(err, dropbox.ErrCursorReset) || !errors.As(err, &ae) || ae.Status != http.StatusConflict || ae.Code != "reset" {
			t.Errorf("got %v, want ErrCursorReset from a 409 reset", err)
		}
		page, err := c.ListFolder(ctx, "")
		entries, _, _ := listAll(t, c, page, err)
		if got := len(byTag(entries, dropbox.TagFile)); got != 25 {
			t.Errorf("listing again: got %d files, want 25", got)
		}
	})

	t.Run("a cursor the fake did not issue", func(t *testing.T) {
		_, err := c.ListFolderContinue(ctx, "AAHforged")
		var ae *integrations.APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Temporary() {
			t.Errorf("got %v, want a permanent 400", err)
		}
	})

	t.Run("a cursor that cannot be Dropbox's", func(t *testing.T) {
		before := srv.Counts()
		_, err := c.ListFolderContinue(ctx, "bad cursor\n")
		if !errors.Is(err, integrations.ErrSkip) || srv.Counts() != before {
			t.Errorf("got %v and %+v, want ErrSkip without a request", err, srv.Counts())
		}
	})

	t.Run("sub-folder and a missing one", func(t *testing.T) {
		page, err := c.ListFolder(ctx, "/Docs/Sub2")
		entries, _, _ := listAll(t, c, page, err)
		if got := len(byTag(entries, dropbox.TagFile)); got != 8 {
			t.Errorf("got %d files in /Docs/Sub2, want 8", got)
		}
		_, err = c.ListFolder(ctx, "/Nope")
		if !errors.Is(err, dropbox.ErrNotFound) {
			t.Errorf("got %v, want ErrNotFound", err)
		}
		if _, err := c.ListFolder(ctx, "Docs"); err == nil {
			t.Error("a relative path: got no error")
		}
	})
}

func TestDownload(t *testing.T) {
	ctx := context.Background()
	srv, c, _ := newAPI(t, dropboxtest.Options{Files: map[string][]byte{
		"/small.txt": []byte("hello"), "/Café/naïve.txt": []byte("unicode path"), "/big.bin": make([]byte, 5000),
	}})
	page, err := c.ListFolder(ctx, "")
	entries, _, _ := listAll(t, c, page, err)
	ids := map[string]string{}
	for _, e := range entries {
		ids[e.PathDisplay] = e.ID
	}
	meta, data, err := c.Download(ctx, ids["/Café/naïve.txt"], 1000)
	if err != nil || string(data) != "unicode path" || meta.PathDisplay != "/Café/naïve.txt" || meta.ContentHash != dropbox.ContentHash(data) {
		t.Fatalf("got %+v %q %v, want the file and its metadata", meta, data, err)
	}
	if _, data, err := c.Download(ctx, ids["/small.txt"], 5); err != nil || string(data) != "hello" {
		t.Errorf("at the cap: got %q %v, want the file", data, err)
	}
	if _, data, err := c.Download(ctx, ids["/big.bin"], 4999); !errors.Is(err, dropbox.ErrFileTooLarge) || !errors.Is(err, integrations.ErrSkip) || data != nil {
		t.Errorf("over the cap: got %d bytes, %v; want ErrFileTooLarge", len(data), err)
	}
	srv.Delete("/small.txt")
	if _, _, err := c.Download(ctx, ids["/small.txt"], 100); !errors.Is(err, dropbox.ErrNotFound) {
		t.Errorf("deleted: got %v, want ErrNotFound", err)
	}
	before := srv.Counts()
	if _, _, err := c.Download(ctx, "/small.txt", 100); !errors.Is(err, integrations.ErrSkip) || srv.Counts() != before {
		t.Errorf("not an id: got %v, want ErrSkip without a request", err)
	}
}

func TestAPIErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		status     int
		retryAfter string
		code       string
		wait       time.Duration
		temporary  bool
	}{
		{"rate limited", http.StatusTooManyRequests, "7", "too_many_requests", 7 * time.Second, true},
		{"rate limited until a date", http.StatusTooManyRequests, now.Add(time.Minute).Format(http.TimeFormat), "too_many_requests", time.Minute, true},
		{"unavailable", http.StatusServiceUnavailable, "30", "", 30 * time.Second, true},
		{"internal error", http.StatusInternalServerError, "", "", 0, true},
		{"bad request", http.StatusBadRequest, "", "", 0, false},
	}
	srv, c, _ := newAPI(t, dropboxtest.Options{Files: map[string][]byte{"/a.txt": []byte("a")}})
	page, err := c.ListFolder(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	id := page.Entries[0].ID
	calls := map[string]func() error{
		"list":     func() error { _, err := c.ListFolder(ctx, ""); return err },
		"continue": func() error { _, err := c.ListFolderContinue(ctx, page.Cursor); return err },
		"download": func() error { _, _, err := c.Download(ctx, id, 100); return err },
	}
	for _, tt := range tests {
		for name, call := range calls {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				srv.Fail(1, tt.status, tt.retryAfter)
				err := call()
				var ae *integrations.APIError
				if !errors.As(err, &ae) {
					t.Fatalf("got %v, want *APIError", err)
				}
				if ae.Status != tt.status || ae.Code != tt.code || ae.RetryAfter != tt.wait || ae.Temporary() != tt.temporary {
					t.Errorf("got %+v (temporary %v), want %d %q after %v (temporary %v)", ae, ae.Temporary(), tt.status, tt.code, tt.wait, tt.temporary)
				}
				if strings.Contains(err.Error(), srv.AccessToken) {
					t.Errorf("error %q leaks the token", err)
				}
			})
		}
	}

	t.Run("expired token", func(t *testing.T) {
		srv.ExpireToken()
		for name, call := range calls {
			err := call()
			var ae *integrations.APIError
			if !errors.Is(err, integrations.ErrReauthRequired) || !errors.As(err, &ae) || ae.Code != "expired_access_token" {
				t.Errorf("%s: got %v, want ErrReauthRequired from 401 expired_access_token", name, err)
			}
		}
	})
}

func TestRateLimit(t *testing.T) {
	ctx := context.Background()
	srv, c, clk := newAPI(t, dropboxtest.Options{Files: files(3), RatePerMinute: 3})
	for i := range 3 {
		if _, err := c.ListFolder(ctx, ""); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		clk.Add(10 * time.Second)
	}
	_, err := c.ListFolder(ctx, "")
	var ae *integrations.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || ae.RetryAfter != 31*time.Second {
		t.Fatalf("fourth call in a minute: got %v, want 429 after 31s", err)
	}
	clk.Add(ae.RetryAfter)
	if _, err := c.ListFolder(ctx, ""); err != nil {
		t.Errorf("after Retry-After: got %v, want success", err)
	}
	if got := srv.Counts().Lists; got != 5 {
		t.Errorf("got %d list requests, want 5", got)
	}
}
