package search

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestComplete(t *testing.T) {
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	docs := []Doc{
		{ID: "a", Title: "Quarterly report for March", From: "Alice Quinn <alice@example.org>", Text: "the quarterly numbers, quarterly again, money"},
		{ID: "b", Title: "Lunch", From: "Quentin Blake <quentin@example.org>", Text: "a quarterly quiz and software updates, moneyed money", Date: date.Add(time.Hour)},
		{ID: "c", Title: "Software", From: "bob@example.org", Text: "quartz clocks and software"},
	}
	for i := range docs {
		docs[i].RecordID, docs[i].Integration, docs[i].Kind = "rec-1", "imap", "email"
		if docs[i].Date.IsZero() {
			docs[i].Date = date
		}
	}
	ix := openTest(t, t.TempDir())
	ix.Add(userA, docs...)
	tests := []struct {
		q    string
		want []Completion
	}{
		{"budget qu", []Completion{ // two letters: words alone
			{CompleteWord, "quarterly", "budget quarterly"},
			{CompleteWord, "quartz", "budget quartz"},
			{CompleteWord, "quentin", "budget quentin"},
			{CompleteWord, "quinn", "budget quinn"},
			{CompleteWord, "quiz", "budget quiz"},
		}},
		{"que", []Completion{
			{CompleteFrom, "Quentin Blake <quentin@example.org>", "from:quentin@example.org"},
			{CompleteWord, "quentin", "quentin"},
		}},
		{"Quar", []Completion{
			{CompleteTitle, "Quarterly report for March", `subject:"Quarterly report for March"`},
			{CompleteWord, "quarterly", "quarterly"},
			{CompleteWord, "quartz", "quartz"},
		}},
		{"mon", []Completion{{CompleteWord, "money", "money"}, {CompleteWord, "moneyed", "moneyed"}}},
		{"SOFTW", []Completion{
			{CompleteTitle, "Software", `subject:"Software"`},
			{CompleteWord, "software", "software"},
		}},
		{"bob", []Completion{{CompleteFrom, "bob@example.org", "from:bob@example.org"}}},
		{"qu ", nil}, {"q", nil}, {"from:qu", nil}, {`"qu`, nil}, {"-qu", nil}, {"zzz", nil}, {"", nil},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			got, err := ix.Complete(context.Background(), userA, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || got == nil {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
	// Another user's items are not offered.
	got, err := ix.Complete(context.Background(), userB, "qu")
	if err != nil || len(got) != 0 {
		t.Errorf("another user: got %q, %v; want none", got, err)
	}
}
