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
// in all and per client, so that a thousand connections each sending a
// megabyte cannot make the server hold a gigabyte: a request with a body
// reserves what it may read (its Content-Length, or MaxBodyBytes when it
// does not say) before any route runs, and gives it back when its handler
// returns. A request that does not fit is refused without its body being
// read. A zero total means no bound.
//
// A client is counted by AddrKeys (an IPv4 address; an IPv6 /64, /56 and
// /48), each key held to AddrKeyLimit of perClient, so that walking
// through the addresses of a /64 buys nothing. The last reserve bytes go
// only to a client holding nothing yet: clients that fill their shares
// of the rest still leave room for a newcomer, and no one prefix can take
// more of the reserve than one body.
type bodyBudget struct {
	total, perClient, reserve int64

	mu   sync.Mutex
	used int64
	keys map[netip.Prefix]int64
}

func newBodyBudget(total, perClient, reserve int64) *bodyBudget {
	if perClient <= 0 || perClient > total {
		perClient = total
	}
	reserve = min(max(reserve, 0), total)
	return &bodyBudget{total: total, perClient: perClient, reserve: reserve, keys: make(map[netip.Prefix]int64)}
}

// take reserves n bytes for client, or reports false when that would go
// over a bound.
func (b *bodyBudget) take(client netip.Addr, n int64) bool {
	keys := AddrKeys(client)
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := b.total
	for _, k := range keys {
		c := b.keys[k]
		if c+n > AddrKeyLimit(k, b.perClient) {
			return false
		}
		if c > 0 {
			limit = b.total - b.reserve // not a newcomer
		}
	}
	if b.used+n > limit {
		return false
	}
	b.used += n
	for _, k := range keys {
		b.keys[k] += n
	}
	return true
}

func (b *bodyBudget) release(client netip.Addr, n int64) {
	keys := AddrKeys(client)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	for _, k := range keys {
		if c := b.keys[k] - n; c > 0 {
			b.keys[k] = c
		} else {
			delete(b.keys, k)
		}
	}
}

// inUse returns the bytes reserved now.
func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// bodyReadTime is how long a body of n bytes may take to arrive: a
// client that declares a body and sends it slowly, or not at all, holds
// its reservation no longer than this (the server's ReadTimeout is the
// outer bound). It allows 128 KiB/s after five seconds: 13 s for 1 MiB.
// net/http lifts the deadline once the body has been read to its end, so
// a handler still working afterwards keeps its connection and context.
func bodyReadTime(n int64) time.Duration {
	return 5*time.Second + time.Duration(n)*time.Second/(128<<10)
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
// open at once, and at most perClient from one peer unless the peer is a
// trusted proxy (whose connections carry many clients). A peer is counted
// by AddrKeys, each key held to AddrKeyLimit of perClient, so that one
// /64 is one client. The last eighth of max goes only to a peer holding
// no connection yet (or a trusted proxy): peers that fill their shares
// of the rest still leave room for a newcomer. A
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
	return &limitListener{Listener: ln, max: max, perClient: perClient, reserve: max / 8, trusted: trusted, reply: reply,
		keys: make(map[netip.Prefix]int)}
}

type limitListener struct {
	net.Listener
	max, perClient, reserve int
	trusted                 []netip.Prefix
	reply                   bool

	mu   sync.Mutex
	open int
	keys map[netip.Prefix]int
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
	keys := AddrKeys(peer)
	trusted := isTrusted(peer, l.trusted)
	l.mu.Lock()
	defer l.mu.Unlock()
	limit := l.max
	for _, k := range keys {
		n := l.keys[k]
		if trusted {
			continue
		}
		if n >= AddrKeyLimit(k, l.perClient) {
			return false
		}
		if n > 0 {
			limit = l.max - l.reserve // not a newcomer
		}
	}
	if l.open >= limit {
		return false
	}
	l.open++
	for _, k := range keys {
		l.keys[k]++
	}
	return true
}

func (l *limitListener) give(peer netip.Addr) {
	keys := AddrKeys(peer)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	for _, k := range keys {
		if n := l.keys[k] - 1; n > 0 {
			l.keys[k] = n
		} else {
			delete(l.keys, k)
		}
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
