package slack_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/slack"
	"searchsvc/integrations/slack/slacktest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newAPI(t *testing.T, opts slacktest.Options) (*slacktest.Server, *slack.Client, *clock) {
	t.Helper()
	clk := &clock{t: now}
	opts.Now = clk.Now
	srv := slacktest.New(t, opts)
	return srv, slack.NewClient(srv.Client(), srv.URL, srv.Token, clk.Now), clk
}

// allHistory pages through a conversation's history after oldest.
func allHistory(t *testing.T, c *slack.Client, channel, oldest string) ([]slack.Message, int) {
	t.Helper()
	var msgs []slack.Message
	cursor, calls := "", 0
	for {
		page, err := c.History(context.Background(), channel, oldest, cursor)
		calls++
		if err != nil {
			t.Fatalf("history of %s: %v", channel, err)
		}
		msgs = append(msgs, page.Messages...)
		if cursor = page.NextCursor; cursor == "" {
			return msgs, calls
		}
	}
}

func TestConversations(t *testing.T) {
	ctx := context.Background()
	opts := slacktest.Generate(12, 1)
	opts.Conversations = append(opts.Conversations,
		slacktest.Conversation{ID: "C9000001", Name: "old", Type: "public_channel", Member: true, Archived: true},
		slacktest.Conversation{ID: "C9000002", Name: "not-joined", Type: "public_channel"})
	opts.PageSize = 5
	srv, c, _ := newAPI(t, opts)
	var got []slack.Conversation
	cursor := ""
	for {
		page, err := c.Conversations(ctx, cursor)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Conversations...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(got) != 12 || srv.Calls("conversations.list") != 3 {
		t.Errorf("got %d conversations in %d calls, want 12 in 3 (archived and not joined left out)", len(got), srv.Calls("conversations.list"))
	}
	titles := map[string]string{}
	for _, conv := range got {
		title, err := c.Title(ctx, conv)
		if err != nil {
			t.Fatal(err)
		}
		titles[conv.ID] = title
	}
	for id, want := range map[string]string{"C0000001": "#channel-1", "G0000002": "#channel-2", "D0000003": "DM with Chen Jiayi", "G0000004": "Group DM with user1, user2, me"} {
		if titles[id] != want {
			t.Errorf("title of %s: got %q, want %q", id, titles[id], want)
		}
	}
}

func TestHistory(t *testing.T) {
	ctx := context.Background()
	opts := slacktest.Generate(1, 25)
	opts.PageSize = 7
	srv, c, _ := newAPI(t, opts)
	const ch = "C0000001"
	msgs, calls := allHistory(t, c, ch, "")
	if len(msgs) != 25 || calls != 4 {
		t.Fatalf("got %d messages in %d calls, want 25 in 4", len(msgs), calls)
	}
	if !slices.IsSortedFunc(msgs, func(a, b slack.Message) int { return b.Time().Compare(a.Time()) }) {
		t.Error("history is not newest first")
	}
	newest := msgs[0].TS
	parent := msgs[len(msgs)-10] // message 10, a thread parent
	if parent.ReplyCount != 2 || parent.ThreadTS != parent.TS {
		t.Fatalf("message 10: got %+v, want a thread parent with 2 replies", parent)
	}

	t.Run("nothing new", func(t *testing.T) {
		before := srv.Calls("conversations.history")
		msgs, _ := allHistory(t, c, ch, newest)
		if len(msgs) != 0 || srv.Calls("conversations.history") != before+1 {
			t.Errorf("got %d messages in %d calls, want none in one", len(msgs), srv.Calls("conversations.history")-before)
		}
	})

	t.Run("new, edited and deleted", func(t *testing.T) {
		ts := srv.Post(ch, "U0000001", "a new message")
		msgs, _ := allHistory(t, c, ch, newest)
		if len(msgs) != 1 || msgs[0].TS != ts || msgs[0].Text != "a new message" {
			t.Fatalf("got %+v, want the new message only", msgs)
		}
		srv.Edit(ch, ts, "edited text")
		msgs, _ = allHistory(t, c, ch, newest)
		if len(msgs) != 1 || msgs[0].Text != "edited text" || msgs[0].Edited == nil || msgs[0].Edited.TS <= ts {
			t.Errorf("got %+v, want the edited message with its edit ts", msgs)
		}
		srv.Delete(ch, ts)
		srv.Delete(ch, parent.TS)
		msgs, _ = allHistory(t, c, ch, "")
		if len(msgs) != 25 {
			t.Errorf("got %d messages, want 25: the plain one gone, the parent a tombstone", len(msgs))
		}
		i := slices.IndexFunc(msgs, func(m slack.Message) bool { return m.TS == parent.TS })
		if i < 0 || !msgs[i].Deleted() {
			t.Errorf("deleted parent: got %+v, want a tombstone", msgs[i])
		}
	})

	t.Run("replies", func(t *testing.T) {
		page, err := c.Replies(ctx, ch, parent.TS, "", "")
		if err != nil || len(page.Messages) != 3 || page.Messages[0].TS != parent.TS || page.Messages[2].ThreadTS != parent.TS {
			t.Fatalf("got %+v %v, want the parent and its 2 replies", page.Messages, err)
		}
		after := page.Messages[1].TS
		page, err = c.Replies(ctx, ch, parent.TS, after, "")
		if err != nil || len(page.Messages) != 2 || page.Messages[1].TS != "" && page.Messages[1].TS <= after {
			t.Errorf("after the first reply: got %+v %v, want the parent and the second reply", page.Messages, err)
		}
	})
}

func TestUsersCached(t *testing.T) {
	ctx := context.Background()
	srv, c, _ := newAPI(t, slacktest.Generate(1, 1))
	for range 3 {
		u, err := c.User(ctx, "U0000002")
		if err != nil || u.DisplayName() != "Bo" {
			t.Fatalf("got %+v %v, want Bo", u, err)
		}
	}
	if n := srv.Calls("users.info"); n != 1 {
		t.Errorf("got %d users.info calls, want 1", n)
	}
	fresh := slack.NewClient(srv.Client(), srv.URL, srv.Token, nil)
	if page, err := fresh.Users(ctx, ""); err != nil || len(page.Users) != 5 {
		t.Fatalf("users.list: got %d users, %v; want 5", len(page.Users), err)
	}
	if u, err := fresh.User(ctx, "U0000005"); err != nil || u.DisplayName() != "Eli" || srv.Calls("users.info") != 1 {
		t.Errorf("after users.list: got %+v %v and %d users.info calls, want Eli from the cache", u, err, srv.Calls("users.info"))
	}
	var se *slack.Error
	if _, err := c.User(ctx, "U0000099"); !errors.As(err, &se) || se.Code != "user_not_found" {
		t.Errorf("unknown user: got %v, want user_not_found", err)
	}
}

func TestAPIErrors(t *testing.T) {
	ctx := context.Background()
	srv, c, clk := newAPI(t, slacktest.Options{
		Conversations: slacktest.Generate(1, 3).Conversations,
		PerMinute:     map[string]int{"conversations.history": 2},
	})
	const ch = "C0000001"

	var se *slack.Error
	if _, err := c.History(ctx, "C0000404", "", ""); !errors.Is(err, slack.ErrConversationGone) || !errors.Is(err, integrations.ErrSkip) || !errors.As(err, &se) || se.Code != "channel_not_found" {
		t.Errorf("unknown channel: got %v, want ErrConversationGone (channel_not_found)", err)
	}
	if _, err := c.Conversations(ctx, "Zm9yZ2Vk"); !errors.As(err, &se) || se.Code != "invalid_cursor" {
		t.Errorf("forged cursor: got %v, want invalid_cursor", err)
	}
	before := srv.Calls("conversations.history")
	for _, bad := range []struct{ channel, oldest, cursor string }{{"c1", "", ""}, {ch, "yesterday", ""}, {ch, "", "a b"}} {
		if _, err := c.History(ctx, bad.channel, bad.oldest, bad.cursor); !errors.Is(err, slack.ErrInvalidArgument) {
			t.Errorf("%+v: got %v, want ErrInvalidArgument", bad, err)
		}
	}
	if srv.Calls("conversations.history") != before {
		t.Error("invalid arguments were sent")
	}

	t.Run("tier limit", func(t *testing.T) {
		clk.Add(time.Minute) // the calls above are out of the window
		for range 2 {
			if _, err := c.History(ctx, ch, "", ""); err != nil {
				t.Fatal(err)
			}
			clk.Add(20 * time.Second)
		}
		_, err := c.History(ctx, ch, "", "")
		var ae *integrations.APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || ae.Code != "ratelimited" || ae.RetryAfter != 20*time.Second || !ae.Temporary() {
			t.Fatalf("third call in a minute: got %v, want 429 ratelimited after 20s", err)
		}
		clk.Add(ae.RetryAfter)
		if _, err := c.History(ctx, ch, "", ""); err != nil {
			t.Errorf("after the wait: got %v, want success", err)
		}
	})

	t.Run("server errors", func(t *testing.T) {
		for _, tt := range []struct {
			status int
			after  string
			wait   time.Duration
		}{{500, "", 0}, {503, "30", 30 * time.Second}, {429, "", time.Minute}} {
			srv.Fail(1, tt.status, tt.after)
			_, err := c.Conversations(ctx, "")
			var ae *integrations.APIError
			if !errors.As(err, &ae) || ae.Status != tt.status || ae.RetryAfter != tt.wait || !ae.Temporary() {
				t.Errorf("%d: got %v, want a temporary APIError after %v", tt.status, err, tt.wait)
			}
		}
	})

	t.Run("dead tokens", func(t *testing.T) {
		wrong := slack.NewClient(srv.Client(), srv.URL, func(context.Context) (string, error) { return "xoxp-wrong", nil }, nil)
		if _, err := wrong.Conversations(ctx, ""); !errors.Is(err, integrations.ErrReauthRequired) || !errors.As(err, &se) || se.Code != "invalid_auth" {
			t.Errorf("wrong token: got %v, want ErrReauthRequired (invalid_auth)", err)
		}
		srv.Revoke()
		if _, err := c.Conversations(ctx, ""); !errors.Is(err, integrations.ErrReauthRequired) || !errors.As(err, &se) || se.Code != "token_revoked" {
			t.Errorf("revoked: got %v, want ErrReauthRequired (token_revoked)", err)
		}
	})
}
