package httpx

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// summaryStack is a Stack in the given access log mode whose clock the
// test moves: each request takes took, and advance moves time between
// requests. Its summary timer is a fakeTimer.
type summaryStack struct {
	h     *Stack
	logs  *lockedBuffer
	clock time.Time
	took  time.Duration
	timer *fakeTimer
}

func newSummaryStack(t *testing.T, mode AccessLogMode) *summaryStack {
	t.Helper()
	s := &summaryStack{logs: &lockedBuffer{}, clock: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", Health())
	mux.HandleFunc("GET /v1/search", func(w http.ResponseWriter, r *http.Request) {
		s.clock = s.clock.Add(s.took)
		if r.URL.Query().Get("fail") != "" {
			WriteError(w, r, "item.search", Internal(nil))
			return
		}
		One(w, r, "item.search", true)
	})
	s.h = newStack(t, mux, Config{Logger: slog.New(slog.NewTextHandler(s.logs, nil)), AccessLog: mode,
		Now: func() time.Time { return s.clock }})
	if s.h.log.sum != nil {
		s.timer = &fakeTimer{}
		s.h.log.sum.afterFunc = func(d time.Duration, f func()) timer {
			s.timer.f = f
			s.timer.Reset(d)
			return s.timer
		}
	}
	return s
}

func (s *summaryStack) get(t *testing.T, path string, want int) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != want {
		t.Fatalf("GET %s: got %d, want %d", path, rec.Code, want)
	}
}

// lines returns the log's lines whose msg is msg.
func (s *summaryStack) lines(msg string) []string {
	var out []string
	for l := range strings.Lines(s.logs.String()) {
		if strings.Contains(l, " msg="+msg+" ") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// The summary mode writes a line for errors and slow requests only, and
// one summary line per minute with the counts by route and status class.
func TestAccessLogSummary(t *testing.T) {
	s := newSummaryStack(t, AccessLogSummary)
	for range 5 {
		s.get(t, "/healthz", 200)
	}
	s.get(t, "/v1/search", 200)
	s.get(t, "/nowhere", 404)
	s.get(t, "/v1/search?fail=1", 500)
	s.took = 1500 * time.Millisecond
	s.get(t, "/v1/search", 200) // slow
	s.took = 0
	if got := s.lines("requests"); len(got) != 0 {
		t.Fatalf("summary written within the minute: %q", got)
	}
	got := s.lines("request")
	if len(got) != 2 || !strings.Contains(got[0], "status=500") || !strings.Contains(got[1], "status=200 duration_ms=1500") {
		t.Fatalf("request lines: got %q, want the 500 and the slow 200", got)
	}
	if armed, due := s.timer.state(); !armed || due != SummaryEvery {
		t.Fatalf("summary timer: got armed %v for %v, want armed for %v", armed, due, SummaryEvery)
	}

	s.clock = s.clock.Add(SummaryEvery)
	s.get(t, "/healthz", 200) // the first request after the minute writes the summary, then counts itself
	sum := s.lines("requests")
	want := "total=9 period_s=61.5 search_2xx=2 search_5xx=1 health_2xx=5 unmatched_4xx=1"
	if len(sum) != 1 || !strings.HasSuffix(sum[0], want) {
		t.Fatalf("summary: got %q, want one line ending %q", sum, want)
	}

	// No request for a minute: the timer writes what was counted, once.
	s.clock = s.clock.Add(SummaryEvery)
	s.timer.fire()
	s.timer.fire()
	sum = s.lines("requests")
	if len(sum) != 2 || !strings.HasSuffix(sum[1], "total=1 period_s=60 health_2xx=1") {
		t.Fatalf("summary by the timer: got %q, want a second line with total=1", sum)
	}
	if armed, _ := s.timer.state(); armed {
		t.Fatal("timer armed with nothing counted: an idle server would keep writing")
	}

	// A shutdown writes the part of a minute counted so far.
	s.get(t, "/v1/search", 200)
	s.h.FlushAccessLog()
	if sum = s.lines("requests"); len(sum) != 3 || !strings.HasSuffix(sum[2], "total=1 period_s=0 search_2xx=1") {
		t.Fatalf("summary at shutdown: got %q", sum)
	}
	if got := s.lines("request"); len(got) != 2 {
		t.Fatalf("got %d request lines, want still 2", len(got))
	}
}

// ACCESS_LOG=all writes a line for every request and no summary; off
// writes nothing, errors included.
func TestAccessLogModes(t *testing.T) {
	for _, c := range []struct {
		name              string
		mode              AccessLogMode
		request, requests int
	}{
		{"all", AccessLogAll, 3, 0},
		{"off", AccessLogOff, 0, 0},
		{"summary", AccessLogSummary, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSummaryStack(t, c.mode)
			s.get(t, "/healthz", 200)
			s.get(t, "/v1/search", 200)
			s.get(t, "/v1/search?fail=1", 500)
			s.h.FlushAccessLog()
			if got := len(s.lines("request")); got != c.request {
				t.Errorf("request lines: got %d, want %d", got, c.request)
			}
			if got := len(s.lines("requests")); got != c.requests {
				t.Errorf("summary lines: got %d, want %d", got, c.requests)
			}
		})
	}
}

func TestParseAccessLogMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want AccessLogMode
		ok   bool
	}{{"summary", AccessLogSummary, true}, {"all", AccessLogAll, true}, {"off", AccessLogOff, true}, {"ALL", 0, false}, {"", 0, false}} {
		if got, ok := ParseAccessLogMode(c.in); got != c.want || ok != c.ok {
			t.Errorf("ParseAccessLogMode(%q): got %v %v, want %v %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
