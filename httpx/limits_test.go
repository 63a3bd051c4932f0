package httpx

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type countingBody struct {
	r io.Reader
	n int
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
func (c *countingBody) Close() error { return nil }

// TestBodyBudget: request bodies held at once stay within the budget, in
// all and per client; a request over it is answered 503 with Retry-After
// and Connection: close, its body unread, while another client's request
// still fits; the budget comes back when handlers return.
func TestBodyBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const mib = 1 << 20
		hold := make(chan struct{})
		var mu sync.Mutex
		held := 0
		mux := http.NewServeMux()
		mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			held += len(b)
			mu.Unlock()
			<-hold
			One(w, r, "upload.create", len(b))
		})
		h := newStack(t, mux, Config{BodyBytesInFlight: 3 * mib, BodyBytesPerClient: 2 * mib})
		send := func(client string, wait bool) (*httptest.ResponseRecorder, *countingBody) {
			body := &countingBody{r: strings.NewReader(strings.Repeat("x", mib))}
			req := httptest.NewRequest("POST", "/upload", body)
			req.ContentLength = mib
			req.Header.Set("Content-Type", "application/json")
			req.RemoteAddr = client + ":1234"
			rec := httptest.NewRecorder()
			if wait {
				h.ServeHTTP(rec, req)
			} else {
				go h.ServeHTTP(rec, req)
				synctest.Wait()
			}
			return rec, body
		}
		send("192.0.2.1", false)
		send("192.0.2.1", false)
		rec, body := send("192.0.2.1", true) // a third from the same client
		if rec.Code != 503 || rec.Header().Get("Retry-After") != "1" || rec.Header().Get("Connection") != "close" {
			t.Fatalf("over the per-client share: got %d, Retry-After %q, Connection %q; want 503, 1, close",
				rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("Connection"))
		}
		if body.n != 0 {
			t.Errorf("a refused body was read: %d bytes", body.n)
		}
		send("192.0.2.2", false) // another client still fits: 3 MiB held
		rec, body = send("192.0.2.3", true)
		if rec.Code != 503 || body.n != 0 {
			t.Fatalf("over the total: got %d with %d bytes read, want 503 unread", rec.Code, body.n)
		}
		mu.Lock()
		if held > 3*mib {
			t.Errorf("handlers hold %d bytes, over the budget of %d", held, 3*mib)
		}
		mu.Unlock()
		close(hold)
		synctest.Wait()
		if n := h.bodies.inUse(); n != 0 {
			t.Fatalf("budget in use after the handlers returned: %d, want 0", n)
		}
		if rec, _ := send("192.0.2.3", true); rec.Code != 200 {
			t.Fatalf("after the budget came back: got %d, want 200", rec.Code)
		}
	})
}

// TestLimitListener: connections over the total or per-client limit are
// answered 503 at once and closed without being read; a trusted proxy is
// held to the total only; a closed connection frees its place.
func TestLimitListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(raw, 3, 2, []netip.Prefix{netip.MustParsePrefix("127.0.0.3/32")}, true)
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	refused := func(c net.Conn) {
		t.Helper()
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("refused connection: %v, want a 503", err)
		}
		if res.StatusCode != 503 || res.Header.Get("Retry-After") != "1" || !res.Close {
			t.Fatalf("got %d, Retry-After %q, close %v; want 503, 1, true", res.StatusCode, res.Header.Get("Retry-After"), res.Close)
		}
	}
	dial("127.0.0.2")
	s1 := <-accepted
	dial("127.0.0.2")
	<-accepted
	refused(dial("127.0.0.2")) // the client's third
	s1.Close()                 // the server ends one: its place is free again
	dial("127.0.0.2")
	<-accepted
	dial("127.0.0.3") // the proxy: only the total holds it
	<-accepted
	refused(dial("127.0.0.3")) // the total of 3 is reached
}

