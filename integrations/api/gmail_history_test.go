package api_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/storage"
)

// Gmail's partial sync through the real Syncer, store and item files.

// providerIDs returns the provider ids of the record's live items.
func (g *gmailSync) providerIDs(t testing.TB, recordID string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	for _, it := range g.syncer.Items().ForRecord(recordID) {
		if !it.Live() {
			continue
		}
		m, err := g.syncer.Items().OpenMeta(&it)
		if err != nil {
			t.Fatal(err)
		}
		out[m.ProviderID] = it.ID
	}
	return out
}

func (g *gmailSync) runOnce(t testing.TB) {
	t.Helper()
	if err := g.syncer.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestGmailHistorySync(t *testing.T) {
	const total = 150
	g := newGmailSync(t, gmailtest.Options{Messages: total}, storage.SyncNone)
	rec, err := g.records.Connect("u1", gmail.Domain, g.gm.Credentials())
	if err != nil {
		t.Fatal(err)
	}
	g.runOnce(t)
	if c := g.gm.Counts(); c != (gmailtest.Counts{Profiles: 1, Lists: 2, Gets: total}) {
		t.Fatalf("first sync: got %+v, want a profile, 2 pages and %d downloads", c, total)
	}
	got, _ := g.records.ByID(rec.ID)
	if got.ItemsSynced != total {
		t.Fatalf("record after the first sync: itemsSynced %d, want %d", got.ItemsSynced, total)
	}
	ids := g.providerIDs(t, rec.ID)

	// Mail dated among the oldest, two deletions, new mail.
	old := g.gm.AddDated(gmailtest.Date(2))
	g.gm.Delete(5)
	g.gm.Delete(total)
	g.gm.Add(3)
	before := g.gm.Counts()
	g.runOnce(t)
	c := g.gm.Counts()
	if c.Histories-before.Histories != 1 || c.Gets-before.Gets != 4 || c.Lists != before.Lists || c.Profiles != before.Profiles {
		t.Errorf("history sync: got %+v after %+v; want 1 history request and 4 downloads", c, before)
	}
	now := g.providerIDs(t, rec.ID)
	if _, ok := now[gmailtest.ID(old)]; !ok {
		t.Errorf("mail that arrived out of date order was not stored")
	}
	for _, seq := range []int{5, total} {
		if _, ok := now[gmailtest.ID(seq)]; ok {
			t.Errorf("message %d, deleted in Gmail, is still an item", seq)
		}
	}
	if len(now) != total-2+4 {
		t.Errorf("live items: got %d, want %d", len(now), total-2+4)
	}
	_, removed := g.index.got()
	slices.Sort(removed)
	want := []string{ids[gmailtest.ID(5)], ids[gmailtest.ID(total)]}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("Indexer.Remove: got %v, want the items of messages 5 and %d %v", removed, total, want)
	}
	if _, err := g.syncer.Items().Get("u1", ids[gmailtest.ID(5)]); err != items.ErrNotFound {
		t.Errorf("GET the deleted message's item: got %v, want ErrNotFound", err)
	}

	// No change: one history request, no download.
	before = g.gm.Counts()
	g.runOnce(t)
	if c := g.gm.Counts(); c.Histories-before.Histories != 1 || c.Gets != before.Gets || c.Lists != before.Lists {
		t.Errorf("sync without change: got %+v after %+v; want one history request only", c, before)
	}
	got, _ = g.records.ByID(rec.ID)
	// itemsSynced is what the record holds: the two deleted mails left it.
	if got.Status != records.StatusConnected || got.ItemsSynced != total-2+4 || got.LastSyncAt == nil {
		t.Errorf("record: %s %q, itemsSynced %d", got.Status, got.LastError, got.ItemsSynced)
	}
}

func TestGmailExpiredHistoryListsWithoutDownloadingAgain(t *testing.T) {
	const total = 220
	g := newGmailSync(t, gmailtest.Options{Messages: total}, storage.SyncNone)
	rec, err := g.records.Connect("u1", gmail.Domain, g.gm.Credentials())
	if err != nil {
		t.Fatal(err)
	}
	g.runOnce(t)
	g.gm.Add(2)
	g.gm.ExpireHistory()
	before := g.gm.Counts()
	g.runOnce(t)
	c := g.gm.Counts()
	if c.Histories-before.Histories != 1 || c.Profiles-before.Profiles != 1 || c.Lists-before.Lists != 3 || c.Gets-before.Gets != 2 {
		t.Errorf("got %+v after %+v; want a refused history request, a profile, 3 pages and the 2 new messages", c, before)
	}
	if n := len(g.providerIDs(t, rec.ID)); n != total+2 {
		t.Errorf("live items: got %d, want %d", n, total+2)
	}
	// And the history works again from the new historyId.
	g.gm.Add(1)
	before = g.gm.Counts()
	g.runOnce(t)
	if c := g.gm.Counts(); c.Histories-before.Histories != 1 || c.Gets-before.Gets != 1 || c.Lists != before.Lists {
		t.Errorf("after the listing: got %+v after %+v; want one history request and one download", c, before)
	}
}

