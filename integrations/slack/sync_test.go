package slack_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
	"searchsvc/integrations/slack"
	"searchsvc/integrations/slack/slacktest"
	"searchsvc/integrations/syncer/syncfx"
)

// syncRig is a Slack workspace on the fake, synced by the real Syncer.
type syncRig struct {
	fake *slacktest.Server
	fx   *syncfx.Fixture
	rec  records.Record
	tap  *tap
}

// tap can make the fake fail one call of a method once that method was
// called n times.
type tap struct {
	next http.RoundTripper
	fake *slacktest.Server

	mu     gosync.Mutex
	seen   map[string]int
	failAt map[string]failure
}

type failure struct {
	n, status  int
	retryAfter string
}

func (t *tap) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.seen[r.URL.Path]++
	if f, ok := t.failAt[r.URL.Path]; ok && t.seen[r.URL.Path] == f.n {
		t.fake.Fail(1, f.status, f.retryAfter)
	}
	t.mu.Unlock()
	return t.next.RoundTrip(r)
}

func newSyncRig(t testing.TB, opts slacktest.Options) *syncRig {
	t.Helper()
	fake := slacktest.New(t, opts)
	tp := &tap{next: fake.Client().Transport, fake: fake, seen: map[string]int{}, failAt: map[string]failure{}}
	fx := syncfx.New(t, syncfx.Options{
		Definition: slack.Definition(),
		Env: map[string]string{
			"SLACK_OAUTH_CLIENT_ID": "slacktest-client", "SLACK_OAUTH_CLIENT_SECRET": "slacktest-secret",
			"SLACK_API_BASE_URL": fake.URL, "SLACK_OAUTH_TOKEN_URL": fake.URL + "/oauth.v2.access",
		},
		Client: &http.Client{Transport: tp},
	})
	rec := fx.Connect("user-1", integrations.Credentials{AccessToken: fake.AccessToken, TokenType: "user"})
	return &syncRig{fake: fake, fx: fx, rec: rec, tap: tp}
}

// byTS returns the stored items by ts, and the provider ids by ts.
func (r *syncRig) byTS(t *testing.T) (map[string]syncfx.Item, map[string]string) {
	t.Helper()
	items, pids := map[string]syncfx.Item{}, map[string]string{}
	for pid, it := range r.fx.Items(r.rec) {
		base, _, _ := strings.Cut(pid, "@")
		ts := base[strings.LastIndexByte(base, '/')+1:]
		if _, dup := items[ts]; dup {
			t.Fatalf("ts %s stored twice", ts)
		}
		items[ts], pids[ts] = it, pid
	}
	return items, pids
}

func (r *syncRig) checkIndex(t *testing.T) {
	t.Helper()
	stored := r.fx.Items(r.rec)
	titles := r.fx.Index.Titles()
	if len(titles) != len(stored) {
		t.Errorf("index: got %d items, want the %d stored", len(titles), len(stored))
	}
	for _, it := range stored {
		if titles[it.ID] != it.Title {
			t.Errorf("index: item %s titled %q, want %q", it.ID, titles[it.ID], it.Title)
		}
	}
}

func (r *syncRig) calls() (list, history, replies, users int) {
	return r.fake.Calls("conversations.list"), r.fake.Calls("conversations.history"), r.fake.Calls("conversations.replies"), r.fake.Calls("users.info")
}