// TestBodyBudgetPrefixes: the body budget counts a client by its prefix,
// so that attackers walking through the addresses of an IPv6 /64, or
// through the /64s of a /56 or the /56s of a /48, hold no more than their
// share (2 MiB of the default 16 for a /64, 4 for a /56, 8 for a /48), and a fresh client is still
// answered. The old budget gave every exact address a quarter: a /64
// held all of it.
func TestBodyBudgetPrefixes(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name     string
		attacker func(i int) string
		held     int // attacking bodies held at once
	}{
		{"one /64", func(i int) string { return fmt.Sprintf("[2001:db8:1:2::%x]", i+1) }, 2},
		{"the /64s of one /56", func(i int) string { return fmt.Sprintf("[2001:db8:1:%x::1]", i) }, 4},
		{"the /56s of one /48", func(i int) string { return fmt.Sprintf("[2001:db8:1:%x00::1]", i) }, 8},
		{"one IPv4 address", func(int) string { return "192.0.2.7" }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hold := make(chan struct{})
				mux := http.NewServeMux()
				mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					if r.RemoteAddr != "198.51.100.1:1234" {
						<-hold
					}
					One(w, r, "upload.create", len(b))
				})
				h := newStack(t, mux, Config{BodyBytesInFlight: 16 * mib})
				// send returns the answer, or 0 while the handler holds it.
				send := func(client string) int {
					req := httptest.NewRequest("POST", "/upload", strings.NewReader(strings.Repeat("x", mib)))
					req.Header.Set("Content-Type", "application/json")
					req.RemoteAddr = client + ":1234"
					rec := httptest.NewRecorder()
					answered := make(chan struct{})
					go func() { h.ServeHTTP(rec, req); close(answered) }()
					synctest.Wait()
					select {
					case <-answered:
						return rec.Code
					default:
						return 0
					}
				}
				held := 0
				for i := range 100 {
					if send(tt.attacker(i)) == 0 {
						held++
					}
				}
				if held != tt.held {
					t.Errorf("attacking bodies held: got %d, want %d", held, tt.held)
				}
				if code := send("198.51.100.1"); code != 200 {
					t.Errorf("a fresh client during the attack: got %d, want 200", code)
				}
				close(hold)
				synctest.Wait()
				if n := h.bodies.inUse(); n != 0 {
					t.Errorf("budget in use after the handlers returned: %d, want 0", n)
				}
			})
		})
	}
}

// pipeListener serves net.Pipe connections with a chosen peer address,
// so that a real http.Server runs inside a synctest bubble.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

type pipeConn struct {
	net.Conn
	remote net.Addr
}

func (c pipeConn) RemoteAddr() net.Addr { return c.remote }

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{} }

func (l *pipeListener) dial(from string) net.Conn {
	client, server := net.Pipe()
	l.conns <- pipeConn{Conn: server, remote: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(from))}
	return client
}

// TestBodyBudgetSlowBody: a client that declares a 1 MiB body and sends
// a few bytes of it holds its reservation only until bodyReadTime, not
// for as long as it keeps the connection open; a body that arrives in
// time is served after it, its handler keeping its context. The old
// budget held the reservation for as long as the client waited.
func TestBodyBudgetSlowBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const mib = 1 << 20
		mux := http.NewServeMux()
		mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				w.WriteHeader(http.StatusRequestTimeout)
				return
			}
			time.Sleep(bodyReadTime(mib) * 2) // work after the body: the deadline is lifted
			if r.Context().Err() != nil {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			One(w, r, "upload.create", len(b))
		})
		h := newStack(t, mux, Config{BodyBytesInFlight: 16 * mib})
		ln := newPipeListener()
		srv := &http.Server{Handler: h}
		go srv.Serve(ln)
		defer srv.Close()

		slow := ln.dial("192.0.2.1:1000")
		defer slow.Close()
		go io.Copy(io.Discard, slow)
		fmt.Fprintf(slow, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\nxxxx", mib)
		synctest.Wait()
		if n := h.bodies.inUse(); n != mib {
			t.Fatalf("while the body trickles: %d reserved, want %d", n, mib)
		}
		time.Sleep(bodyReadTime(mib) + time.Second)
		synctest.Wait()
		if n := h.bodies.inUse(); n != 0 {
			t.Fatalf("after bodyReadTime: %d still reserved by a body that never came, want 0", n)
		}

		fast := ln.dial("192.0.2.2:1000")
		defer fast.Close()
		go fmt.Fprintf(fast, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", mib, strings.Repeat("x", mib))
		res, err := http.ReadResponse(bufio.NewReader(fast), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("a body sent in time, its handler working past the deadline: got %d, want 200", res.StatusCode)
		}
	})
}

