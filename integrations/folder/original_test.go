package folder_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"searchsvc/integrations/folder"
	"searchsvc/integrations/syncer/syncfx"
)

// apiError is the error envelope of an answer.
func apiError(t *testing.T, a syncfx.Answer) (code, message string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(a.Body, &e); err != nil {
		t.Fatalf("answer %d %q: %v", a.Status, a.Body, err)
	}
	return e.Error.Code, e.Error.Message
}

// TestOriginal: GET /v1/items/{id}/original gives a folder file's bytes
// as the file is now, to its owner only, with the download headers; a
// file removed since is 404 file no longer available, a folder gone a
// 502 that says so; nothing in the folder is written.
func TestOriginal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "docs")
	binary := make([]byte, 3000)
	for i := range binary {
		binary[i] = byte(i * 7)
	}
	mtime := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	write(t, filepath.Join(dir, "notes.txt"), "ferry at nine", mtime)
	write(t, filepath.Join(dir, "sub", "scan.pdf"), string(binary), mtime)
	r := newRig(t, dir, folder.Config{})
	r.sync()
	files := r.byPath()

	a := r.fx.Get("u1", "/v1/items/"+files["sub/scan.pdf"].ID+"/original")
	if a.Status != 200 || a.Err != nil || !bytes.Equal(a.Body, binary) {
		t.Fatalf("scan.pdf: %d (%v), %d bytes, want 200 and the file's %d", a.Status, a.Err, len(a.Body), len(binary))
	}
	want := map[string]string{
		"Content-Type":            "application/pdf",
		"Content-Disposition":     `attachment; filename=scan.pdf`,
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": "sandbox",
		"Cache-Control":           "private, no-store",
	}
	for k, v := range want {
		if got := a.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}

	// The file as it is now, changed since the sync.
	write(t, filepath.Join(dir, "notes.txt"), "ferry at ten", mtime.Add(time.Hour))
	before := snapshot(t, dir)
	if a := r.fx.Get("u1", "/v1/items/"+files["notes.txt"].ID+"/original"); a.Status != 200 || string(a.Body) != "ferry at ten" ||
		a.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("notes.txt: %d %q %q", a.Status, a.Body, a.Header.Get("Content-Type"))
	}

	// Another user's item is not found, as an unknown one.
	if a := r.fx.Get("u2", "/v1/items/"+files["notes.txt"].ID+"/original"); a.Status != 404 {
		t.Errorf("another user: %d %s", a.Status, a.Body)
	} else if code, msg := apiError(t, a); code != "item_not_found" || msg != "item not found" {
		t.Errorf("another user: %s %q", code, msg)
	}
	if after := snapshot(t, dir); after != before {
		t.Fatalf("the download changed the folder:\nbefore %s\nafter  %s", before, after)
	}

	// A file made a FIFO or a link since the sync is not opened: a FIFO
	// could hold the download for ever, a link lead anywhere.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	write(t, outside, "not in the folder", mtime)
	if err := os.Remove(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "notes.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	a = r.fx.Get("u1", "/v1/items/"+files["notes.txt"].ID+"/original")
	if code, msg := apiError(t, a); a.Status != 404 || code != "file_gone" || msg != "file no longer available" {
		t.Errorf("a FIFO: %d %s %q", a.Status, code, msg)
	}
	if err := os.Remove(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	a = r.fx.Get("u1", "/v1/items/"+files["notes.txt"].ID+"/original")
	if code, _ := apiError(t, a); a.Status != 404 || code != "file_gone" {
		t.Errorf("a link out of the folder: %d %s %q", a.Status, code, a.Body)
	}

	// Removed since: gone.
	if err := os.Remove(filepath.Join(dir, "sub", "scan.pdf")); err != nil {
		t.Fatal(err)
	}
	a = r.fx.Get("u1", "/v1/items/"+files["sub/scan.pdf"].ID+"/original")
	if code, msg := apiError(t, a); a.Status != 404 || code != "file_gone" || msg != "file no longer available" {
		t.Errorf("removed file: %d %s %q", a.Status, code, msg)
	}
	// The folder itself gone (a NAS not mounted): said in words.
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	a = r.fx.Get("u1", "/v1/items/"+files["notes.txt"].ID+"/original")
	if code, msg := apiError(t, a); a.Status != 502 || code != "provider_failed" ||
		msg != "Folder on this server: the folder cannot be read: it is gone, not mounted, or the service may not read it." {
		t.Errorf("folder gone: %d %s %q", a.Status, code, msg)
	}
	// A file item has no attachments.
	a = r.fx.Get("u1", "/v1/items/"+files["notes.txt"].ID+"/attachments/0")
	if code, _ := apiError(t, a); a.Status != 404 || code != "attachment_not_found" {
		t.Errorf("attachment of a file: %d %s", a.Status, code)
	}
}
