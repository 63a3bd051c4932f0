package slack

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"searchsvc/integrations"
)

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) RoundTrip(r *http.Request) (*http.Response, error) {
	h := a.header
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(bytes.NewReader(a.body)), Request: r}, nil
}

func clientFor(a answer) *Client {
	return NewClient(&http.Client{Transport: a}, "http://fake", func(context.Context) (string, error) { return "xoxp", nil }, nil)
}

func TestTSTime(t *testing.T) {
	tests := map[string]time.Time{
		"1767225600.000100": time.Date(2026, 1, 1, 0, 0, 0, 100_000, time.UTC),
		"1767225600":        time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		"":                  {},
		"12.x":              {},
		"1e9":               {},
		"-1.5":              {},
		"1767225600.":       {},
	}
	for ts, want := range tests {
		if got := TSTime(ts); !got.Equal(want) {
			t.Errorf("TSTime(%q) = %v, want %v", ts, got, want)
		}
	}
}

func TestAnswers(t *testing.T) {
	ctx := context.Background()
	t.Run("ratelimited with HTTP 200", func(t *testing.T) {
		c := clientFor(answer{200, http.Header{"Retry-After": {"12"}}, []byte(`{"ok":false,"error":"ratelimited"}`)})
		_, err := c.Conversations(ctx, "")
		var ae *integrations.APIError
		if !errors.As(err, &ae) || ae.Status != 429 || ae.RetryAfter != 12*time.Second {
			t.Errorf("got %v, want a 429 APIError after 12s", err)
		}
	})
	tests := []struct {
		name string
		body string
		want error
	}{
		{"not json", "<html>", ErrBadResponse},
		{"next_cursor with a space", `{"ok":true,"channels":[],"response_metadata":{"next_cursor":"a b"}}`, ErrBadResponse},
		{"channels of the wrong type", `{"ok":true,"channels":{}}`, ErrBadResponse},
		{"error code that is not a word", `{"ok":false,"error":"<script>"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := clientFor(answer{200, nil, []byte(tt.body)}).Conversations(ctx, "")
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			var se *Error
			if tt.want == nil && (!errors.As(err, &se) || se.Code != "unknown_error") {
				t.Errorf("got %v, want unknown_error", err)
			}
		})
	}
	t.Run("messages without a usable ts dropped", func(t *testing.T) {
		body := `{"ok":true,"messages":[{"ts":"1.1","text":"kept"},{"ts":"x"},{"text":"no ts"},{"ts":"2.2","thread_ts":"../"}],"has_more":false}`
		page, err := clientFor(answer{200, nil, []byte(body)}).History(ctx, "C1", "", "")
		if err != nil || len(page.Messages) != 1 || page.Messages[0].Text != "kept" {
			t.Errorf("got %+v %v, want the one valid message", page.Messages, err)
		}
	})
}

// FuzzAnswer feeds arbitrary answers to each method: no panic, and what
// is kept passes the client's own checks.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte(`{"ok":true,"channels":[{"id":"C1","name":"general","is_channel":true,"is_member":true}],"response_metadata":{"next_cursor":"dGVhbTpD"}}`))
	f.Add([]byte(`{"ok":true,"messages":[{"ts":"1767225600.000100","user":"U1","text":"hi","edited":{"ts":"1767225601.0"}}],"has_more":true}`))
	f.Add([]byte(`{"ok":true,"user":{"id":"U1","profile":{"display_name":"Ana"}}}`))
	f.Add([]byte(`{"ok":false,"error":"invalid_auth"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c := clientFor(answer{200, nil, body})
		ctx := context.Background()
		if page, err := c.Conversations(ctx, ""); err == nil {
			for _, conv := range page.Conversations {
				if !validID(conv.ID) {
					t.Fatalf("kept conversation id %q", conv.ID)
				}
				c.Title(ctx, conv)
			}
			if !validCursor(page.NextCursor) {
				t.Fatalf("kept cursor %q", page.NextCursor)
			}
		}
		if page, err := c.History(ctx, "C1", "", ""); err == nil {
			for _, m := range page.Messages {
				if !validTS(m.TS, false) || len(m.Text) > maxFieldText {
					t.Fatalf("kept message %+v", m)
				}
			}
		}
		c.User(ctx, "U1")
	})
}

// FuzzTSTime: a ts validTS accepts reads as a time within its digits'
// range, and anything else as the zero time.
func FuzzTSTime(f *testing.F) {
	for _, s := range []string{"1767225600.000100", "1", "999999999999.999999999", "1.", ".5", "12e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ts string) {
		got := TSTime(ts)
		if !validTS(ts, false) {
			if !got.IsZero() {
				t.Fatalf("TSTime(%q) = %v, want zero for an invalid ts", ts, got)
			}
			return
		}
		if got.Unix() < 0 || got.Unix() > 999_999_999_999 {
			t.Fatalf("TSTime(%q) = %v, out of range", ts, got)
		}
	})
}
