// Package imaptest is a scripted IMAP server for tests: it speaks the
// real protocol (IMAP4rev1 with LITERAL+, SPECIAL-USE, LIST-EXTENDED and
// ESEARCH, each of which a test may take away) over a real TCP listener
// with TLS, holds mailboxes with special-use attributes, and can
// renumber a mailbox (a new UIDVALIDITY), expunge, answer slowly, stall,
// or cut the connection in the middle of a literal. It counts what it is
// asked, so tests can assert round trips and downloads. StartDovecot
// runs Debian's Dovecot instead, a real server nobody here wrote.
package imaptest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Default credentials of a Server.
const (
	Username = "alice@example.com"
	Password = "correct horse"
)

// DefaultCaps returns the capabilities a Server announces unless a test
// calls SetCaps.
func DefaultCaps() []string {
	return []string{"IMAP4rev1", "LITERAL+", "SPECIAL-USE", "LIST-EXTENDED", "ESEARCH", "AUTH=PLAIN"}
}

// message is one message of a mailbox.
type message struct {
	UID   uint32
	Raw   []byte
	Date  time.Time // INTERNALDATE
	Flags []string
}

// mailbox is one mailbox of the server.
type mailbox struct {
	Name        string
	Attrs       []string // e.g. `\Junk`, `\HasNoChildren`
	UIDValidity uint32
	UIDNext     uint32
	Messages    []*message
}

// Stats counts what the server was asked.
type Stats struct {
	// Commands counts commands by name ("LOGIN", "LIST", "EXAMINE",
	// "UID SEARCH", "UID FETCH").
	Commands map[string]int
	// Bodies counts messages sent whole (BODY[]); Headers, header
	// sections (BODY[HEADER]); Envelopes, Message-ID fields
	// (BODY[HEADER.FIELDS (MESSAGE-ID)]).
	Bodies, Headers, Envelopes int
	// Seen counts messages fetched without PEEK, which marks them read.
	Seen int
}

// Server is a running scripted IMAP server over TLS on 127.0.0.1.
type Server struct {
	// Host and Port are where it listens.
	Host, Port string

	ln   net.Listener
	ca   *x509.Certificate
	leaf []byte // the server certificate, DER
	wg   sync.WaitGroup

	mu        sync.Mutex
	caps      []string
	boxes     []*mailbox
	stats     Stats
	delay     atomic.Int64 // time.Duration; read without mu, by line
	hold      atomic.Bool  // send half of the next line, then nothing more; read without mu
	stall     string       // a command name the server never answers
	stalled   chan string  // told each stalled command's name; see Stalled
	cutAfter  int          // bytes of a BODY[] literal sent before hanging up; 0: never
	validity  uint32
	conns     map[net.Conn]bool
	loginDisa bool
}

// New starts a server with an empty INBOX, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	ca, caKey := newCert(t, nil, nil, true)
	leaf, leafKey := newCert(t, ca, caKey, false)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.Raw, ca.Raw}, PrivateKey: leafKey}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln, ca: ca, leaf: leaf.Raw, caps: DefaultCaps(), validity: 1000, conns: map[net.Conn]bool{},
		stalled: make(chan string, 16)}
	s.Host, s.Port, _ = net.SplitHostPort(ln.Addr().String())
	s.AddMailbox("INBOX")
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

// newCert makes a certificate for 127.0.0.1 and localhost: a CA when
// parent is nil, else a server certificate it signs.
func newCert(t testing.TB, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, isCA bool) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "imaptest server"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	if isCA {
		tmpl.Subject.CommonName = "imaptest CA"
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.IPAddresses, tmpl.DNSNames, tmpl.ExtKeyUsage = nil, nil, nil
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// Close stops the server and waits for its connections to end.
func (s *Server) Close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// CAPEM returns the certificate of the authority that signed the
// server's certificate, in PEM.
func (s *Server) CAPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.ca.Raw}))
}

// Pool returns a pool trusting the server's authority.
func (s *Server) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.ca)
	return p
}

