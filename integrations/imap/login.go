package imap

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Defaults of a Dialer.
const (
	// DefaultTimeout bounds connecting and logging in when Dialer.Timeout
	// is zero.
	DefaultTimeout = 30 * time.Second
	// DefaultReadTimeout bounds each read and write on a logged-in
	// connection when Dialer.ReadTimeout is zero: a server must send
	// something within it, not finish a whole answer.
	DefaultReadTimeout = 60 * time.Second
	// MaxMessageSize is the largest message a sync downloads, in bytes, as
	// for Gmail; a larger one is stored from its header section only.
	MaxMessageSize = 25 << 20
)

// ErrLoginRejected means the server refused the username or password (a
// tagged NO to LOGIN or AUTHENTICATE).
var ErrLoginRejected = errors.New("imap: server refused the username or password")

// ErrRefused means the server answered NO to a command other than the
// login: a mailbox that went away, a search it would not run.
var ErrRefused = errors.New("imap: server refused the command")

// ServerError is a refusal or a goodbye from the server, with its text.
type ServerError struct {
	Status string // NO, BAD or BYE
	Text   string // the server's text, printable ASCII, at most 200 bytes
	err    error  // ErrLoginRejected, ErrRefused or ErrProtocol
}

func (e *ServerError) Error() string {
	return "imap: server answered " + e.Status + ": " + e.Text
}

func (e *ServerError) Unwrap() error { return e.err }

// Dialer connects to IMAP servers over implicit TLS (port 993 style; the
// password never crosses the network before TLS is up) and logs in. The
// zero Dialer trusts the system's certificate authorities, or what the
// account's Certificate field says.
type Dialer struct {
	// TLSConfig is cloned for each connection; ServerName defaults to the
	// account's host and MinVersion is at least TLS 1.2. Nil means defaults.
	TLSConfig *tls.Config
	// Timeout bounds connecting and logging in; zero means DefaultTimeout.
	Timeout time.Duration
	// ReadTimeout bounds each read and write once logged in; zero means
	// DefaultReadTimeout.
	ReadTimeout time.Duration
	// MaxMessageSize is the largest message body a client keeps; zero
	// means MaxMessageSize. A larger literal is read and thrown away.
	MaxMessageSize int64
	// DialContext, when set, makes the TCP connection under TLS; the
	// service sets a netguard.Dialer's, which refuses hosts that are not
	// on the public internet: the server host is chosen by the user. Nil
	// means a net.Dialer.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)
	// Now is the clock of the read deadlines; nil means time.Now.
	Now func() time.Time
	// Limits bound a sync's download batches; zero fields take their
	// defaults (100 messages, 8 MiB).
	Limits Limits
}

// Login connects to the account's server, logs in and out. A refused
// password is an error wrapping ErrLoginRejected; a server that does not
// speak IMAP, ErrProtocol or ErrLineTooLong; a certificate that does not
// verify, a *tls.CertificateVerificationError or ErrPinMismatch; a
// timeout or cancellation wraps the context's error.
func (d Dialer) Login(ctx context.Context, a Account) error {
	c, err := d.Dial(ctx, a)
	if err != nil {
		return err
	}
	c.Logout(ctx)
	return nil
}

// Dial connects to the account's server and logs in, within Timeout. The
// Client it returns must be closed (Logout, or Close).
func (d Dialer) Dial(ctx context.Context, a Account) (*Client, error) {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := d.dial(lctx, a)
	if err != nil && lctx.Err() != nil {
		// Whatever failed, it failed because time ran out or the caller
		// gave up.
		return nil, fmt.Errorf("imap: %w", lctx.Err())
	}
	return c, err
}

func (d Dialer) dial(ctx context.Context, a Account) (*Client, error) {
	cfg, err := d.tlsConfig(a)
	if err != nil {
		return nil, err
	}
	dial := d.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	raw, err := dial(ctx, "tcp", net.JoinHostPort(a.Host, strconv.Itoa(a.Port)))
	if err != nil {
		return nil, fmt.Errorf("imap: connect: %w", withoutAddress(err))
	}
	nc := tls.Client(raw, cfg)
	if err := nc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("imap: connect: %w", withoutAddress(err))
	}
	now := d.Now
	if now == nil {
		now = time.Now
	}
	rt := d.ReadTimeout
	if rt <= 0 {
		rt = DefaultReadTimeout
	}
	tc := &timedConn{Conn: nc, timeout: rt, now: now}
	c := newClient(tc, d.MaxMessageSize)
	c.conn = tc
	c.secret = a.Password
	if err := c.login(ctx, a); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// login reads the greeting, learns the capabilities and logs in, with
