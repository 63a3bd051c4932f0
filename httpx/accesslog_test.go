package httpx

import (
	"fmt"
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
	return Handler(mux, Config{Logger: slog.New(slog.NewTextHandler(logs, nil)), AccessLogDelay: delay}), logs
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

// The timer writes waiting lines without anyone flushing.
func TestAccessLogDelayTimer(t *testing.T) {
	h, logs := delayedStack(t, 10*time.Millisecond)
	for round := 1; round <= 2; round++ { // the timer is armed again after it fired
		get(h, "/healthz")
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(logs.String(), "msg=request") < round {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no access line 10 s after a 10 ms delay: %q", round, logs.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// A burst cannot grow the waiting lines without bound: the request that
// fills the batch writes it.
func TestAccessLogDelayBounded(t *testing.T) {
	h, logs := delayedStack(t, time.Hour)
	for range maxWaitingLines - 1 {
		get(h, "/healthz")
	}
	if got := logs.String(); got != "" {
		t.Fatalf("written before the batch was full: %d bytes", len(got))
	}
	get(h, "/healthz")
	if n := strings.Count(logs.String(), "msg=request"); n != maxWaitingLines {
		t.Fatalf("after %d requests: %d lines, want all of them", maxWaitingLines, n)
	}
	get(h, "/healthz")
	h.FlushAccessLog()
	if n := strings.Count(logs.String(), "msg=request"); n != maxWaitingLines+1 {
		t.Fatalf("after a flush: %d lines, want %d", n, maxWaitingLines+1)
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