func TestSyncerSyncsSlack(t *testing.T) {
	opts := slacktest.Generate(4, 150) // a channel, a private one, a DM, a group DM; 15 threads each
	opts.PageSize = 120
	r := newSyncRig(t, opts)
	r.fx.Sync(r.rec)

	got, pids := r.byTS(t)
	if len(got) != 4*150+4*15*2 {
		t.Errorf("first sync: got %d items, want 720", len(got))
	}
	for ts, pid := range pids { // so that the edited id below is the edit's doing
		if strings.Contains(pid, "@") {
			t.Errorf("first sync: message %s stored under the edited id %s; none was edited", ts, pid)
		}
	}
	for _, tc := range []struct {
		conv  int
		msg   int
		title string
	}{{0, 0, "#channel-1"}, {1, 3, "#channel-2"}, {2, 7, "DM with Chen Jiayi"}, {3, 149, "Group DM with user1, user2, me"}} {
		m := opts.Conversations[tc.conv].Messages[tc.msg]
		it := got[m.TS]
		from := map[string]string{"U0000001": "Ana", "U0000002": "Bo", "U0000003": "Chen Jiayi", "U0000004": "Dara", "U0000005": "Eli"}[m.User]
		if it.Title != tc.title || it.From != from || it.Text != m.Text || !it.Date.Equal(slack.TSTime(m.TS)) {
			t.Errorf("message %d of %d: got %q from %q, %q at %v; want %q from %q, %q at %v",
				tc.msg, tc.conv, it.Title, it.From, it.Text, it.Date, tc.title, from, m.Text, slack.TSTime(m.TS))
		}
	}
	reply := opts.Conversations[0].Messages[9].Replies[1]
	if it := got[reply.TS]; it.Text != reply.Text || it.Title != "#channel-1" {
		t.Errorf("reply: got %q in %q, want %q in #channel-1", it.Text, it.Title, reply.Text)
	}
	if l, h, rp, u := r.calls(); l != 1 || h != 8 || rp != 60 || u != 5 {
		t.Errorf("first sync: got %d list, %d history, %d replies, %d users.info calls; want 1, 8 (two pages each), 60, 5 (cached)", l, h, rp, u)
	}
	rec := r.fx.Record(r.rec)
	if rec.Status != records.StatusConnected || rec.LastError != "" || rec.ItemsSynced != 720 || rec.LastSyncAt == nil {
		t.Errorf("record: got %s %q, %d items, lastSyncAt %v; want connected, no error, 720, set", rec.Status, rec.LastError, rec.ItemsSynced, rec.LastSyncAt)
	}
	r.checkIndex(t)

	// Nothing new: one history call per conversation, no thread read.
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	if l, h, rp, _ := r.calls(); l != 2 || h != 12 || rp != 60 {
		t.Errorf("second sync: got %d list, %d history, %d replies calls; want 2, 12 (one each), 60", l, h, rp)
	}

	// Edits, deletions, a post, a reply, a deleted thread parent.
	c := opts.Conversations[0]
	msgs := c.Messages
	edited, deleted, parent, tombstone := msgs[148].TS, msgs[147].TS, msgs[139].TS, msgs[129].TS
	r.fake.Edit(c.ID, edited, "edited: the otter password is hunter2")
	r.fake.Delete(c.ID, deleted)
	posted := r.fake.Post(c.ID, "U0000002", "a new message")
	replied := r.fake.Reply(c.ID, parent, "U0000003", "a new reply")
	r.fake.Delete(c.ID, tombstone)
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)

	got, pids = r.byTS(t)
	if it := got[edited]; it.Text != "edited: the otter password is hunter2" || !strings.Contains(pids[edited], "@") {
		t.Errorf("edited message: got %q (%s), want the new text under an edited id", it.Text, pids[edited])
	}
	for _, ts := range []string{deleted, tombstone} {
		if _, ok := got[ts]; ok {
			t.Errorf("message %s deleted in Slack is still stored", ts)
		}
	}
	if got[posted].Text != "a new message" || got[posted].From != "Bo" {
		t.Errorf("posted: got %+v", got[posted])
	}
	if got[replied].Text != "a new reply" || got[replied].From != "Chen Jiayi" {
		t.Errorf("reply: got %+v", got[replied])
	}
	if _, ok := got[msgs[129].Replies[0].TS]; !ok {
		t.Error("a reply under a deleted parent went with it; Slack keeps it")
	}
	if len(got) != 720-2+2 {
		t.Errorf("third sync: got %d items, want 720", len(got))
	}
	r.checkIndex(t)
	if leaks := r.fx.PlainText("hunter2", "a new reply", "Chen Jiayi", "channel-1", r.fake.AccessToken); len(leaks) != 0 {
		t.Errorf("plain text under DATA_DIR: %q", leaks)
	}
}

