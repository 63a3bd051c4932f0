package imap_test

import (
	"testing"
	"time"

	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
)

// TestMovedMailFolder: a mail moved from the INBOX to the archive (an
// expunge there, a new UID here) is stored under the mailbox it is in
// now, so in:archive finds it and in:inbox no longer does.
func TestMovedMailFolder(t *testing.T) {
	srv := imaptest.New(t)
	srv.AddMailbox("Archive", `\Archive`)
	raw := []byte("From: ann@example.com\r\nSubject: moving\r\nMessage-ID: <mv@example.com>\r\n\r\nbody\r\n")
	date := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	uid := srv.Append("INBOX", raw, date)
	f := newE2E(t, srv, imap.Dialer{})
	rec := f.connect()
	f.runOnce()
	folderOf := func() (string, string) {
		it, ok := f.live(rec.ID)["moving"]
		if !ok {
			t.Fatalf("the mail is not stored: %v", f.live(rec.ID))
		}
		m, err := f.syncer.Items().OpenMeta(&it)
		if err != nil {
			t.Fatal(err)
		}
		return m.Folder, m.FolderUse
	}
	if folder, use := folderOf(); folder != "INBOX" || use != "inbox" {
		t.Fatalf("first sync: %q %q", folder, use)
	}
	srv.Expunge("INBOX", uid)
	srv.Append("Archive", raw, date)
	f.next()
	if folder, use := folderOf(); folder != "Archive" || use != "archive" {
		t.Errorf("after the move: %q %q, want Archive archive", folder, use)
	}
	if n := len(f.live(rec.ID)); n != 1 {
		t.Errorf("%d items after the move, want 1", n)
	}
}
