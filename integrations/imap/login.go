package imap

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds a whole login exchange when Dialer.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// maxUntagged bounds the untagged lines accepted while waiting for one
// command's completion, so that a server cannot keep the client reading.
const maxUntagged = 100

// ErrLoginRejected means the server refused the username or password (a
// tagged NO to LOGIN).
var ErrLoginRejected = errors.New("imap: server refused the username or password")

// ServerError is a refusal or a goodbye from the server, with its text.
type ServerError struct {
	Status string // NO, BAD or BYE
	Text   string // the server's text, printable ASCII, at most 200 bytes
	err    error  // ErrLoginRejected for a NO to LOGIN, else ErrProtocol
}

func (e *ServerError) Error() string {
	return "imap: server answered " + e.Status + ": " + e.Text
}

func (e *ServerError) Unwrap() error { return e.err }

// Dialer logs in to IMAP servers over implicit TLS (port 993 style; the
// password never crosses the network before TLS is up). The zero Dialer
// trusts the system's certificate authorities.
type Dialer struct {
	// TLSConfig is cloned for each connection; ServerName defaults to the
	// account's host and MinVersion is at least TLS 1.2. Nil means defaults.
	TLSConfig *tls.Config
	// Timeout bounds a whole login exchange; zero means DefaultTimeout.
	Timeout time.Duration
	// Control, when set, vets every address before connecting (see
	// integrations.PublicOnly): the server host is chosen by the user.
	Control func(network, address string, c syscall.RawConn) error
}

// Login connects to the account's server, reads its greeting, logs in with
// LOGIN and logs out. A refused password is an error wrapping
// ErrLoginRejected; a server that does not speak IMAP, ErrProtocol or
// ErrLineTooLong; a timeout or cancellation wraps the context's error.
func (d Dialer) Login(ctx context.Context, a Account) error {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := d.login(ctx, a)
	if err != nil && ctx.Err() != nil {
		// Whatever failed, it failed because time ran out or the caller
		// gave up.
		return fmt.Errorf("imap: %w", ctx.Err())
	}
	return err
}

func (d Dialer) login(ctx context.Context, a Account) error {
	cfg := &tls.Config{}
	if d.TLSConfig != nil {
		cfg = d.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = a.Host
	}
	cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS12)
	td := &tls.Dialer{NetDialer: &net.Dialer{Control: d.Control}, Config: cfg}
	conn, err := td.DialContext(ctx, "tcp", net.JoinHostPort(a.Host, strconv.Itoa(a.Port)))
	if err != nil {
		return fmt.Errorf("imap: connect: %w", err)
	}
	defer conn.Close()
	// The end of ctx (deadline or cancellation) unblocks a read or write in
	// progress. It runs after ctx is done, so Login sees ctx.Err.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	s := &session{r: bufio.NewReaderSize(conn, maxLine), w: conn, secret: a.Password}
	return s.login(a)
}

// session is one connection's command exchange.
type session struct {
	r      *bufio.Reader
	w      io.Writer
	secret string // never to appear in an error, should the server echo it
}

// refusal turns a server's NO, BAD or BYE into a *ServerError.
func (s *session) refusal(resp response, err error) *ServerError {
	text := resp.Text
	if s.secret != "" {
		text = strings.ReplaceAll(text, s.secret, "[redacted]")
	}
	return &ServerError{Status: resp.Status, Text: printable(text), err: err}
}

func (s *session) login(a Account) error {
	greeting, err := s.next()
	if err != nil {
		return err
	}
	switch {
	case greeting.Tag != "*":
		return ErrProtocol
	case greeting.Status == "BYE":
		return s.refusal(greeting, ErrProtocol)
	case greeting.Status == "PREAUTH":
		// Already authenticated (by the connection itself): nothing to prove.
		s.logout()
		return nil
	case greeting.Status != "OK":
		return ErrProtocol
	}

	if err := s.command("a1", "LOGIN", a.Username, a.Password); err != nil {
		return err
	}
	done, err := s.await("a1", false)
	if err != nil {
		return err
	}
	switch done.Status {
	case "OK":
		s.logout()
		return nil
	case "NO":
		return s.refusal(done, ErrLoginRejected)
	default:
		return s.refusal(done, ErrProtocol)
	}
}

// logout says goodbye, politely and best effort: the login already
// succeeded or was never needed.
func (s *session) logout() {
	if _, err := io.WriteString(s.w, "a2 LOGOUT\r\n"); err == nil {
		s.await("a2", false)
	}
}

// next reads and parses one response line.
func (s *session) next() (response, error) {
	line, err := readLine(s.r)
	if err != nil {
		return response{}, err
	}
	return parseResponse(line)
}

// await reads responses until the completion of the command tagged tag,
// or a continuation request if cont, skipping untagged data. A BYE ends it
// early.
func (s *session) await(tag string, cont bool) (response, error) {
	for range maxUntagged {
		resp, err := s.next()
		if err != nil {
			return response{}, err
		}
		switch {
		case resp.Tag == tag, cont && resp.Tag == "+":
			return resp, nil
		case resp.Tag == "*" && resp.Status == "BYE":
			return response{}, s.refusal(resp, ErrProtocol)
		case resp.Tag != "*":
			return response{}, ErrProtocol
		}
	}
	return response{}, fmt.Errorf("%w: more than %d untagged lines", ErrProtocol, maxUntagged)
}

// command sends a command whose arguments are astrings. An argument that a
// quoted string cannot carry is sent as a synchronizing literal, after the
// server's continuation request.
func (s *session) command(tag, name string, args ...string) error {
	var b strings.Builder
	b.WriteString(tag + " " + name)
	for _, arg := range args {
		b.WriteByte(' ')
		if quotable(arg) {
			b.WriteString(quote(arg))
			continue
		}
		if strings.IndexByte(arg, 0) >= 0 {
			return errors.New("imap: an argument contains a NUL byte")
		}
		fmt.Fprintf(&b, "{%d}\r\n", len(arg))
		if _, err := io.WriteString(s.w, b.String()); err != nil {
			return err
		}
		b.Reset()
		cont, err := s.await(tag, true)
		if err != nil {
			return err
		}
		if cont.Tag != "+" {
			return s.refusal(cont, ErrProtocol)
		}
		b.WriteString(arg)
	}
	b.WriteString("\r\n")
	_, err := io.WriteString(s.w, b.String())
	return err
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
