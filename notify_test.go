package main

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// notifyDeadline is how long a test waits for a datagram that must arrive.
// It is generous on purpose: it only bounds a failing test, never measures.
const notifyDeadline = 10 * time.Second

// notifySocket stands in for systemd: a unixgram socket whose messages the
// test reads back.
type notifySocket struct {
	t    *testing.T
	addr string // the NOTIFY_SOCKET value
	conn *net.UnixConn
}

// listenNotify opens a socket in t.TempDir(), or in the abstract namespace
// when abstract is true.
func listenNotify(t *testing.T, abstract bool) *notifySocket {
	t.Helper()
	name := filepath.Join(t.TempDir(), "notify")
	if abstract {
		name = "@searchsvc-test-" + strconv.Itoa(os.Getpid()) + "-" + rand.Text()
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listen %s: %v", name, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &notifySocket{t: t, addr: name, conn: conn}
}

// env is a getenv holding NOTIFY_SOCKET and the given pairs.
func (s *notifySocket) env(kv ...string) func(string) string {
	m := map[string]string{"NOTIFY_SOCKET": s.addr}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// recv returns the next datagram, failing the test if none arrives within
// notifyDeadline.
func (s *notifySocket) recv() string {
	s.t.Helper()
	s.conn.SetReadDeadline(time.Now().Add(notifyDeadline))
	buf := make([]byte, 4096)
	n, err := s.conn.Read(buf)
	if err != nil {
		s.t.Fatalf("no notification within %v: %v", notifyDeadline, err)
	}
	return string(buf[:n])
}

// drain returns every datagram already queued. Callers make sure all sends
// have completed first, so the short deadline only ends the loop.
func (s *notifySocket) drain() []string {
	s.t.Helper()
	var got []string
	buf := make([]byte, 4096)
	for {
		s.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := s.conn.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return got
		}
		if err != nil {
			s.t.Fatalf("read: %v", err)
		}
		got = append(got, string(buf[:n]))
	}
}

func TestNotifyStates(t *testing.T) {
	for _, abstract := range []bool{false, true} {
		name := "path"
		if abstract {
			name = "abstract"
		}
		t.Run(name, func(t *testing.T) {
			s := listenNotify(t, abstract)
			n := newNotifier(s.env())
			steps := []struct {
				call func() error
				want string
			}{
				{n.Ready, "READY=1"},
				{func() error { return n.Status("serving on 127.0.0.1:8080") }, "STATUS=serving on 127.0.0.1:8080"},
				{func() error { return n.Status("two\nlines\r\nthree") }, "STATUS=two lines three"},
				{n.Stopping, "STOPPING=1"},
			}
			for _, st := range steps {
				if err := st.call(); err != nil {
					t.Fatalf("sending %q: %v", st.want, err)
				}
				if got := s.recv(); got != st.want {
					t.Errorf("got %q, want %q", got, st.want)
				}
			}
		})
	}
}

// fakeTicker replaces time.NewTicker: the test delivers each tick itself.
// The channel is unbuffered, so a delivered tick means Watchdog finished
// the previous round (health check and keep-alive) and took the tick.
type fakeTicker struct {
	mu       sync.Mutex
	interval time.Duration
	started  int
	ticks    chan time.Time
}

func installFakeTicker(n *notifier) *fakeTicker {
	f := &fakeTicker{ticks: make(chan time.Time)}
	n.newTicker = func(d time.Duration) (<-chan time.Time, func()) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.interval = d
		f.started++
		return f.ticks, func() {}
	}
	return f
}

// runWatchdog starts Watchdog, delivers ticks, stops it and waits for it to
// return, so every keep-alive it sent is queued on the socket.
func runWatchdog(t *testing.T, n *notifier, f *fakeTicker, ticks int, healthy func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Watchdog(ctx, healthy)
	}()
	for range ticks {
		select {
		case f.ticks <- time.Time{}:
		case <-done:
			t.Fatal("Watchdog returned before ctx was cancelled")
		case <-time.After(notifyDeadline):
			t.Fatalf("Watchdog did not take a tick within %v", notifyDeadline)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(notifyDeadline):
		t.Fatalf("Watchdog did not return within %v of cancel", notifyDeadline)
	}
}

