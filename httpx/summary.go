package httpx

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// AccessLogMode says which requests the access log writes a line for.
type AccessLogMode int

const (
	// AccessLogSummary, the default (ACCESS_LOG=summary), writes a line
	// only for a request answered 5xx or slower than SlowRequest, and once
	// a minute while requests come a "requests" line with their counts by
	// route class and status class. On a Raspberry Pi the journal is most
	// of what reaches the SD card, and a line per request is 150 MB a day
	// at 10 requests a second.
	AccessLogSummary AccessLogMode = iota
	// AccessLogAll (ACCESS_LOG=all) writes a line for every request.
	AccessLogAll
	// AccessLogOff (ACCESS_LOG=off) writes no access line at all.
	AccessLogOff
)

// ParseAccessLogMode parses an ACCESS_LOG value: summary, all or off.
func ParseAccessLogMode(s string) (AccessLogMode, bool) {
	switch s {
	case "summary":
		return AccessLogSummary, true
	case "all":
		return AccessLogAll, true
	case "off":
		return AccessLogOff, true
	}
	return 0, false
}

// Defaults of the summary mode.
const (
	// DefaultSlowRequest is the duration from which a request gets a line
	// of its own in the summary mode.
	DefaultSlowRequest = time.Second
	// SummaryEvery is the period of the summary line.
	SummaryEvery = time.Minute
)

// routeClasses are the route classes of the summary line, from the first
// path segments of a route pattern (never the raw path, which can carry
// ids): what a Pi owner needs to tell sign-ins from searches from the
// web app's files.
var routeClasses = [...]string{"auth", "user", "admin", "integrations", "search", "items", "web", "health", "unmatched"}

const (
	classUnmatched = len(routeClasses) - 1
	statusClasses  = 5 // 1xx to 5xx
)

// routeClass is the index in routeClasses of a route pattern ("GET
// /v1/search"; "" when no route matched).
func routeClass(pattern string) int {
	_, path, ok := strings.Cut(pattern, " ")
	if !ok {
		return classUnmatched
	}
	switch {
	case strings.HasPrefix(path, "/v1/auth/"):
		return 0
	case strings.HasPrefix(path, "/v1/user/"):
		return 1
	case strings.HasPrefix(path, "/v1/admin/"):
		return 2
	case strings.HasPrefix(path, "/v1/user-integration"), path == "/v1/integrations":
		return 3
	case path == "/v1/search":
		return 4
	case strings.HasPrefix(path, "/v1/items"):
		return 5
	case path == "/healthz", path == "/readyz", path == "/v1/openapi.json":
		return 7
	}
	return 6 // the web app's pages and assets
}

// summary counts requests by route class and status class between two
// summary lines. Counting is an atomic add on the request's path; the
// line is written by the first request after the minute is over, or by a
// timer when no request comes, so an idle server writes nothing.
type summary struct {
	h   slog.Handler
	now func() time.Time
	// afterFunc is time.AfterFunc, or a test's stand-in.
	afterFunc func(d time.Duration, f func()) timer

	start  atomic.Int64 // Unix ns of the current period's start; 0: none
	counts [len(routeClasses)][statusClasses]atomic.Int64

	mu    sync.Mutex // serialises writing the line
	timer timer
	armed bool
}

// count adds a finished request at end.
func (s *summary) count(end time.Time, pattern string, status int) {
	if st := s.start.Load(); st != 0 && end.UnixNano()-st >= int64(SummaryEvery) {
		s.write(end, false)
	}
	sc := status/100 - 1
	if sc < 0 || sc >= statusClasses {
		sc = statusClasses - 1
	}
	s.counts[routeClass(pattern)][sc].Add(1)
	if s.start.Load() == 0 {
		s.begin(end)
	}
}

// begin starts a period at t, with a timer to close it if no request does.
func (s *summary) begin(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.start.CompareAndSwap(0, t.UnixNano()) {
		return
	}
	if s.afterFunc == nil {
		s.afterFunc = func(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }
	}
	if s.timer == nil {
		s.timer = s.afterFunc(SummaryEvery, s.fire)
	} else {
		s.timer.Reset(SummaryEvery)
	}
	s.armed = true
}

// fire is the timer's: it writes the line if the period is over.
func (s *summary) fire() { s.write(s.now(), false) }

// write writes the summary line of the current period if it is over at
// now, or whatever it holds when force is set (a shutdown), and ends the
// period. A period with no request writes nothing.
func (s *summary) write(now time.Time, force bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.start.Load()
	if st == 0 || (!force && now.UnixNano()-st < int64(SummaryEvery)) {
		return
	}
	s.start.Store(0)
	if s.armed {
		s.timer.Stop()
		s.armed = false
	}
	attrs := make([]slog.Attr, 0, 8)
	var total int64
	var buf [24]byte
	for rc := range s.counts {
		for sc := range s.counts[rc] {
			n := s.counts[rc][sc].Swap(0)
			if n == 0 {
				continue
			}
			total += n
			key := append(append(buf[:0], routeClasses[rc]...), '_', byte('1'+sc), 'x', 'x')
			attrs = append(attrs, slog.Int64(string(key), n))
		}
	}
	if total == 0 {
		return
	}
	rec := slog.NewRecord(now, slog.LevelInfo, "requests", 0)
	rec.AddAttrs(slog.Int64("total", total), slog.Float64("period_s", float64(now.UnixNano()-st)/1e9))
	rec.AddAttrs(attrs...)
	s.h.Handle(context.Background(), rec)
}
