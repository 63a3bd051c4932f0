package httpx

import (
	"bytes"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// BusyRetryAfter is the Retry-After of an answer refused for load: a
// body budget or connection limit that is full.
const BusyRetryAfter = time.Second

// Busy is the answer to a request refused because the server holds as
// much as it may: 503 with Retry-After, and the connection closed without
// its body being read. It is expected under attack, so it is not logged
// as a failure (the access log has its status).
func Busy() *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "busy", Message: "service unavailable", RetryAfter: BusyRetryAfter}
}

// bodyBudget bounds the request-body bytes the handlers may hold at once,
// in all and per client address, so that a thousand connections each
// sending a megabyte cannot make the server hold a gigabyte: a request
// with a body reserves what it may read (its Content-Length, or
// MaxBodyBytes when it does not say) before any route runs, and gives it
// back when its handler returns. A request that does not fit is refused
// without its body being read. A zero total means no bound.
type bodyBudget struct {
	total, perClient int64

	mu      sync.Mutex
	used    int64
	clients map[netip.Addr]int64
}

func newBodyBudget(total, perClient int64) *bodyBudget {
	if perClient <= 0 || perClient > total {
		perClient = total
	}
	return &bodyBudget{total: total, perClient: perClient, clients: make(map[netip.Addr]int64)}
}

// reserve takes n bytes for client, or reports false when that would go
// over either bound.
func (b *bodyBudget) reserve(client netip.Addr, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.clients[client]
	if b.used+n > b.total || c+n > b.perClient {
		return false
	}
	b.used += n
	b.clients[client] = c + n
	return true
}

func (b *bodyBudget) release(client netip.Addr, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if c := b.clients[client] - n; c > 0 {
		b.clients[client] = c
	} else {
		delete(b.clients, client)
	}
}

// inUse returns the bytes reserved now.
func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// bodySize is what a request's body may take in memory: nothing without a
// body, its Content-Length up to MaxBodyBytes, MaxBodyBytes when it does
// not say (chunked), and nothing over MaxBodyBytes, which Decode refuses
// on its declared length before reading.
func bodySize(r *http.Request) int64 {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return 0
	case r.ContentLength < 0:
		return MaxBodyBytes
	case r.ContentLength > MaxBodyBytes:
		return 0
	}
	return r.ContentLength
}

// LimitListener returns a listener that holds at most max connections
// open at once, and at most perClient from one peer address unless the
// peer is a trusted proxy (whose connections carry many clients). A
// connection over a limit is answered at once, without a byte of its
// request being read: with a 503 and Retry-After when reply is true
// (plain HTTP), closed when not (TLS, where a plain answer would be
// noise). max ≤ 0 means no limit; perClient ≤ 0 means max.
func LimitListener(ln net.Listener, max, perClient int, trusted []netip.Prefix, reply bool) net.Listener {
	if max <= 0 {
		return ln
	}
	if perClient <= 0 || perClient > max {
		perClient = max
	}
	return &limitListener{Listener: ln, max: max, perClient: perClient, trusted: trusted, reply: reply,
		clients: make(map[netip.Addr]int)}
}

type limitListener struct {
	net.Listener
	max, perClient int
	trusted        []netip.Prefix
	reply          bool

	mu      sync.Mutex
	open    int
	clients map[netip.Addr]int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer := peerAddr(c)
		if l.take(peer) {
			return &limitConn{Conn: c, l: l, peer: peer}, nil
		}
		go l.refuse(c)
	}
}

func peerAddr(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

func (l *limitListener) take(peer netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max {
		return false
	}
	n := l.clients[peer]
	if n >= l.perClient && !isTrusted(peer, l.trusted) {
		return false
	}
	l.open++
	l.clients[peer] = n + 1
	return true
}

func (l *limitListener) give(peer netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if n := l.clients[peer] - 1; n > 0 {
		l.clients[peer] = n
	} else {
		delete(l.clients, peer)
	}
}

// refuse answers a connection over a limit and closes it.
func (l *limitListener) refuse(c net.Conn) {
	defer c.Close()
	if !l.reply {
		return
	}
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(busyResponse())
}

// busyResponse is the whole HTTP answer a refused connection gets: the
// service's JSON envelope for Busy, with Connection: close.
func busyResponse() []byte {
	rec := &bufferWriter{header: http.Header{}}
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	WriteError(rec, r, "connection.limit", Busy())
	var out bytes.Buffer
	out.WriteString("HTTP/1.1 503 Service Unavailable\r\n")
	rec.header.Set("Connection", "close")
	rec.header.Set("Content-Length", strconv.Itoa(rec.body.Len()))
	for _, kv := range securityHeaders {
		rec.header[kv.key] = kv.value
	}
	rec.header.Write(&out)
	out.WriteString("\r\n")
	out.Write(rec.body.Bytes())
	return out.Bytes()
}

// bufferWriter is a ResponseWriter into memory, for busyResponse.
type bufferWriter struct {
	header http.Header
	body   bytes.Buffer
}

func (w *bufferWriter) Header() http.Header         { return w.header }
func (w *bufferWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *bufferWriter) WriteHeader(int)             {}

type limitConn struct {
	net.Conn
	l    *limitListener
	peer netip.Addr
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.give(c.peer) })
	return err
}