// script returns a healthy func that answers from vals in order, then the
// last value forever.
func script(vals ...bool) func() bool {
	var mu sync.Mutex
	i := 0
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		v := vals[min(i, len(vals)-1)]
		i++
		return v
	}
}

func TestNotifyWatchdogCadence(t *testing.T) {
	tests := []struct {
		name      string
		healthy   []bool // answers of healthy(), one per round
		ticks     int    // rounds after the first
		wantPings int
	}{
		{"healthy pings once per round", []bool{true}, 4, 5},
		{"unhealthy never pings", []bool{false}, 4, 0},
		{"pings stop when unhealthy", []bool{true, true, false, false, false}, 4, 2},
		{"pings resume when healthy again", []bool{false, false, true, true, true}, 4, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := listenNotify(t, false)
			n := newNotifier(s.env("WATCHDOG_USEC", "30000000", "WATCHDOG_PID", strconv.Itoa(os.Getpid())))
			f := installFakeTicker(n)
			runWatchdog(t, n, f, tt.ticks, script(tt.healthy...))

			if f.interval != 15*time.Second {
				t.Errorf("ticker interval: got %v, want 15s (half of WATCHDOG_USEC=30s)", f.interval)
			}
			got := s.drain()
			if len(got) != tt.wantPings {
				t.Errorf("got %d keep-alives %q, want %d", len(got), got, tt.wantPings)
			}
			for _, m := range got {
				if m != "WATCHDOG=1" {
					t.Errorf("got %q, want WATCHDOG=1", m)
				}
			}
		})
	}
}

// TestNotifyWatchdogRealTicker runs the production ticker with a short
// WATCHDOG_USEC and only checks that keep-alives keep arriving.
func TestNotifyWatchdogRealTicker(t *testing.T) {
	s := listenNotify(t, true)
	n := newNotifier(s.env("WATCHDOG_USEC", "20000")) // 20 ms: a ping every 10 ms
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Watchdog(ctx, func() bool { return true })
	}()
	for range 5 {
		if got := s.recv(); got != "WATCHDOG=1" {
			t.Fatalf("got %q, want WATCHDOG=1", got)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(notifyDeadline):
		t.Fatalf("Watchdog did not return within %v of cancel", notifyDeadline)
	}
}

func TestNotifyWatchdogDisabled(t *testing.T) {
	other := strconv.Itoa(os.Getpid() + 1)
	tests := []struct {
		name string
		env  []string
	}{
		{"WATCHDOG_PID names another process", []string{"WATCHDOG_USEC", "30000000", "WATCHDOG_PID", other}},
		{"no WATCHDOG_USEC", nil},
		{"WATCHDOG_USEC zero", []string{"WATCHDOG_USEC", "0"}},
		{"WATCHDOG_USEC garbled", []string{"WATCHDOG_USEC", "30s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := listenNotify(t, false)
			n := newNotifier(s.env(tt.env...))
			f := installFakeTicker(n)
			calls := 0
			runWatchdog(t, n, f, 0, func() bool { calls++; return true })
			if f.started != 0 || calls != 0 {
				t.Errorf("got ticker started %d times and %d health checks, want none", f.started, calls)
			}
			if got := s.drain(); len(got) != 0 {
				t.Errorf("got %q, want no keep-alives", got)
			}
			// Readiness still works: only the watchdog is off.
			if err := n.Ready(); err != nil {
				t.Fatalf("Ready: %v", err)
			}
			if got := s.recv(); got != "READY=1" {
				t.Errorf("got %q, want READY=1", got)
			}
		})
	}
}