// TestLimitListenerPrefixes: at the default limits (512 connections, 64
// per client), eight IPv4 addresses and a /64 walked through cannot take
// every connection: a peer is counted by its prefix, and the last eighth
// goes only to peers holding none, one each. The old listener counted
// exact addresses: eight of them, or one /64, filled it.
func TestLimitListenerPrefixes(t *testing.T) {
	l := LimitListener(nopListener{}, 512, 64, nil, true).(*limitListener)
	took := func(peer netip.Addr, tries int) int {
		n := 0
		for range tries {
			if l.take(peer) {
				n++
			}
		}
		return n
	}
	for i := range 8 {
		want := 64
		if i == 7 {
			want = 1 // only the reserve is left: one connection
		}
		if got := took(netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)}), 100); got != want {
			t.Errorf("IPv4 attacker %d: got %d connections, want %d", i+1, got, want)
		}
	}
	v6 := 0
	for i := range 1000 {
		v6 += took(netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 14: byte(i >> 8), 15: byte(i)}), 1)
	}
	if v6 != 1 {
		t.Errorf("a /64 walked through: got %d connections, want 1", v6)
	}
	for i := range 62 {
		if !l.take(netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})) {
			t.Fatalf("fresh client %d refused with %d connections open, want it served", i+1, l.open)
		}
	}
	if l.take(netip.MustParseAddr("203.0.113.1")) {
		t.Errorf("a connection over the total of 512 was taken")
	}
	l.give(netip.AddrFrom4([4]byte{192, 0, 2, 1}))
	if !l.take(netip.MustParseAddr("203.0.113.1")) {
		t.Errorf("a fresh client after a connection closed: refused, want served")
	}
}

type nopListener struct{ net.Listener }

// TestBodyBudgetReserveRecent: attackers trickling 1 MiB bodies from
// twenty addresses, each holding nothing in the moment it reconnects,
// cannot take the reserve: a body that large never comes from it, and an
// address that sent one recently is no newcomer even with a small body.
// A fresh address's login still fits, and an address's account decays
// (on the budget's clock) until it is a newcomer again. The old budget
// gave the reserve to any address holding nothing at that instant.
func TestBodyBudgetReserveRecent(t *testing.T) {
	const mib = 1 << 20
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	b := newBodyBudget(16*mib, 2*mib, 2*mib, func() time.Time { return now })
	attacker := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)}) }
	// Every attacker has sent a body before: taken and given back.
	for i := range 20 {
		if !b.take(attacker(i), mib) {
			t.Fatalf("attacker %d's first body refused with %d in use", i, b.inUse())
		}
		b.release(attacker(i), mib)
	}
	// Seven fill the shared part, two bodies each.
	for i := range 7 {
		for range 2 {
			if !b.take(attacker(i), mib) {
				t.Fatalf("attacker %d refused with %d in use, want the shared part filled", i, b.inUse())
			}
		}
	}
	// The others reconnect holding nothing: not from the reserve.
	for i := 7; i < 20; i++ {
		if b.take(attacker(i), mib) {
			t.Fatalf("attacker %d, holding nothing, took 1 MiB from the reserve", i)
		}
		if b.take(attacker(i), 1<<10) {
			t.Fatalf("attacker %d, holding nothing but with 1 MiB sent a moment ago, took 1 KiB from the reserve", i)
		}
	}
	if b.take(netip.MustParseAddr("198.51.100.9"), mib) {
		t.Errorf("a fresh address took 1 MiB from the reserve, want only small bodies from it")
	}
	for i := range 25 {
		if !b.take(netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)}), 200) {
			t.Fatalf("fresh address %d's login of 200 bytes refused, want it served from the reserve", i+1)
		}
	}
	if got, want := b.inUse(), int64(14*mib+25*200); got != want {
		t.Errorf("in use: got %d, want %d", got, want)
	}
	now = now.Add(3 * recentHalfLife)
	if b.take(attacker(19), 1<<10) {
		t.Errorf("after three half-lives (1 MiB decayed to 128 KiB): a small body taken from the reserve, want refused")
	}
	now = now.Add(2 * recentHalfLife)
	if !b.take(attacker(19), 1<<10) {
		t.Errorf("after five half-lives (1 MiB decayed to 32 KiB): a small body refused, want it served as a newcomer's")
	}
}
