package imap_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/imap"
	"searchsvc/integrations/netguard"
)

// testCert returns a self-signed certificate for 127.0.0.1 and localhost,
// and a pool that trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "imap test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// conn is the fake server's side of one connection.
type conn struct {
	net.Conn
	r *bufio.Reader
}

func (c *conn) send(lines ...string) {
	for _, l := range lines {
		io.WriteString(c, l+"\r\n")
	}
}

func (c *conn) line() (string, error) {
	l, err := c.r.ReadString('\n')
	return strings.TrimSuffix(l, "\r\n"), err
}

// command reads one command, decoding its astring arguments as a server
// does: atoms, quoted strings with \" and \\ escapes, and synchronizing
// literals, answered with a continuation request.
func (c *conn) command() (tag, name string, args []string, err error) {
	line, err := c.line()
	if err != nil {
		return "", "", nil, err
	}
	tag, rest, _ := strings.Cut(line, " ")
	name, rest, _ = strings.Cut(rest, " ")
	for rest != "" {
		switch rest[0] {
		case '"':
			var b strings.Builder
			i := 1
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' {
					i++
				}
				if rest[i] >= 0x80 {
					return "", "", nil, errors.New("8-bit character in a quoted string")
				}
				b.WriteByte(rest[i])
			}
			args = append(args, b.String())
			rest = strings.TrimPrefix(rest[i+1:], " ")
		case '{':
			n, err := strconv.Atoi(strings.TrimSuffix(rest[1:], "}"))
			if err != nil {
				return "", "", nil, fmt.Errorf("bad literal %q", rest)
			}
			c.send("+ Ready for literal data")
			buf := make([]byte, n)
			if _, err := io.ReadFull(c.r, buf); err != nil {
				return "", "", nil, err
			}
			args = append(args, string(buf))
			if rest, err = c.line(); err != nil {
				return "", "", nil, err
			}
			rest = strings.TrimPrefix(rest, " ")
		default:
			var atom string
			atom, rest, _ = strings.Cut(rest, " ")
			args = append(args, atom)
		}
	}
	return tag, name, args, nil
}