// TestSyncerResumesSlack: a 429 in the middle of a conversation's pages
// waits its Retry-After and goes on from that page; a restart meanwhile
// changes nothing of that.
func TestSyncerResumesSlack(t *testing.T) {
	opts := slacktest.Generate(4, 150)
	opts.PageSize = 120
	r := newSyncRig(t, opts)
	r.tap.failAt["/conversations.history"] = failure{n: 4, status: http.StatusTooManyRequests, retryAfter: "30"}
	r.fx.Sync(r.rec)
	if r.fx.Syncer.Pending(r.rec.ID) == 0 {
		t.Fatal("the sync finished despite the 429")
	}
	rec := r.fx.Record(r.rec)
	const want429 = "Slack asked the sync to slow down (too many requests). The sync will try again by itself."
	if rec.Status != records.StatusError || rec.LastError != want429 {
		t.Errorf("record: got %s %q; want error, %q", rec.Status, rec.LastError, want429)
	}
	_, h, _, _ := r.calls()
	r.fx.Reopen()
	r.fx.Clock.Advance(20 * time.Second)
	r.fx.Run()
	if _, h2, _, _ := r.calls(); h2 != h {
		t.Errorf("history called %d times before the Retry-After was over", h2-h)
	}
	r.fx.Clock.Advance(11 * time.Second)
	r.fx.Run()
	if p := r.fx.Syncer.Pending(r.rec.ID); p != 0 {
		t.Fatalf("%d tasks pending after the wait", p)
	}
	if l, h, rp, _ := r.calls(); l != 1 || h != 8+1 || rp != 60 {
		t.Errorf("got %d list, %d history, %d replies calls; want 1, 9 (one 429), 60: nothing read twice", l, h, rp)
	}
	got, _ := r.byTS(t)
	rec = r.fx.Record(r.rec)
	if len(got) != 720 || rec.ItemsSynced != 720 || rec.Status != records.StatusConnected || rec.LastError != "" {
		t.Errorf("got %d items, record %s %q %d; want 720, connected", len(got), rec.Status, rec.LastError, rec.ItemsSynced)
	}
	r.checkIndex(t)
}

