package imap_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
)

// get asks for path as user and returns the answer and, for an error,
// its code and message.
func (f *e2e) get(user, path string) (rec *httptest.ResponseRecorder, code, msg string) {
	f.t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("X-Test-User", user)
	rec = httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	var e struct {
		Error struct{ Code, Message string }
	}
	if rec.Code != 200 {
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			f.t.Fatalf("GET %s: %d %q", path, rec.Code, rec.Body)
		}
	}
	return rec, e.Error.Code, e.Error.Message
}

// TestAttachmentFetched: an IMAP mail's attachment is fetched from the
// server again, by the UID its item names (UID FETCH, BODY.PEEK), and
// answered whole with the download headers; once the server expunged the
// mail, or renumbered the folder, it is 404 attachment no longer
// available.
func TestAttachmentFetched(t *testing.T) {
	srv := imaptest.New(t)
	raw := "From: ann@example.com\r\nSubject: timetable\r\nMessage-ID: <t1@example.com>\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n" +
		"--b\r\nContent-Type: text/plain; name=\"ferry times.txt\"\r\nContent-Disposition: attachment\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
		"Zanzibar 09:15 =E2=86=92 Dar\r\n--b--\r\n"
	uid := srv.Append("INBOX", []byte(raw), time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	srv.Append("INBOX", []byte(strings.Replace(raw, "timetable", "second", 1)), time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	f := newE2E(t, srv, imap.Dialer{})
	rec := f.connect()
	f.runOnce()
	it, ok := f.live(rec.ID)["timetable"]
	second := f.live(rec.ID)["second"]
	if !ok {
		t.Fatalf("the mail was not synced: %v", f.live(rec.ID))
	}
	srv.ResetStats()

	w, code, msg := f.get("u1", "/v1/items/"+it.ID+"/attachments/0")
	if w.Code != 200 || w.Body.String() != "Zanzibar 09:15 → Dar" {
		t.Fatalf("attachment: %d %s %q %q", w.Code, code, msg, w.Body)
	}
	if h := w.Header(); h.Get("Content-Disposition") != `attachment; filename="ferry times.txt"` || h.Get("Content-Type") != "text/plain" ||
		h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Security-Policy") != "sandbox" {
		t.Errorf("headers: %v", h)
	}
	wantStats(t, srv, 1, map[string]int{"EXAMINE": 1, "UID FETCH": 1})
	if w, _, _ := f.get("u1", "/v1/items/"+it.ID+"/original"); w.Code != 200 || w.Body.String() != raw ||
		w.Header().Get("Content-Disposition") != `attachment; filename=timetable.eml` {
		t.Errorf("original: %d %q %v", w.Code, w.Body, w.Header())
	}
	if w, code, _ := f.get("u2", "/v1/items/"+it.ID+"/attachments/0"); w.Code != 404 || code != "item_not_found" {
		t.Errorf("another user: %d %s", w.Code, code)
	}

	srv.Expunge("INBOX", uid)
	if w, code, msg := f.get("u1", "/v1/items/"+it.ID+"/attachments/0"); w.Code != 404 || code != "attachment_gone" || msg != "attachment no longer available" {
		t.Errorf("expunged: %d %s %q", w.Code, code, msg)
	}
	if w, _, _ := f.get("u1", "/v1/items/"+second.ID+"/attachments/0"); w.Code != 200 {
		t.Errorf("the other mail: %d %q", w.Code, w.Body)
	}
	srv.Renumber("INBOX")
	if w, code, msg := f.get("u1", "/v1/items/"+second.ID+"/attachments/0"); w.Code != 404 || code != "attachment_gone" || msg != "attachment no longer available" {
		t.Errorf("folder renumbered: %d %s %q", w.Code, code, msg)
	}
}
