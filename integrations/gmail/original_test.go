package gmail_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/integrations/syncer/syncfx"
)

// withAttachments is message seq with a binary PDF and a text file named
// in UTF-8 attached.
func withAttachments(seq int, pdf []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString(pdf)
	var lines []string
	for len(b64) > 76 {
		lines, b64 = append(lines, b64[:76]), b64[76:]
	}
	lines = append(lines, b64)
	return []byte("From: ann@example.com\r\nTo: bo@example.com\r\nSubject: " + gmailtest.Subject(seq) +
		"\r\nDate: Mon, 02 Mar 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nThe figures are attached.\r\n" +
		"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"q3.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		strings.Join(lines, "\r\n") + "\r\n" +
		"--b\r\nContent-Type: text/html; name=\"=?UTF-8?Q?r=C3=A9sum=C3=A9.html?=\"\r\nContent-Disposition: attachment\r\n\r\n<script>alert(1)</script>\r\n" +
		"--b--\r\n")
}

func errorOf(t *testing.T, a syncfx.Answer) (code, message string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(a.Body, &e); err != nil {
		t.Fatalf("answer %d %q: %v", a.Status, a.Body, err)
	}
	return e.Error.Code, e.Error.Message
}

// TestAttachmentDownload: an attachment of a synced Gmail message is
// fetched from Gmail again (the service keeps no raw mail) and answered
// byte for byte with the download headers, to its owner only; the whole
// message is the item's original; a message deleted at Gmail since is 404
// attachment no longer available, and Gmail failing is a 502 in words.
func TestAttachmentDownload(t *testing.T) {
	pdf := make([]byte, 5000)
	for i := range pdf {
		pdf[i] = byte(i * 13)
	}
	gm := gmailtest.New(t, gmailtest.Options{Messages: 2, Message: func(seq int) []byte { return withAttachments(seq, pdf) }})
	fx := syncfx.New(t, syncfx.Options{Definition: gmail.Definition(), Client: gm.Client(), Env: map[string]string{
		"GMAIL_OAUTH_CLIENT_ID": "gmailtest-client", "GMAIL_OAUTH_CLIENT_SECRET": "gmailtest-secret", "GMAIL_API_BASE_URL": gm.URL}})
	rec := fx.Connect("u1", gm.Credentials())
	fx.Sync(rec)
	item := fx.Items(rec)[gmailtest.ID(2)]
	if item.ID == "" {
		t.Fatalf("message 2 not synced: %v", fx.Items(rec))
	}
	_, gets := gm.Requests()

	a := fx.Get("u1", "/v1/items/"+item.ID+"/attachments/0")
	if a.Status != 200 || a.Err != nil || !bytes.Equal(a.Body, pdf) {
		t.Fatalf("attachment 0: %d (%v), %d bytes, want the PDF's %d", a.Status, a.Err, len(a.Body), len(pdf))
	}
	if _, now := gm.Requests(); now != gets+1 {
		t.Errorf("%d messages.get for one download, want 1", now-gets)
	}
	for k, v := range map[string]string{"Content-Type": "application/pdf", "Content-Disposition": "attachment; filename=q3.pdf",
		"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"} {
		if got := a.Header.Get(k); got != v {
			t.Errorf("attachment 0 %s: %q, want %q", k, got, v)
		}
	}
	// A script the sender attached is a file to save, never a page.
	a = fx.Get("u1", "/v1/items/"+item.ID+"/attachments/1")
	if a.Status != 200 || string(a.Body) != "<script>alert(1)</script>" ||
		a.Header.Get("Content-Disposition") != "attachment; filename*=utf-8''r%C3%A9sum%C3%A9.html" ||
		a.Header.Get("Content-Security-Policy") != "sandbox" || a.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("attachment 1: %d %q %v", a.Status, a.Body, a.Header)
	}
	// The whole message, as Gmail has it.
	a = fx.Get("u1", "/v1/items/"+item.ID+"/original")
	if a.Status != 200 || !bytes.Equal(a.Body, withAttachments(2, pdf)) || a.Header.Get("Content-Type") != "message/rfc822" ||
		a.Header.Get("Content-Disposition") != `attachment; filename="`+gmailtest.Subject(2)+`.eml"` {
		t.Errorf("original: %d, %d bytes, %v", a.Status, len(a.Body), a.Header)
	}

	for _, tc := range []struct{ user, path, status, code, msg string }{
		{"u2", "/attachments/0", "404", "item_not_found", "item not found"},
		{"u1", "/attachments/2", "404", "attachment_not_found", "attachment not found"},
		{"u1", "/attachments/x", "404", "attachment_not_found", "attachment not found"},
		{"u1", "/attachments/-1", "404", "attachment_not_found", "attachment not found"},
	} {
		a := fx.Get(tc.user, "/v1/items/"+item.ID+tc.path)
		if code, msg := errorOf(t, a); itoa(a.Status) != tc.status || code != tc.code || msg != tc.msg {
			t.Errorf("%s %s: %d %s %q, want %s %s %q", tc.user, tc.path, a.Status, code, msg, tc.status, tc.code, tc.msg)
		}
	}

	gm.Fail(1, 500, "")
	a = fx.Get("u1", "/v1/items/"+item.ID+"/attachments/0")
	if code, msg := errorOf(t, a); a.Status != 502 || code != "provider_failed" || msg != "Gmail is having trouble at the moment (it answered 500)." {
		t.Errorf("Gmail failing: %d %s %q", a.Status, code, msg)
	}
	gm.Delete(2)
	a = fx.Get("u1", "/v1/items/"+item.ID+"/attachments/0")
	if code, msg := errorOf(t, a); a.Status != 404 || code != "attachment_gone" || msg != "attachment no longer available" {
		t.Errorf("deleted at Gmail: %d %s %q", a.Status, code, msg)
	}
	if found := fx.PlainText(string(pdf[:64]), "<script>alert(1)</script>"); len(found) > 0 {
		t.Errorf("in plain text on disk: %v", found)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
