package dropbox_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"searchsvc/integrations/dropbox"
	"searchsvc/integrations/dropbox/dropboxtest"
)

// TestOriginal: GET /v1/items/{id}/original streams a Dropbox file from
// Dropbox again, by its file id, so a file moved since still downloads;
// content that does not match its content hash cuts the download off
// (the answer ends without its last chunk: the client sees it fail and
// never takes a damaged file for whole); a file deleted at
// Dropbox is 404 file no longer available.
func TestOriginal(t *testing.T) {
	photo := bytes.Repeat([]byte("\xff\xd8\xff\xe0 jpeg "), 20000)
	r := newSyncRig(t, dropboxtest.Options{Files: map[string][]byte{"/photo.jpg": photo, "/a.txt": []byte("alpha")}},
		dropbox.Config{MaxFileSize: 1 << 10})
	r.fx.Sync(r.rec)
	files := r.byPath(t)
	id := files["/photo.jpg"].ID

	a := r.fx.Get("user-1", "/v1/items/"+id+"/original")
	if a.Status != 200 || a.Err != nil || !bytes.Equal(a.Body, photo) || a.Header.Get("Content-Type") != "image/jpeg" ||
		a.Header.Get("Content-Disposition") != "attachment; filename=photo.jpg" || a.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Fatalf("photo: %d (%v), %d bytes, %v", a.Status, a.Err, len(a.Body), a.Header)
	}
	r.fake.Move("/photo.jpg", "/Pictures/photo.jpg")
	if a := r.fx.Get("user-1", "/v1/items/"+id+"/original"); a.Status != 200 || !bytes.Equal(a.Body, photo) {
		t.Errorf("moved since the sync: %d, %d bytes", a.Status, len(a.Body))
	}

	r.tap.mu.Lock()
	r.tap.corrupt = true
	r.tap.mu.Unlock()
	if a := r.fx.Get("user-1", "/v1/items/"+id+"/original"); a.Err == nil {
		t.Errorf("damaged content: %d, %d bytes, %v; want the download cut off", a.Status, len(a.Body), a.Err)
	}
	r.tap.mu.Lock()
	r.tap.corrupt = false
	r.tap.mu.Unlock()

	r.fake.Delete("/Pictures/photo.jpg")
	a = r.fx.Get("user-1", "/v1/items/"+id+"/original")
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(a.Body, &e); err != nil || a.Status != 404 || e.Error.Code != "file_gone" || e.Error.Message != "file no longer available" {
		t.Errorf("deleted at Dropbox: %d %q", a.Status, a.Body)
	}
}
