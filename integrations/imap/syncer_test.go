package imap_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
)

func TestSyncerIMAP(t *testing.T) {
	srv := imaptest.New(t)
	srv.AddMailbox("Archive", `\Archive`)
	srv.AddMailbox("Junk", `\Junk`)
	srv.AddMailbox("Trash", `\Trash`)
	fill(srv, "INBOX", 0, 5)
	fill(srv, "Archive", 5, 8)
	fill(srv, "Junk", 8, 10)
	fill(srv, "Trash", 10, 11)
	f := newE2E(t, srv, imap.Dialer{Limits: imap.Limits{BatchMessages: 2}})
	rec := f.connect()
	srv.ResetStats()

	// First sync: every message of INBOX and Archive, none of Junk and
	// Trash, in batches of two, through the index.
	f.runOnce()
	live := f.live(rec.ID)
	if got, want := titles(live), wantTitles(0, 8); !slices.Equal(got, want) {
		t.Fatalf("items after the first sync: got %q, want %q", got, want)
	}
	wantStats(t, srv, 8, map[string]int{"LIST": 1, "EXAMINE": 4, "UID SEARCH": 2, "UID FETCH": 2 + 5})
	if n, removed := f.ix.take(); n != 8 || len(removed) != 0 {
		t.Errorf("index after the first sync: %d indexed, %q removed; want 8 and none", n, removed)
	}
	f.wantView(rec.ID, records.StatusConnected, 8, "", true)
	for title, it := range live {
		text, err := f.syncer.Items().Text(&it)
		if err != nil || !strings.Contains(text, "body of "+title) {
			t.Errorf("item %q content: got %q, %v", title, text, err)
		}
	}

	// The folder states are kept as sync state, not in the credentials,
	// which the sync did not save again.
	recNow, _ := f.recs.ByID(rec.ID)
	creds, err := f.recs.Credentials(recNow)
	if err != nil {
		t.Fatal(err)
	}
	for k := range creds.Fields {
		if strings.HasPrefix(k, "state:") || strings.HasPrefix(k, "folder:") {
			t.Errorf("credentials hold %q after a sync", k)
		}
	}
	if !bytes.Equal(recNow.Credentials, rec.Credentials) {
		t.Error("the sync saved the credentials again, want them as connected")
	}

	// Second sync, nothing changed: one EXAMINE per folder, nothing else.
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 2})
	if n, removed := f.ix.take(); n != 0 || len(removed) != 0 {
		t.Errorf("index after a quiet sync: %d indexed, %q removed; want none", n, removed)
	}
	f.wantView(rec.ID, records.StatusConnected, 8, "", true)

	// New mail: only it is downloaded.
	fill(srv, "INBOX", 20, 23)
	f.next()
	wantStats(t, srv, 3, map[string]int{"LIST": 1, "EXAMINE": 3, "UID SEARCH": 1, "UID FETCH": 1 + 2})
	live = f.live(rec.ID)
	if got, want := titles(live), append(wantTitles(0, 8), wantTitles(20, 23)...); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("items after new mail: got %q", got)
	}
	if n, _ := f.ix.take(); n != 3 {
		t.Errorf("indexed after new mail: got %d, want 3", n)
	}

	// A new UIDVALIDITY: the same items, re-keyed, nothing downloaded,
	// nothing for the index (the items' ids stay).
	before := f.live(rec.ID)
	srv.Renumber("Archive")
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 2, "UID SEARCH": 1, "UID FETCH": 1})
	after := f.live(rec.ID)
	if !sameIDs(before, after) {
		t.Errorf("items after a renumbering: got %v, want the same ids as %v", after, before)
	}
	if n, removed := f.ix.take(); n != 0 || len(removed) != 0 {
		t.Errorf("index after a renumbering: %d indexed, %q removed; want none", n, removed)
	}
	for _, title := range wantTitles(5, 8) {
		it := after[title]
		m, _ := f.syncer.Items().OpenMeta(&it)
		id, err := imap.ParseID(m.ProviderID)
		if err != nil || id.Folder != "Archive" || !slices.Contains(srv.UIDs("Archive"), id.UID) {
			t.Errorf("item %q after the renumbering: provider id %q, %v", title, m.ProviderID, err)
		}
	}
	// The next sync is quiet again: the state was stored.
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 2})

	// Expunged mail leaves the items, their files and the index.
	srv.Expunge("INBOX", srv.UIDs("INBOX")[1])
	gone := idsOf(after, "message 1")
	expunged := after["message 1"]
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 2, "UID SEARCH": 1})
	if _, removed := f.ix.take(); !slices.Equal(removed, gone) {
		t.Errorf("removed from the index after an expunge: got %q, want %q", removed, gone)
	}
	if _, ok := f.live(rec.ID)["message 1"]; ok {
		t.Error("an expunged message is still a live item")
	}
	f.wantView(rec.ID, records.StatusConnected, len(f.live(rec.ID)), "", true)
	// Its text in the record's pack is overwritten: the old place no
	// longer opens.
	if text, err := f.syncer.Items().Text(&expunged); !errors.Is(err, items.ErrContentDamaged) && !errors.Is(err, items.ErrContentMissing) {
		t.Errorf("text of an expunged message: %q, %v; want it gone", text, err)
	}

	// A folder deleted on the server: its items go.
	gone = idsOf(after, wantTitles(5, 8)...)
	srv.DeleteMailbox("Archive")
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 1})
	if _, removed := f.ix.take(); !slices.Equal(removed, gone) {
		t.Errorf("removed from the index after a folder's deletion: got %q, want %q", removed, gone)
	}
	want := slices.Sorted(slices.Values(append([]string{"message 0", "message 2", "message 3", "message 4"}, wantTitles(20, 23)...)))
	if got := titles(f.live(rec.ID)); !slices.Equal(got, want) {
		t.Errorf("items after a folder's deletion: got %q, want %q", got, want)
	}
	// itemsSynced is what the record holds now: the expunged message
	// and the deleted folder's mails left the count with the items.
	f.wantView(rec.ID, records.StatusConnected, len(want), "", true)

	assertNothingPlain(t, f.dir, "ana@example.com", "bo@example.com", "body of message", "Subject: message",
		"message 2", imaptest.Password, imaptest.Username, "Archive", "UIDVALIDITY")
}

