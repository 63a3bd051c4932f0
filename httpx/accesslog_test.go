package httpx

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log destination that a timer's goroutine may write to
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func delayedStack(t *testing.T, delay time.Duration) (*Stack, *lockedBuffer) {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", Health())
	logs := &lockedBuffer{}
	return newStack(t, mux, Config{Logger: slog.New(slog.NewTextHandler(logs, nil)), AccessLogDelay: delay, AccessLog: AccessLogAll}), logs
}

func get(h http.Handler, path string) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code
}

// With a delay the access lines wait, and FlushAccessLog writes every one
// of them, in the order the requests ended.
func TestAccessLogDelayFlush(t *testing.T) {
	h, logs := delayedStack(t, time.Hour)
	for i := range 3 {
		if code := get(h, fmt.Sprintf("/healthz?n=%d", i)); code != 200 {
			t.Fatalf("healthz: %d", code)
		}
	}
	if code := get(h, "/nothing"); code != 404 {
		t.Fatalf("unknown path: %d", code)
	}
	if got := logs.String(); got != "" {
		t.Fatalf("lines written before their delay or a flush: %q", got)
	}
	h.FlushAccessLog()
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want 4: %q", len(lines), lines)
	}
	for i, want := range []string{`pattern="GET /healthz" status=200`, `pattern="GET /healthz" status=200`,
		`pattern="GET /healthz" status=200`, `pattern=(unmatched) status=404`} {
		if !strings.Contains(lines[i], "msg=request") || !strings.Contains(lines[i], want) {
			t.Errorf("line %d: got %q, want msg=request and %s", i, lines[i], want)
		}
	}
	h.FlushAccessLog() // nothing left: writes nothing more
	if n := strings.Count(logs.String(), "msg=request"); n != 4 {
		t.Fatalf("a second flush wrote again: %d lines", n)
	}
}

// fakeTimer is a timer the test fires by hand.
type fakeTimer struct {
	mu    sync.Mutex
	f     func()
	armed bool
	due   time.Duration // the delay it was last armed with
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.armed
	t.armed, t.due = true, d
	return was
}

func (t *fakeTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

func (t *fakeTimer) state() (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.armed, t.due
}

// fire runs the timer's function, as time.AfterFunc would when it is due.
func (t *fakeTimer) fire() {
	t.mu.Lock()
	t.armed = false
	f := t.f
	t.mu.Unlock()
	f()
}

func withFakeTimer(h *Stack) *fakeTimer {
	ft := &fakeTimer{}
	h.log.afterFunc = func(d time.Duration, f func()) timer {
		ft.f = f
		ft.Reset(d)
		return ft
	}
	return ft
}

// The timer writes the waiting lines without anyone flushing, and is armed
// again by the next line.
func TestAccessLogDelayTimer(t *testing.T) {
	h, logs := delayedStack(t, 250*time.Millisecond)
	ft := withFakeTimer(h)
	for round := 1; round <= 2; round++ {
		get(h, "/healthz")
		if armed, due := ft.state(); !armed || due != 250*time.Millisecond {
			t.Fatalf("round %d: timer armed %v for %v, want armed for 250ms", round, armed, due)
		}
		if n := strings.Count(logs.String(), "msg=request"); n != round-1 {
			t.Fatalf("round %d: %d lines before the timer fired, want %d", round, n, round-1)
		}
		ft.fire()
		if n := strings.Count(logs.String(), "msg=request"); n != round {
			t.Fatalf("round %d: %d lines after the timer fired, want %d", round, n, round)
		}
	}
}

// A burst makes the timer fire at once when a batch is full, and if the
// timer still does not run, the request that reaches maxWaitingLines
// writes them itself: the waiting lines never grow without bound and none
// is dropped.
func TestAccessLogDelayBounded(t *testing.T) {
	h, logs := delayedStack(t, time.Hour)
	ft := withFakeTimer(h)
	for range batchLines - 1 {
		get(h, "/healthz")
	}
	if _, due := ft.state(); due != time.Hour {
		t.Fatalf("timer due in %v before the batch was full, want 1h", due)
	}
	get(h, "/healthz")
	if armed, due := ft.state(); !armed || due != 0 {
		t.Fatalf("full batch: timer armed %v for %v, want armed for 0", armed, due)
	}
	if got := logs.String(); got != "" {
		t.Fatalf("the request that filled the batch wrote it: %d bytes", len(got))
	}
	ft.fire()
	if n := strings.Count(logs.String(), "msg=request"); n != batchLines {
		t.Fatalf("after the timer: %d lines, want %d", n, batchLines)
	}

	// The timer never runs (its goroutine starved, say): the requests
	// write the lines themselves at maxWaitingLines.
	for range maxWaitingLines - 1 {
		get(h, "/healthz")
	}
	if n := strings.Count(logs.String(), "msg=request"); n != batchLines {
		t.Fatalf("%d lines before the limit, want %d", n, batchLines)
	}
	get(h, "/healthz")
	if n := strings.Count(logs.String(), "msg=request"); n != batchLines+maxWaitingLines {
		t.Fatalf("at the limit: %d lines, want %d", n, batchLines+maxWaitingLines)
	}
}

// Requests from many goroutines, flushes from the timer, the full batch
// and FlushAccessLog at once: every line is written exactly once (run
// with -race).
func TestAccessLogDelayConcurrent(t *testing.T) {
	h, logs := delayedStack(t, time.Millisecond)
	const workers, each = 8, 100
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				get(h, fmt.Sprintf("/healthz?w=%d&i=%d", w, i))
				if i%25 == 0 {
					h.FlushAccessLog()
				}
			}
		}()
	}
	wg.Wait()
	h.FlushAccessLog()
	if n := strings.Count(logs.String(), "msg=request"); n != workers*each {
		t.Fatalf("%d lines, want %d", n, workers*each)
	}
}

// BenchmarkAccessLog is a trivial request through Handler with no access
// log, with its line written in the request (text, to io.Discard, as
// LOG_FORMAT=text does but for the destination), and with lines held back
// and written in batches (the flushes are inside the timing). In-process
// the batch saves little CPU; over a network, where each request's code
// competes with syscalls for the caches, it is the difference
// BenchmarkProfileOverHTTP in the root package shows.
func BenchmarkAccessLog(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	text := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		name  string
		log   *slog.Logger
		delay time.Duration
	}{
		{"none", slog.New(slog.DiscardHandler), 0},
		{"each", text, 0},
		{"batched", text, time.Hour},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := newStack(b, mux, Config{Logger: c.log, AccessLogDelay: c.delay, AccessLog: AccessLogAll})
			r := httptest.NewRequest("GET", "/x", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				h.ServeHTTP(w, r)
				if i++; i%batchLines == 0 {
					h.FlushAccessLog()
				}
			}
			h.FlushAccessLog()
		})
	}
}
