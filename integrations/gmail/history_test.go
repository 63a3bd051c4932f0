package gmail_test

import (
	"context"
	"fmt"
	"testing"

	"searchsvc/integrations"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
)

// The partial sync from the mailbox's history, and the full listing's
// resumption, against gmailtest.

func TestHistoryCatchesOutOfOrderMailAndDeletions(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 120})
	st := newStore()
	ctx := context.Background()
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	// Mail dated before most of the mailbox, listed on its last page;
	// two messages deleted; one added and deleted between two syncs.
	old := fx.api.AddDated(gmailtest.Date(3))
	fx.api.Delete(7)
	fx.api.Delete(100)
	fx.api.Add(1)
	brief := fx.api.Total()
	fx.api.Delete(brief)
	before := fx.api.Counts()
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	c := fx.api.Counts()
	if c.Histories-before.Histories != 1 || c.Gets-before.Gets != 1 || c.Lists != before.Lists {
		t.Errorf("requests: got %+v after %+v; want one history request and one download", c, before)
	}
	if it, ok := st.items[gmailtest.ID(old)]; !ok || !it.Date.Equal(gmailtest.Date(3)) {
		t.Errorf("out-of-order message: got %+v, %v; want it stored, dated %v", it, ok, gmailtest.Date(3))
	}
	for _, seq := range []int{7, 100, brief} {
		if st.known(gmailtest.ID(seq)) {
			t.Errorf("message %d deleted in Gmail is still stored", seq)
		}
	}
	if len(st.items) != 120-2+1 {
		t.Errorf("items: got %d, want %d", len(st.items), 120-2+1)
	}
}

func TestHistoryPages(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 1})
	st := newStore()
	ctx := context.Background()
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	fx.api.Add(gmail.HistoryPageSize + 20)
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	if c := fx.api.Counts(); c.Histories != 2 || st.tasks[gmail.TaskGetHistory] != 1 || len(st.items) != gmail.HistoryPageSize+21 {
		t.Errorf("got %+v, %d getHistory tasks, %d items; want 2 history pages, 1 getHistory, %d items",
			c, st.tasks[gmail.TaskGetHistory], len(st.items), gmail.HistoryPageSize+21)
	}
	if want := fmt.Sprintf(`{"h":"%d"}`, fx.api.HistoryID()); st.state != want {
		t.Errorf("state: got %s, want %s", st.state, want)
	}
}

func TestExpiredHistoryListsAgainWithoutDownloading(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 150})
	st := newStore()
	ctx := context.Background()
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	fx.api.Add(5)
	fx.api.ExpireHistory()
	before := fx.api.Counts()
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	c := fx.api.Counts()
	if c.Histories-before.Histories != 1 || c.Profiles-before.Profiles != 1 || c.Lists-before.Lists != 2 || c.Gets-before.Gets != 5 {
		t.Errorf("got %+v after %+v; want one 404 history request, a profile, 2 list pages and the 5 new messages", c, before)
	}
	if want := fmt.Sprintf(`{"h":"%d"}`, fx.api.HistoryID()); st.state != want || len(st.items) != 155 {
		t.Errorf("state %s, %d items; want %s, 155", st.state, len(st.items), want)
	}
}

func TestListingResumesWhereItStopped(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 250})
	ctx := context.Background()
	// A listing whose task was lost after the second page was queued: the
	// first page's messages are stored.
	st := newStore()
	for seq := 151; seq <= 250; seq++ {
		st.items[gmailtest.ID(seq)] = integrations.Item{ProviderID: gmailtest.ID(seq)}
	}
	st.state = `{"h":"1250","l":true,"p":"150"}`
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	if c := fx.api.Counts(); c != (gmailtest.Counts{Lists: 2, Gets: 150}) || len(st.items) != 250 {
		t.Errorf("got %+v, %d items; want the last 2 pages listed and their 150 messages fetched", c, len(st.items))
	}
	if st.state != `{"h":"1250"}` {
		t.Errorf("state: got %s, want the listing done from history id 1250", st.state)
	}

	// A page token Gmail no longer takes: the listing starts over and
	// downloads nothing stored.
	st.state = `{"h":"1250","l":true,"p":"999999"}`
	before := fx.api.Counts()
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	if c := fx.api.Counts(); c.Lists-before.Lists != 4 || c.Gets != before.Gets || st.state != `{"h":"1250"}` {
		t.Errorf("stale token: got %+v after %+v, state %s; want a refused page and 3 listed, no download", c, before, st.state)
	}
}
