package api_test

import (
	"context"
	"testing"

	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/storage"
)

// A first sync leaves no dead record per mail in the main log: its
// downloads are one task a listed page, not one a message, so the log's
// dead records (what compaction rewrites away) grow with the pages: 27
// for these three (the record's and the listing's progress, the tasks),
// where one task a message left 528.
func TestGmailSyncLeavesNoDeadRecordPerMail(t *testing.T) {
	const total, pages = 250, 3
	g := newGmailSync(t, gmailtest.Options{Messages: total}, storage.SyncNone)
	rec, err := g.records.Connect("u1", gmail.Domain, g.gm.Credentials())
	if err != nil {
		t.Fatal(err)
	}
	if err := g.syncer.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, _ := g.records.ByID(rec.ID)
	if got.ItemsSynced != total {
		t.Fatalf("synced %d items (%s %q), want %d", got.ItemsSynced, got.Status, got.LastError, total)
	}
	st := g.st.Stats()
	if st.LiveRecords < total || st.DeadRecords > 10*pages {
		t.Errorf("after a sync of %d mails: %d live records, %d dead; want at least %d live and at most %d dead",
			total, st.LiveRecords, st.DeadRecords, total, 10*pages)
	}
}
