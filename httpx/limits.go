package httpx

import (
	"bytes"
	"math"
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
// through the addresses of a /64 buys nothing.
//
// The last reserve bytes are kept so that a person signing in while
// others fill the rest is still answered (docs/security.md, "Bodies").
// Counting only what a client holds at this instant does not keep them:
// an attacker trickling 1 MiB bodies from many addresses holds nothing
// in the moment between one body and the next, so each of its
// reconnections looked like a newcomer, and twenty addresses kept the
// reserve full. Two rules keep it now:
//
//   - The reserve serves small bodies only, reservePiece bytes or fewer
//     (a sixteenth of it: 128 KiB at the default 16 MiB): a login, a
//     registration, a settings change. A body of a megabyte, which is
//     what fills memory, waits for the shared part, however new its
//     address is. So no number of fresh addresses fills the reserve
//     with large bodies.
//   - A client is a newcomer only if it holds nothing and its recent
//     account is below newcomerBytes: every reservation is charged to
//     the client's keys, and the charge halves every recentHalfLife.
//     An address that sent a megabyte stays out of the reserve for
//     about four minutes after; an attacker sending small bodies uses
//     it once per address and is then kept out, while a person whose
//     login body is a few hundred bytes stays a newcomer. The accounts
//     are kept for at most maxAccounts keys; beyond that a key without
//     one is not a newcomer (the reserve fails closed, the shared part
//     still serves it).
//
// Two other ideas were weighed and left: a faster body deadline when the
// budget is short cuts a slow but honest link as readily as an
// attacker, who then sends a little faster; and a per-client bound on
// concurrent bodies is what perClient already is in bytes.
type bodyBudget struct {
	total, perClient, reserve int64
	now                       func() time.Time

	mu       sync.Mutex
	used     int64
	keys     map[netip.Prefix]int64
	accounts map[netip.Prefix]account
	swept    time.Time // when accounts were last cleared of decayed ones
}

// account is a client key's recent body bytes: bytes at at, halving every
// recentHalfLife after.
type account struct {
	bytes float64
	at    time.Time
}

func (a account) value(now time.Time) float64 {
	dt := now.Sub(a.at)
	if dt <= 0 {
		return a.bytes
	}
	return a.bytes * math.Exp2(-float64(dt)/float64(recentHalfLife))
}

const (
	// recentHalfLife is how fast a client's account of recent body bytes
	// halves: 1 MiB falls under newcomerBytes in four of them.
	recentHalfLife = time.Minute
	// newcomerBytes is the account under which a client holding nothing
	// may use the reserve: a few logins' worth.
	newcomerBytes = 64 << 10
	// maxAccounts bounds the accounts kept (about 80 bytes each). When
	// they are full, those fallen under a byte are dropped, at most once
	// per recentHalfLife, so that a full map does not make every request
	// walk it.
	maxAccounts = 1 << 16
)

func newBodyBudget(total, perClient, reserve int64, now func() time.Time) *bodyBudget {
	if perClient <= 0 || perClient > total {
		perClient = total
	}
	reserve = min(max(reserve, 0), total)
	return &bodyBudget{total: total, perClient: perClient, reserve: reserve, now: now,
		keys: make(map[netip.Prefix]int64), accounts: make(map[netip.Prefix]account)}
}

// reservePiece is the largest body the reserve serves.
func (b *bodyBudget) reservePiece() int64 { return b.reserve / 16 }

// take reserves n bytes for client, or reports false when that would go
// over a bound.
func (b *bodyBudget) take(client netip.Addr, n int64) bool {
	keys := AddrKeys(client)
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.accounts) >= maxAccounts && now.Sub(b.swept) >= recentHalfLife {
		b.swept = now
		for k, a := range b.accounts {
			if a.value(now) < 1 {
				delete(b.accounts, k)
			}
		}
	}
	newcomer := n <= b.reservePiece()
	for _, k := range keys {
		c := b.keys[k]
		if c+n > AddrKeyLimit(k, b.perClient) {
			return false
		}
		if c > 0 {
			newcomer = false
		} else if a, ok := b.accounts[k]; ok && a.value(now) >= newcomerBytes {
			newcomer = false
		} else if !ok && len(b.accounts) >= maxAccounts {
			newcomer = false // no account can be kept: fail closed
		}
	}
	limit := b.total - b.reserve
	if newcomer {
		limit = b.total
	}
	if b.used+n > limit {
		return false
	}
	b.used += n
	for _, k := range keys {
		b.keys[k] += n
	}
	b.charge(keys, n, now)
	return true
}

// charge adds n bytes to the accounts of keys; a key without an account
// gets none while the accounts are full.
func (b *bodyBudget) charge(keys []netip.Prefix, n int64, now time.Time) {
	for _, k := range keys {
		a, ok := b.accounts[k]
		if !ok && len(b.accounts) >= maxAccounts {
			continue
		}
		b.accounts[k] = account{bytes: a.value(now) + float64(n), at: now}
	}
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