func TestNotifyNoSocket(t *testing.T) {
	for name, n := range map[string]*notifier{
		"unset":        newNotifier(func(string) string { return "" }),
		"nil notifier": nil,
		"watchdog env without socket": newNotifier(func(k string) string {
			return map[string]string{"WATCHDOG_USEC": "1000", "WATCHDOG_PID": strconv.Itoa(os.Getpid())}[k]
		}),
	} {
		t.Run(name, func(t *testing.T) {
			for _, err := range []error{n.Ready(), n.Status("x"), n.Stopping()} {
				if err != nil {
					t.Errorf("got %v, want nil", err)
				}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				n.Watchdog(context.Background(), func() bool { return true })
			}()
			select {
			case <-done:
			case <-time.After(notifyDeadline):
				t.Fatal("Watchdog without a socket did not return")
			}
		})
	}
}

func TestNotifyErrors(t *testing.T) {
	t.Run("relative NOTIFY_SOCKET", func(t *testing.T) {
		n := newNotifier(func(k string) string {
			return map[string]string{"NOTIFY_SOCKET": "notify.sock", "WATCHDOG_USEC": "1000"}[k]
		})
		if err := n.Ready(); err == nil {
			t.Error("Ready: got nil, want an error naming NOTIFY_SOCKET")
		}
		if err := n.Stopping(); err != nil {
			t.Errorf("Stopping: got %v, want nil (no usable socket)", err)
		}
		n.Watchdog(context.Background(), func() bool { return true }) // must return at once
	})
	t.Run("socket gone", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "gone")
		n := newNotifier(func(k string) string { return map[string]string{"NOTIFY_SOCKET": missing}[k] })
		if err := n.Ready(); err == nil {
			t.Error("Ready: got nil, want a send error")
		}
	})
}

// TestNotifyExtendStart: while the start goes on, systemd is asked for
// 30 s more at once and at every tick (15 s); the asking ends with the
// start, and after maxStartExtensions asks even if the start never ends,
// so a start that hangs still times out. Without a socket it is a no-op.
func TestNotifyExtendStart(t *testing.T) {
	s := listenNotify(t, false)
	n := newNotifier(s.env())
	f := installFakeTicker(n)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.ExtendStart(ctx)
	}()
	for range 2 {
		select {
		case f.ticks <- time.Time{}:
		case <-time.After(notifyDeadline):
			t.Fatalf("ExtendStart did not take a tick within %v", notifyDeadline)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(notifyDeadline):
		t.Fatalf("ExtendStart did not return within %v of the start's end", notifyDeadline)
	}
	got := s.drain()
	if f.interval != 15*time.Second || len(got) != 3 {
		t.Fatalf("interval %v, messages %q; want 15s and three", f.interval, got)
	}
	for _, m := range got {
		if m != "EXTEND_TIMEOUT_USEC=30000000" {
			t.Errorf("got %q, want EXTEND_TIMEOUT_USEC=30000000", m)
		}
	}

	// A start that never ends: the asking stops by itself. Each ask is
	// read before the next tick: the socket queues only a few.
	n = newNotifier(s.env())
	f = installFakeTicker(n)
	done = make(chan struct{})
	go func() {
		defer close(done)
		n.ExtendStart(context.Background())
	}()
	for i := range maxStartExtensions {
		if m := s.recv(); m != "EXTEND_TIMEOUT_USEC=30000000" {
			t.Fatalf("ask %d: %q", i, m)
		}
		if i == maxStartExtensions-1 {
			break
		}
		select {
		case f.ticks <- time.Time{}:
		case <-done:
			t.Fatalf("ExtendStart returned after %d asks, want %d", i+1, maxStartExtensions)
		case <-time.After(notifyDeadline):
			t.Fatalf("ExtendStart did not take tick %d within %v", i+1, notifyDeadline)
		}
	}
	select {
	case <-done:
	case <-time.After(notifyDeadline):
		t.Fatalf("ExtendStart did not stop after %d asks", maxStartExtensions)
	}

	// Not started by systemd: nothing to ask, returns at once.
	newNotifier(func(string) string { return "" }).ExtendStart(context.Background())
}