// Mail deleted in Gmail while the history was out of reach leaves the
// items at the full listing a 404 starts, and a message missing from the
// store (its download dropped) is fetched again; nothing else is.
func TestGmailExpiredHistoryRemovesDeletedMail(t *testing.T) {
	const total = 220 // pages of 100, 100 and 20
	g := newGmailSync(t, gmailtest.Options{Messages: total}, storage.SyncNone)
	rec, err := g.records.Connect("u1", gmail.Domain, g.gm.Credentials())
	if err != nil {
		t.Fatal(err)
	}
	g.runOnce(t)
	stored := g.providerIDs(t, rec.ID)
	// A download dropped for good: the message is not in the store.
	dropped := gmailtest.ID(150)
	ops, _ := g.syncer.Items().RemoveProviderOps(rec.ID, []string{dropped}, g.now())
	if err := g.st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	// Two messages deleted, one on the first page and one on the last,
	// and the history that said so expires.
	g.gm.Delete(210)
	g.gm.Delete(3)
	g.gm.ExpireHistory()
	_, removedBefore := g.index.got()
	before := g.gm.Counts()
	g.runOnce(t)
	c := g.gm.Counts()
	if c.Lists-before.Lists != 3 || c.Gets-before.Gets != 1 {
		t.Errorf("got %+v after %+v; want 3 pages and 1 download (the dropped one)", c, before)
	}
	live := g.providerIDs(t, rec.ID)
	if len(live) != total-2 {
		t.Errorf("live items: got %d, want %d", len(live), total-2)
	}
	for _, seq := range []int{3, 210} {
		if _, ok := live[gmailtest.ID(seq)]; ok {
			t.Errorf("message %d, deleted in Gmail, is still an item", seq)
		}
	}
	if _, ok := live[dropped]; !ok {
		t.Error("the dropped message was not fetched again")
	}
	_, removed := g.index.got()
	want := []string{stored[gmailtest.ID(3)], stored[gmailtest.ID(210)]}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(removed[len(removedBefore):]))
	if !slices.Equal(got, want) {
		t.Errorf("removed from the index: got %v, want %v", got, want)
	}
	// The listing's page keys are forgotten once it ends.
	g.gm.Add(1)
	before = g.gm.Counts()
	g.runOnce(t)
	if c := g.gm.Counts(); c.Histories-before.Histories != 1 || c.Gets-before.Gets != 1 || c.Lists != before.Lists {
		t.Errorf("after the listing: got %+v after %+v; want one history request and one download", c, before)
	}
}

func TestGmailInterruptedFirstListingResumes(t *testing.T) {
	const total = 250 // pages at seq 250, 150 and 50
	var mu sync.Mutex
	failing := true
	firstPages := 0
	g := newGmailSync(t, gmailtest.Options{Messages: total, Fault: func(r *http.Request) (int, string) {
		if r.URL.Path != "/gmail/v1/users/me/messages" {
			return 0, ""
		}
		mu.Lock()
		defer mu.Unlock()
		switch tok := r.URL.Query().Get("pageToken"); {
		case tok == "":
			firstPages++
		case tok == "150" && failing:
			return http.StatusServiceUnavailable, ""
		}
		return 0, ""
	}}, storage.SyncNone)
	rec, err := g.records.Connect("u1", gmail.Domain, g.gm.Credentials())
	if err != nil {
		t.Fatal(err)
	}
	// The second page fails until its task is dropped for good.
	for i := 0; i < 40 && (i == 0 || g.syncer.Pending(rec.ID) > 0); i++ {
		g.runOnce(t)
		g.advance(2 * time.Hour)
	}
	if n := g.syncer.Pending(rec.ID); n != 0 {
		t.Fatalf("the failing page is still queued (%d tasks)", n)
	}
	got, _ := g.records.ByID(rec.ID)
	if got.Status != records.StatusError || got.ItemsSynced != 100 {
		t.Fatalf("record after the dropped page: %s %q, itemsSynced %d; want error and the first page's 100", got.Status, got.LastError, got.ItemsSynced)
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	before := g.gm.Counts()
	g.runOnce(t)
	c := g.gm.Counts()
	mu.Lock()
	first := firstPages
	mu.Unlock()
	if first != 1 || c.Gets-before.Gets != total-100 || c.Profiles != before.Profiles {
		t.Errorf("resumed listing: first page listed %d times, %d downloads; want once, and the %d messages not stored",
			first, c.Gets-before.Gets, total-100)
	}
	got, _ = g.records.ByID(rec.ID)
	if got.Status != records.StatusConnected || got.ItemsSynced != total || len(g.providerIDs(t, rec.ID)) != total {
		t.Errorf("record: %s %q, itemsSynced %d; want connected, %d", got.Status, got.LastError, got.ItemsSynced, total)
	}
	// The listing is over: the next sync reads the history.
	before = g.gm.Counts()
	g.runOnce(t)
	if c := g.gm.Counts(); c.Histories-before.Histories != 1 || c.Lists != before.Lists || c.Gets != before.Gets {
		t.Errorf("next sync: got %+v after %+v; want one history request", c, before)
	}
}

// BenchmarkGmailSecondSync is a Gmail sync with no change after a first
// sync of 1,000 messages: one history request and no download, through
// the real Syncer and store (fsync on).
func BenchmarkGmailSecondSync(b *testing.B) {
	g := newGmailSync(b, gmailtest.Options{Messages: 1000}, storage.SyncFsync)
	if _, err := g.records.Connect("u1", gmail.Domain, g.gm.Credentials()); err != nil {
		b.Fatal(err)
	}
	g.runOnce(b)
	before := g.gm.Counts()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		g.runOnce(b)
	}
	b.StopTimer()
	c := g.gm.Counts()
	n := float64(b.N)
	b.ReportMetric(float64(c.Histories-before.Histories)/n, "history-requests/sync")
	b.ReportMetric(float64(c.Lists-before.Lists+c.Profiles-before.Profiles)/n, "list-requests/sync")
	b.ReportMetric(float64(c.Gets-before.Gets)/n, "downloads/sync")
}
