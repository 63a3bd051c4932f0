package httpx

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
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
		h := Handler(mux, Config{BodyBytesInFlight: 3 * mib, BodyBytesPerClient: 2 * mib})
		send := func(client string, wait bool) (*httptest.ResponseRecorder, *countingBody) {
			body := &countingBody{r: strings.NewReader(strings.Repeat("x", mib))}
			req := httptest.NewRequest("POST", "/upload", body)
			req.ContentLength = mib
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