// LOGIN, or AUTHENTICATE PLAIN where the server disables LOGIN.
func (c *Client) login(ctx context.Context, a Account) error {
	defer c.watch(ctx)()
	greeting, err := c.next()
	if err != nil {
		return err
	}
	switch {
	case greeting.Tag != "*":
		return ErrProtocol
	case greeting.Status == "BYE":
		return c.refusal(greeting, ErrProtocol)
	case greeting.Status == "PREAUTH":
		// Already authenticated (by the connection itself): nothing to prove.
	case greeting.Status != "OK":
		return ErrProtocol
	}
	// The greeting's capabilities, if any, say whether LOGIN is disabled;
	// without them LOGIN is tried at once, saving a round trip.
	c.caps = capSet(greeting.Caps)
	if greeting.Status != "PREAUTH" {
		var done response
		if c.caps["LOGINDISABLED"] && c.caps["AUTH=PLAIN"] {
			done, err = c.authPlain(a)
		} else {
			done, err = c.run("LOGIN", 100, nil, a.Username, a.Password)
		}
		switch {
		case err != nil:
			return err
		case done.Status == "NO":
			return c.refusal(done, ErrLoginRejected)
		case done.Status != "OK":
			return c.refusal(done, ErrProtocol)
		}
		c.caps = capSet(done.Caps)
	}
	// Lines may now be longer, a folder's SEARCH answer much longer.
	c.lx.line, c.lx.long = maxResponseLine, maxLine
	if c.caps == nil {
		return c.capability()
	}
	return nil
}

// authPlain runs AUTHENTICATE PLAIN (RFC 4616), with the initial response
// on the command line where the server takes it (RFC 4959).
func (c *Client) authPlain(a Account) (response, error) {
	resp := base64.StdEncoding.EncodeToString([]byte("\x00" + a.Username + "\x00" + a.Password))
	tag := c.nextTag()
	if c.caps["SASL-IR"] {
		return c.exchange(tag, tag+" AUTHENTICATE PLAIN "+resp+"\r\n", 100, nil)
	}
	if err := c.send(tag + " AUTHENTICATE PLAIN\r\n"); err != nil {
		return response{}, err
	}
	cont, err := c.await(tag, true, 100, nil)
	if err != nil || cont.Tag != "+" {
		return cont, err
	}
	return c.exchange(tag, resp+"\r\n", 100, nil)
}

// capability asks for the capabilities.
func (c *Client) capability() error {
	var caps []string
	done, err := c.run("CAPABILITY", 100, func(r response) error {
		if r.Kind == "CAPABILITY" {
			caps = r.Caps
		}
		return nil
	})
	if err != nil {
		return err
	}
	if done.Status != "OK" {
		return c.refusal(done, ErrProtocol)
	}
	c.caps = capSet(caps)
	if c.caps == nil {
		c.caps = map[string]bool{}
	}
	return nil
}

func capSet(caps []string) map[string]bool {
	if len(caps) == 0 {
		return nil
	}
	m := make(map[string]bool, len(caps))
	for _, c := range caps {
		m[upper(c)] = true
	}
	return m
}

// newClient returns a client reading and writing rw, before the greeting.
func newClient(rw io.ReadWriter, maxMessage int64) *Client {
	if maxMessage <= 0 {
		maxMessage = MaxMessageSize
	}
	return &Client{
		rw:         rw,
		w:          bufio.NewWriterSize(rw, 4096),
		lx:         &lexer{r: bufio.NewReaderSize(rw, 64<<10), line: maxGreetingLine, literals: maxMessage},
		maxMessage: maxMessage,
	}
}

// command formats a command whose arguments are astrings: each is quoted,
// or, where a quoted string cannot carry it, a synchronizing literal. It
// returns the segments to send, each but the last ending with a literal's
// announcement, after which the server's continuation is awaited.
func command(tag, name string, args ...string) ([]string, error) {
	var segs []string
	var b strings.Builder
	b.WriteString(tag + " " + name)
	for _, arg := range args {
		b.WriteByte(' ')
		if quotable(arg) {
			b.WriteString(quote(arg))
			continue
		}
		if strings.IndexByte(arg, 0) >= 0 {
			return nil, errors.New("imap: an argument contains a NUL byte")
		}
		fmt.Fprintf(&b, "{%d}\r\n", len(arg))
		segs = append(segs, b.String())
		b.Reset()
		b.WriteString(arg)
	}
	b.WriteString("\r\n")
	return append(segs, b.String()), nil
}

// quotable reports whether s fits in a quoted string: 7-bit characters
// other than NUL, CR and LF (RFC 3501 QUOTED-CHAR).
func quotable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c == '\r' || c == '\n' || c >= 0x80 {
			return false
		}
	}
	return true
}

// quote returns s as a quoted string, escaping '"' and '\'.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// withoutAddress returns a dial error without the server's name and
// address, which the user chose and which would otherwise reach the logs
// with the error; its type and cause stay, for the form's sentence.
func withoutAddress(err error) error {
	var op *net.OpError
	if !errors.As(err, &op) {
		return err
	}
	cp := *op
	cp.Addr, cp.Source = nil, nil
	var dns *net.DNSError
	if errors.As(cp.Err, &dns) {
		d := *dns
		d.Name, d.Server = "", ""
		cp.Err = &d
	}
	return &cp
}