// A first sync of many mails shows its downloads: after each commit the
// record's activity is downloading, with itemsLeft the messages of the
// batches still queued, and itemsTotal the messages the sync planned.
func TestSyncerIMAPProgress(t *testing.T) {
	const mails = 100
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, mails)
	f := newE2E(t, srv, imap.Dialer{Limits: imap.Limits{BatchMessages: 1}})
	rec := f.connect()
	var seen []syncer.Activity
	f.ix.mu.Lock()
	f.ix.onIndex = func() { seen = append(seen, f.syncer.Activity(rec.ID)) }
	f.ix.mu.Unlock()

	f.runOnce()
	// The syncer commits every 32 finished tasks: after 32, 64 and 96
	// batches of one message, then the last four with folderDone.
	want := []syncer.Activity{
		{State: syncer.ActivityDownloading, Pending: 68 + 1, ItemsLeft: 68, ItemsTotal: mails},
		{State: syncer.ActivityDownloading, Pending: 36 + 1, ItemsLeft: 36, ItemsTotal: mails},
		{State: syncer.ActivityDownloading, Pending: 4 + 1, ItemsLeft: 4, ItemsTotal: mails},
		{State: syncer.ActivityIdle},
	}
	if !slices.Equal(seen, want) {
		t.Errorf("activity after each commit of the first sync:\ngot  %+v\nwant %+v", seen, want)
	}
	if n := len(f.live(rec.ID)); n != mails {
		t.Errorf("items after the first sync: got %d, want %d", n, mails)
	}
}

// After a restart in the middle of a first sync, the count goes on from
// what was left: the total is kept in memory only, nothing is written
// for it.
func TestSyncerIMAPProgressRestart(t *testing.T) {
	const mails = 100
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, mails)
	f := newE2E(t, srv, imap.Dialer{Limits: imap.Limits{BatchMessages: 1}})
	rec := f.connect()
	ctx, cancel := context.WithCancel(context.Background())
	var seen []syncer.Activity
	f.ix.mu.Lock()
	f.ix.onIndex = func() {
		cancel() // stop the service after the first commit of downloads
		seen = append(seen, f.syncer.Activity(rec.ID))
	}
	f.ix.mu.Unlock()
	if err := f.syncer.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	want := []syncer.Activity{{State: syncer.ActivityDownloading, Pending: 68 + 1, ItemsLeft: 68, ItemsTotal: mails}}
	if !slices.Equal(seen, want) {
		t.Fatalf("activity after the first commit: got %+v, want %+v", seen, want)
	}

	f.reopen(f.def)
	seen = nil
	if a, want := f.syncer.Activity(rec.ID), (syncer.Activity{State: syncer.ActivityDownloading, Pending: 68 + 1, ItemsLeft: 68, ItemsTotal: 68}); a != want {
		t.Errorf("activity after the restart: got %+v, want %+v", a, want)
	}
	f.runOnce()
	want = []syncer.Activity{
		{State: syncer.ActivityDownloading, Pending: 36 + 1, ItemsLeft: 36, ItemsTotal: 68},
		{State: syncer.ActivityDownloading, Pending: 4 + 1, ItemsLeft: 4, ItemsTotal: 68},
		{State: syncer.ActivityIdle},
	}
	if !slices.Equal(seen, want) {
		t.Errorf("activity after each commit since the restart:\ngot  %+v\nwant %+v", seen, want)
	}
	if n := len(f.live(rec.ID)); n != mails {
		t.Errorf("items after the sync: got %d, want %d", n, mails)
	}
}
