package monitor

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

// clock is a test's clock, stepped by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestErrorsSentences(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)}
	errs := NewErrors(3, c.now)
	var out bytes.Buffer
	log := slog.New(errs.Handler(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn})))

	search := log.With("component", "search")
	search.Error("search flush failed", "user_id", "0b6f3f0e-1111-4222-8333-944445555666", "err", errors.New("write /data/search/u: no space"))
	c.t = c.t.Add(time.Minute)
	log.Error("request failed", "request_id", "r1", "operation", "item.search", "status", 500, "err", errors.New("bob@example.org broke it"))
	log.Warn("a warning is not an error")
	log.Info("nor is information")
	c.t = c.t.Add(time.Minute)
	search.Error("search flush failed", "user_id", "another")
	log.WithGroup("g").Error("grouped", "operation", "kept out")

	got, total := errs.Last()
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	want := []Error{
		{Message: "grouped", Count: 1, FirstAt: t0.Add(2 * time.Minute), LastAt: t0.Add(2 * time.Minute)},
		{Message: "search: search flush failed", Count: 2, FirstAt: t0, LastAt: t0.Add(2 * time.Minute)},
		{Message: "request failed (operation item.search, status 500)", Count: 1, FirstAt: t0.Add(time.Minute), LastAt: t0.Add(time.Minute)},
	}
	if !reflect.DeepEqual(got, want) || total != 4 {
		t.Errorf("got %d lines, %+v,\nwant 4, %+v", total, got, want)
	}
	for _, personal := range []string{"bob@example.org", "0b6f3f0e", "no space", "r1"} {
		for _, e := range got {
			if strings.Contains(e.Message, personal) {
				t.Errorf("a sentence holds %q: %q", personal, e.Message)
			}
		}
	}
	// The log itself is unchanged: warnings and errors, every attribute.
	if s := out.String(); !strings.Contains(s, "bob@example.org broke it") || !strings.Contains(s, "a warning is not an error") ||
		strings.Contains(s, "nor is information") || !strings.Contains(s, "component=search") {
		t.Errorf("the log: got %s", s)
	}

	// A fourth sentence pushes out the oldest.
	log.Error("fourth")
	got, total = errs.Last()
	if len(got) != 3 || got[0].Message != "fourth" || got[2].Message != "search: search flush failed" || total != 5 {
		t.Errorf("after a fourth: got %d, %+v", total, got)
	}
}

func TestErrorsEmptyAndLong(t *testing.T) {
	errs := NewErrors(5, nil)
	if got, total := errs.Last(); got == nil || len(got) != 0 || total != 0 {
		t.Errorf("empty: got %v %d, want [] 0", got, total)
	}
	// An error level the log's handler leaves out is still kept.
	log := slog.New(errs.Handler(slog.DiscardHandler))
	log.Error(strings.Repeat("é", 150))
	got, _ := errs.Last()
	if len(got) != 1 || len(got[0].Message) > maxMessage+len("…") || !strings.HasSuffix(got[0].Message, "…") {
		t.Errorf("a long message: got %q (%d bytes)", got[0].Message, len(got[0].Message))
	}
}