// TestExpiredCursor: a cursor Slack no longer takes restarts its task
// from the first page instead of failing the conversation.
func TestExpiredCursor(t *testing.T) {
	fake := slacktest.New(t, slacktest.Generate(1, 5))
	in, err := slack.Definition().New(integrations.Env{
		Credentials: integrations.Credentials{AccessToken: fake.AccessToken, TokenType: "user"},
		Provider:    fake.Provider(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		task integrations.Task
		want integrations.Task
	}{
		{integrations.Task{Type: slack.TaskListConversations, Payload: map[string]string{"cursor": "bm90LWEtY3Vyc29y", "page": "1"}},
			integrations.Task{Type: slack.TaskListConversations}},
		{integrations.Task{Type: slack.TaskHistory, Payload: map[string]string{"channel": "C0000001", "title": "#channel-1", "oldest": "", "cursor": "bm90LWEtY3Vyc29y", "before": "1767225601.000000"}},
			integrations.Task{Type: slack.TaskHistory, Payload: map[string]string{"channel": "C0000001", "title": "#channel-1", "oldest": ""}}},
	} {
		res, err := in.RunTask(context.Background(), tc.task)
		if err != nil || len(res.Tasks) != 1 || len(res.Output) != 0 || res.Tasks[0].Type != tc.want.Type || fmt.Sprint(res.Tasks[0].Payload) != fmt.Sprint(tc.want.Payload) {
			t.Errorf("%s with an expired cursor: got %+v, %v; want only %+v", tc.task.Type, res, err, tc.want)
		}
	}
}

// TestSyncerRevokedSlack: a revoked token puts the record in
// needs_reauth with words a person understands, and drops its tasks.
func TestSyncerRevokedSlack(t *testing.T) {
	r := newSyncRig(t, slacktest.Generate(2, 5))
	r.fake.Revoke()
	r.fx.Sync(r.rec)
	rec := r.fx.Record(r.rec)
	const wantReauth = "Slack refused the stored authorization. Connect it again to resume syncing."
	if rec.Status != records.StatusNeedsReauth || rec.LastError != wantReauth {
		t.Errorf("record: got %s %q; want needs_reauth, %q", rec.Status, rec.LastError, wantReauth)
	}
	if p := r.fx.Syncer.Pending(r.rec.ID); p != 0 || len(r.fx.Items(r.rec)) != 0 {
		t.Errorf("got %d tasks pending, %d items; want none", p, len(r.fx.Items(r.rec)))
	}
}

// TestSyncerSlackWindowAndLeftConversations: a conversation of joins
// with a few messages is read from its window, not from its start, at
// every sync (one history call when nothing is new); the items of a
// conversation left, archived or deleted are removed.
func TestSyncerSlackWindowAndLeftConversations(t *testing.T) {
	opts := slacktest.Generate(5, 3) // public, private, DM, group DM, public
	opts.PageSize = 120
	r := newSyncRig(t, opts)
	joins := opts.Conversations[0].ID
	for i := range 300 {
		r.fake.Join(joins, fmt.Sprintf("U%07d", i%5+1))
	}
	r.fx.Sync(r.rec)
	if got := len(r.fx.Items(r.rec)); got != 5*3 {
		t.Fatalf("first sync: got %d items, want 15 (joins are not stored)", got)
	}
	_, h, _, _ := r.calls()
	if h != 3+4 {
		t.Errorf("first sync: got %d history calls, want 7 (3 pages of the joins, one each other)", h)
	}

	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	if _, h2, _, _ := r.calls(); h2-h != 5 {
		t.Errorf("second sync: got %d history calls, want 5 (one per conversation)", h2-h)
	}
	// A new message after more joins is read, from the window.
	r.fake.Join(joins, "U0000002")
	posted := r.fake.Post(joins, "U0000001", "after the joins")
	_, h, _, _ = r.calls()
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	got, _ := r.byTS(t)
	if _, h2, _, _ := r.calls(); h2-h != 5 || got[posted].Text != "after the joins" {
		t.Errorf("third sync: got %d history calls and %q; want 5 and the new message", h2-h, got[posted].Text)
	}

	// Left, archived, deleted: their items go.
	left, archived, deleted, kept := opts.Conversations[4], opts.Conversations[1], opts.Conversations[3], opts.Conversations[2]
	r.fake.Leave(left.ID)
	r.fake.Archive(archived.ID)
	r.fake.Remove(deleted.ID)
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	got, _ = r.byTS(t)
	for _, c := range []slacktest.Conversation{left, archived, deleted} {
		for _, m := range c.Messages {
			if _, ok := got[m.TS]; ok {
				t.Errorf("message %s of %s, a conversation gone, is still stored", m.TS, c.ID)
			}
		}
	}
	for _, c := range []slacktest.Conversation{opts.Conversations[0], kept} {
		for _, m := range c.Messages {
			if _, ok := got[m.TS]; !ok {
				t.Errorf("message %s of %s, still listed, was removed", m.TS, c.ID)
			}
		}
	}
	if len(got) != 2*3+1 {
		t.Errorf("after the conversations went: got %d items, want 7", len(got))
	}
	r.checkIndex(t)
}