// Fingerprint returns the SHA-256 of the server's certificate in hex
// pairs separated by colons, as openssl prints it.
func (s *Server) Fingerprint() string {
	sum := sha256.Sum256(s.leaf)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var parts []string
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}

// Fields returns the connection form's fields that reach the server.
func (s *Server) Fields() map[string]string {
	return map[string]string{"host": s.Host, "port": s.Port, "username": Username, "password": Password, "tls": "true"}
}

// SetCaps replaces the announced capabilities.
func (s *Server) SetCaps(caps ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = caps
	s.loginDisa = slices.Contains(caps, "LOGINDISABLED")
}

// SetDelay makes the server wait d before each line it sends.
func (s *Server) SetDelay(d time.Duration) {
	s.delay.Store(int64(d))
}

// Stall makes the server read the command name ("UID FETCH") and never
// answer it, until the client hangs up; "" answers again.
func (s *Server) Stall(command string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stall = command
}

// Stalled receives the name of each command the server read and will
// not answer (see Stall), so that a test acts once the client waits; the
// names of more than 16 unread ones are dropped.
func (s *Server) Stalled() <-chan string { return s.stalled }

// HoldLines makes the server send the first half of its next response
// line and then nothing more, until the client hangs up: a read that has
// started must meet its deadline. false answers again.
func (s *Server) HoldLines(on bool) { s.hold.Store(on) }

// CutBodies makes the server hang up after sending n bytes of the next
// BODY[] literal; 0 stops it.
func (s *Server) CutBodies(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cutAfter = n
}

// AddMailbox adds an empty mailbox with attributes, or sets the
// attributes of an existing one.
func (s *Server) AddMailbox(name string, attrs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.box(name); m != nil {
		m.Attrs = attrs
		return
	}
	s.validity++
	s.boxes = append(s.boxes, &mailbox{Name: name, Attrs: attrs, UIDValidity: s.validity, UIDNext: 1})
}

func (s *Server) box(name string) *mailbox {
	if strings.EqualFold(name, "INBOX") {
		name = "INBOX"
	}
	for _, m := range s.boxes {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// DeleteMailbox removes a mailbox and its messages, as a user deleting a
// folder does.
func (s *Server) DeleteMailbox(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.box(name)
	s.boxes = slices.DeleteFunc(s.boxes, func(b *mailbox) bool { return b == m })
}

// Append adds a message to a mailbox, which must exist, and returns its
// UID.
func (s *Server) Append(mailbox string, raw []byte, date time.Time) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.box(mailbox)
	uid := m.UIDNext
	m.UIDNext++
	m.Messages = append(m.Messages, &message{UID: uid, Raw: raw, Date: date})
	return uid
}

// Expunge removes the messages with these UIDs from a mailbox.
func (s *Server) Expunge(mailbox string, uids ...uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.box(mailbox)
	m.Messages = slices.DeleteFunc(m.Messages, func(msg *message) bool { return slices.Contains(uids, msg.UID) })
}

// Renumber gives a mailbox a new UIDVALIDITY and its messages new UIDs
// from 1, as a server does when it rebuilds its index.
func (s *Server) Renumber(mailbox string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.box(mailbox)
	s.validity++
	m.UIDValidity = s.validity
	m.UIDNext = 1
	for _, msg := range m.Messages {
		msg.UID = m.UIDNext
		m.UIDNext++
	}
}

// UIDs returns the UIDs of a mailbox.
func (s *Server) UIDs(mailbox string) []uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []uint32
	for _, msg := range s.box(mailbox).Messages {
		out = append(out, msg.UID)
	}
	return out
}

// Stats returns the counts since the start or the last ResetStats.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Commands = make(map[string]int, len(s.stats.Commands))
	for k, v := range s.stats.Commands {
		st.Commands[k] = v
	}
	return st
}

// ResetStats sets every count to zero.
func (s *Server) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = Stats{}
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			sess := &session{s: s, c: c, r: bufio.NewReader(c), w: bufio.NewWriterSize(c, 64<<10)}
			sess.run()
		}()
	}
}
