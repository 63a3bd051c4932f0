package slack_test

import (
	"context"
	"testing"

	"searchsvc/integrations/slack"
	"searchsvc/integrations/slack/slacktest"
)

// BenchmarkSlack10000Messages fetches a workspace of 20 conversations of
// 500 messages (10,000, a thread of 2 replies on every tenth) from the
// fake: the conversation list, the users, each conversation's history in
// pages of 200 and each thread's replies. An op is the whole workspace.
func BenchmarkSlack10000Messages(b *testing.B) {
	ctx := context.Background()
	srv := slacktest.New(b, slacktest.Generate(20, 500))
	var messages, replies, calls int
	b.ReportAllocs()
	for b.Loop() {
		c := slack.NewClient(srv.Client(), srv.URL, srv.Token, nil)
		messages, replies, calls = 0, 0, 0
		if _, err := c.Users(ctx, ""); err != nil {
			b.Fatal(err)
		}
		var convs []slack.Conversation
		for cursor := ""; ; {
			page, err := c.Conversations(ctx, cursor)
			if err != nil {
				b.Fatal(err)
			}
			calls++
			convs = append(convs, page.Conversations...)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		for _, conv := range convs {
			if _, err := c.Title(ctx, conv); err != nil {
				b.Fatal(err)
			}
			for cursor := ""; ; {
				page, err := c.History(ctx, conv.ID, "", cursor)
				if err != nil {
					b.Fatal(err)
				}
				calls++
				messages += len(page.Messages)
				for _, m := range page.Messages {
					if m.ReplyCount == 0 {
						continue
					}
					thread, err := c.Replies(ctx, conv.ID, m.TS, "", "")
					if err != nil {
						b.Fatal(err)
					}
					calls++
					replies += len(thread.Messages) - 1
				}
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
		}
	}
	if messages != 10000 || replies != 2000 {
		b.Fatalf("got %d messages and %d replies, want 10,000 and 2,000", messages, replies)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/10000msgs")
	b.ReportMetric(float64(calls), "calls/op")
}