// server starts a fake IMAP server over TLS running handle for each
// connection, and returns the form fields that reach it and a Dialer that
// trusts it.
func server(t *testing.T, handle func(c *conn)) (map[string]string, imap.Dialer) {
	t.Helper()
	cert, pool := testCert(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				handle(&conn{Conn: nc, r: bufio.NewReader(nc)})
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	fields := map[string]string{"host": host, "port": port, "username": "alice@example.com", "password": "correct horse", "tls": "true"}
	return fields, imap.Dialer{TLSConfig: &tls.Config{RootCAs: pool}}
}

// dovecot answers as a real server does: a greeting with capabilities,
// LOGIN checked against password, LOGOUT with BYE.
func dovecot(password string) func(c *conn) {
	return func(c *conn) {
		c.send("* OK [CAPABILITY IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ AUTH=PLAIN] Dovecot ready.")
		for {
			tag, name, args, err := c.command()
			if err != nil {
				return
			}
			switch strings.ToUpper(name) {
			case "LOGIN":
				if len(args) != 2 || args[0] != "alice@example.com" || args[1] != password {
					c.send(tag + " NO [AUTHENTICATIONFAILED] Authentication failed.")
					continue
				}
				c.send("* CAPABILITY IMAP4rev1 SORT THREAD=REFERENCES", tag+" OK [CAPABILITY IMAP4rev1] Logged in")
			case "LOGOUT":
				c.send("* BYE Logging out", tag+" OK Logout completed.")
				return
			default:
				c.send(tag + " BAD Error in IMAP command")
			}
		}
	}
}

func TestLoginPasswords(t *testing.T) {
	passwords := []string{
		"correct horse",
		`with "quotes" and \backslash\`,
		"non-ASCII pässwörd",
		"line\r\nbreak",
		"{5}",
	}
	for _, pw := range passwords {
		t.Run(pw, func(t *testing.T) {
			fields, d := server(t, dovecot(pw))
			fields["password"] = pw
			creds, err := d.Definition().ValidateManual(context.Background(), fields, nil)
			if err != nil {
				t.Fatalf("ValidateManual: %v", err)
			}
			if creds.Fields["password"] != pw || creds.Fields["host"] != "127.0.0.1" || creds.Fields["tls"] != "true" {
				t.Errorf("credentials fields: got %v, want the form's values", creds)
			}
			in, err := d.Definition().New(integrations.Env{Credentials: creds})
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := in.ValidateAuthentication(context.Background()); !ok || err != nil {
				t.Errorf("ValidateAuthentication: got %v, %v; want true", ok, err)
			}
		})
	}
}

func TestLoginFailures(t *testing.T) {
	silent := func(ready chan<- struct{}) func(c *conn) {
		return func(c *conn) {
			c.Conn.(*tls.Conn).Handshake()
			close(ready)
			io.Copy(io.Discard, c) // until the client hangs up
		}
	}
	tests := []struct {
		name    string
		handle  func(c *conn)
		field   string
		message string
		sentry  error
	}{
		{"wrong password", dovecot("other"), "password", "the server refused the username or password ([AUTHENTICATIONFAILED] Authentication failed.)", imap.ErrLoginRejected},
		{"http server", func(c *conn) { c.send("HTTP/1.1 400 Bad Request") }, "host", "the server did not answer as an IMAP server over TLS does", imap.ErrProtocol},
		{"bye greeting", func(c *conn) { c.send("* BYE Too many connections") }, "host", "the server did not answer as an IMAP server over TLS does (BYE Too many connections)", imap.ErrProtocol},
		{"over-long line", func(c *conn) { c.send("* OK " + strings.Repeat("x", 1<<20)) }, "host", "the server did not answer as an IMAP server over TLS does", imap.ErrLineTooLong},
		{"BAD to LOGIN", func(c *conn) {
			c.send("* OK ready")
			tag, _, _, _ := c.command()
			c.send(tag + " BAD [PRIVACYREQUIRED] LOGIN disabled")
		}, "host", "the server did not answer as an IMAP server over TLS does (BAD [PRIVACYREQUIRED] LOGIN disabled)", imap.ErrProtocol},
		{"endless untagged lines", func(c *conn) {
			c.send("* OK ready")
			c.command()
			for i := 0; i < 200; i++ {
				c.send("* 1 EXISTS")
			}
		}, "host", "the server did not answer as an IMAP server over TLS does", imap.ErrProtocol},
		{"hangs up", func(c *conn) {}, "host", "could not log in over TLS: the server may not offer implicit TLS on this port", io.EOF},
		{"echoes the password", func(c *conn) {
			c.send("* OK ready")
			tag, _, _, _ := c.command()
			c.send(tag + ` NO password "correct horse" is wrong`)
		}, "password", `the server refused the username or password (password "[redacted]" is wrong)`, imap.ErrLoginRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, d := server(t, tt.handle)
			_, err := d.Definition().ValidateManual(context.Background(), fields, nil)
			assertValidation(t, err, tt.field, tt.message)
			// A server that hangs up before reading the TLS hello may
			// reset the connection instead of closing it: either is EOF
			// to the client.
			hungUp := tt.sentry == io.EOF && errors.Is(err, syscall.ECONNRESET)
			if !errors.Is(err, tt.sentry) && !hungUp {
				t.Errorf("got %v, want it to wrap %v", err, tt.sentry)
			}
		})
	}

	t.Run("never answers, then cancelled", func(t *testing.T) {
		ready := make(chan struct{})
		fields, d := server(t, silent(ready))
		a, _ := imap.ParseFields(fields)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-ready
			cancel()
		}()
		if err := d.Login(ctx, a); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
	t.Run("never answers, timeout", func(t *testing.T) {
		fields, d := server(t, silent(make(chan struct{})))
		d.Timeout = 50 * time.Millisecond
		_, err := d.Definition().ValidateManual(context.Background(), fields, nil)
		assertValidation(t, err, "host", "the server did not answer in time")
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		fields, _ := server(t, dovecot("correct horse"))
		_, err := imap.Dialer{}.Definition().ValidateManual(context.Background(), fields, nil)
		assertValidation(t, err, "certificate", "the server's TLS certificate is signed by an unknown authority; if the server is on your own network, "+
			"give its CA certificate (PEM) or the SHA-256 fingerprint of its certificate in the certificate field")
	})
	t.Run("nothing listening", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		ln.Close()
		fields := map[string]string{"host": "127.0.0.1", "port": port, "username": "u", "password": "p"}
		_, err := imap.Definition().ValidateManual(context.Background(), fields, nil)
		assertValidation(t, err, "host", "could not connect to 127.0.0.1:"+port)
		// The form's sentence names the address the user typed; the error
		// the sync logs does not.
		var ve *integrations.ValidationError
		if errors.As(err, &ve) && ve.Err != nil && strings.Contains(ve.Err.Error(), port) {
			t.Errorf("the logged error names the server: %v", ve.Err)
		}
	})
}

func assertValidation(t *testing.T, err error, field, message string) {
	t.Helper()
	var ve *integrations.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want a *ValidationError", err)
	}
	if ve.Field != field || ve.Message != message {
		t.Errorf("got %s: %q, want %s: %q", ve.Field, ve.Message, field, message)
	}
	if strings.Contains(ve.Error(), "correct horse") {
		t.Errorf("error %q holds the password", ve)
	}
}

func TestRejectedPasswordMeansNotValid(t *testing.T) {
	fields, d := server(t, dovecot("changed since"))
	in, err := d.Definition().New(integrations.Env{Credentials: integrations.Credentials{Fields: fields}})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := in.ValidateAuthentication(context.Background()); ok || err != nil {
		t.Errorf("got %v, %v; want false, nil", ok, err)
	}
	_, err = in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskStart})
	var ee *integrations.ExplainedError
	if !errors.Is(err, integrations.ErrReauthRequired) || !errors.Is(err, imap.ErrLoginRejected) || !errors.As(err, &ee) ||
		ee.Message != "the IMAP server refused the username or password; connect it again with the right ones" {
		t.Errorf("RunTask: got %v, want ErrReauthRequired wrapping ErrLoginRejected, explained", err)
	}
	if _, err := in.RunTask(context.Background(), integrations.Task{Type: "mystery"}); !errors.Is(err, integrations.ErrUnsupportedTask) {
		t.Errorf("RunTask of an unknown type: got %v, want ErrUnsupportedTask", err)
	}
}

func TestParseFields(t *testing.T) {
	base := func(edit map[string]string) map[string]string {
		f := map[string]string{"host": "imap.example.com", "username": "u", "password": "p"}
		for k, v := range edit {
			f[k] = v
		}
		return f
	}
	good := []struct {
		name   string
		fields map[string]string
		want   imap.Account
	}{
		{"defaults", base(nil), imap.Account{Host: "imap.example.com", Port: 993, Username: "u", Password: "p"}},
		{"port and tls", base(map[string]string{"port": "1993", "tls": "true"}), imap.Account{Host: "imap.example.com", Port: 1993, Username: "u", Password: "p"}},
		{"IPv6", base(map[string]string{"host": "[::1]"}), imap.Account{Host: "::1", Port: 993, Username: "u", Password: "p"}},
	}
	for _, tt := range good {
		if got, err := imap.ParseFields(tt.fields); err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	bad := []struct {
		name, field string
		fields      map[string]string
	}{
		{"plaintext", "tls", base(map[string]string{"tls": "false"})},
		{"tls not a bool", "tls", base(map[string]string{"tls": "maybe"})},
		{"no host", "host", base(map[string]string{"host": ""})},
		{"host with path", "host", base(map[string]string{"host": "imap.example.com/x"})},
		{"host with space", "host", base(map[string]string{"host": "imap example.com"})},
		{"port zero", "port", base(map[string]string{"port": "0"})},
		{"port too big", "port", base(map[string]string{"port": "65536"})},
		{"port text", "port", base(map[string]string{"port": "imaps"})},
		{"no username", "username", base(map[string]string{"username": ""})},
		{"username with newline", "username", base(map[string]string{"username": "u\r\nA2 DELETE INBOX"})},
		{"no password", "password", base(map[string]string{"password": ""})},
		{"password with NUL", "password", base(map[string]string{"password": "a\x00b"})},
		{"password too long", "password", base(map[string]string{"password": strings.Repeat("p", 1025)})},
	}
	for _, tt := range bad {
		_, err := imap.ParseFields(tt.fields)
		var ve *integrations.ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("%s: got %v, want a ValidationError on %s", tt.name, err, tt.field)
		}
	}
	_, err := imap.ParseFields(base(map[string]string{"tls": "false"}))
	if !strings.Contains(err.Error(), "unencrypted") {
		t.Errorf("plaintext refusal %q does not say why", err)
	}
}

func TestAccountRedacts(t *testing.T) {
	a := imap.Account{Host: "h", Port: 993, Username: "u", Password: "hunter2"}
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s", a, a, a, &a), a.LogValue().String()} {
		if strings.Contains(out, "hunter2") {
			t.Errorf("output %q holds the password", out)
		}
	}
}

// guard is a netguard.Dialer, as the service runs it, over a resolver
// and a dialer the test controls: the resolver knows its map only, and
// every call of the dialer is recorded and refused, so no packet is sent.
func guard(hosts map[string]string) (g *netguard.Dialer, dials *[]string) {
	dials = new([]string)
	return &netguard.Dialer{
		Resolver: resolver(hosts),
		Dial: func(_ context.Context, _, address string) (net.Conn, error) {
			*dials = append(*dials, address)
			return nil, errors.New("the test dialer connects nowhere")
		},
	}, dials
}

// resolver answers from its map, one address per name.
type resolver map[string]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestGuardRefusesPrivateHosts: with a netguard.Dialer, as the service
// runs it, a user cannot point the IMAP login at the server's own network
// or at a documentation address, in whatever form the host is written:
// each gets the sentence 127.0.0.1 gets, in the form's field error and in
// the sync's explanation (the record's lastError), and nothing is dialled.
func TestGuardRefusesPrivateHosts(t *testing.T) {
	const (
		field   = "this host is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true"
		explain = "the IMAP server's address is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true"
	)
	for _, host := range []string{
		"127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.0.0.1.", "localhost",
		"10.1", "192.0.2.1", "198.51.100.7", "203.0.113.9", "2001:db8::1", "[2001:db8::1]", "docs.example",
	} {
		t.Run(host, func(t *testing.T) {
			g, dials := guard(map[string]string{"localhost": "127.0.0.1", "docs.example": "203.0.113.80"})
			d := imap.Dialer{DialContext: g.DialContext}
			fields := map[string]string{"host": host, "port": "993", "username": "alice@example.com", "password": "correct horse", "tls": "true"}
			_, err := d.Definition().ValidateManual(context.Background(), fields, nil)
			if !errors.Is(err, netguard.ErrPrivateAddress) {
				t.Errorf("ValidateManual: got %v, want ErrPrivateAddress", err)
			}
			assertValidation(t, err, "host", field)

			in, err := d.Definition().New(integrations.Env{Credentials: integrations.Credentials{Fields: fields}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskStart})
			var ee *integrations.ExplainedError
			if !errors.Is(err, netguard.ErrPrivateAddress) || !errors.As(err, &ee) || ee.Message != explain {
				t.Errorf("RunTask: got %v, want ErrPrivateAddress explained as %q", err, explain)
			}
			if len(*dials) != 0 {
				t.Errorf("dialled %v, want no dial", *dials)
			}
		})
	}
}
