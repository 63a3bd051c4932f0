package imaptest

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// DovecotPath is where Debian's dovecot-core puts the server.
const DovecotPath = "/usr/sbin/dovecot"

// Dovecot is Debian's Dovecot, run for one test with its own
// configuration, state and logs in a temporary directory: implicit TLS on
// 127.0.0.1 with a certificate of its own authority (CAPEM), one user
// (Username, Password) whose INBOX is the maildir Maildir. Mails written
// into it with Deliver are seen at the next SELECT.
type Dovecot struct {
	// Host and Port are where it listens (implicit TLS, as on 993).
	Host, Port string
	// Maildir is the user's INBOX.
	Maildir string

	ca       *x509.Certificate
	uid, gid int // the owner of the mail, as Dovecot reads it
	seq      atomic.Int64
	prefix   string // of the maildir file names, unique per run
}

// StartDovecot starts Dovecot for t, stopped when t ends. Without the
// server it skips, telling how to install it; under CI (CI set), whose
// .ci/run installs it, it fails instead.
func StartDovecot(t testing.TB) *Dovecot {
	t.Helper()
	bin := dovecotBin(t)
	d, dir, loginUser, internalUser := newDovecot(t)
	d.writeFiles(t, dir)
	d.Port = freePort(t)
	d.run(t, bin, dir, d.config(dir, loginUser, internalUser))
	return d
}

// dovecotBin is the server's path; without it the test skips, or fails
// under CI.
func dovecotBin(t testing.TB) string {
	t.Helper()
	bin := DovecotPath
	if _, err := os.Stat(bin); err != nil {
		if p, err := exec.LookPath("dovecot"); err == nil {
			bin = p
		} else {
			if os.Getenv("CI") != "" {
				t.Fatal("dovecot is not installed; .ci/run installs it (apt-get install dovecot-imapd)")
			}
			t.Skip("dovecot is not installed (apt-get install dovecot-imapd): the test against a real IMAP server is skipped")
		}
	}
	return bin
}

// newDovecot makes the run's directory and picks the users Dovecot's
// processes and the mail run as.
func newDovecot(t testing.TB) (*Dovecot, string, string, string) {
	t.Helper()
	// Dovecot's processes other than the master drop to the mail and
	// login users, which must reach the directory: it is not t.TempDir
	// (0700 and the test's own) but one readable by all, holding nothing
	// secret but a throw-away key and password.
	dir, err := os.MkdirTemp("", "dovecot-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d := &Dovecot{Host: "127.0.0.1", uid: os.Getuid(), gid: os.Getgid()}
	var b [8]byte
	rand.Read(b[:])
	d.prefix = hex.EncodeToString(b[:])
	loginUser, internalUser := "", ""
	if cur, err := user.Current(); err == nil {
		loginUser, internalUser = cur.Username, cur.Username
	}
	if d.uid == 0 {
		// Dovecot refuses root for its login processes and for the mail;
		// Debian's package creates these two users for it.
		loginUser, internalUser = "dovenull", "dovecot"
		u, err := user.Lookup("dovecot")
		if err != nil {
			t.Fatalf("running as root, Dovecot needs the dovecot user its package creates: %v", err)
		}
		d.uid, _ = strconv.Atoi(u.Uid)
		d.gid, _ = strconv.Atoi(u.Gid)
	}
	return d, dir, loginUser, internalUser
}

// writeFiles writes the certificates, the key, the password file and the
// user's maildir, owned by the mail's user.
func (d *Dovecot) writeFiles(t testing.TB, dir string) {
	t.Helper()
	ca, caKey := newCert(t, nil, nil, true)
	leaf, leafKey := newCert(t, ca, caKey, false)
	d.ca = ca
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
	home := filepath.Join(dir, "home")
	d.Maildir = filepath.Join(home, "Maildir")
	files := map[string][]byte{
		"cert.pem": certPEM,
		"key.pem":  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		"passwd":   []byte(Username + ":{PLAIN}" + Password + "\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(d.Maildir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{home, d.Maildir, filepath.Join(d.Maildir, "cur"), filepath.Join(d.Maildir, "new"), filepath.Join(d.Maildir, "tmp")} {
		if err := os.Lchown(p, d.uid, d.gid); err != nil {
			t.Fatal(err)
		}
	}
}

// config is the server's configuration for this run.
func (d *Dovecot) config(dir, loginUser, internalUser string) string {
	home := filepath.Join(dir, "home")
	return fmt.Sprintf(`base_dir = %[1]s/run
state_dir = %[1]s/state
log_path = %[1]s/dovecot.log
default_login_user = %[2]s
default_internal_user = %[3]s
protocols = imap
listen = 127.0.0.1
ssl = required
ssl_cert = <%[1]s/cert.pem
ssl_key = <%[1]s/key.pem
auth_mechanisms = plain login
first_valid_uid = 1
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%%u %[1]s/passwd
}
userdb {
  driver = static
  args = uid=%[4]d gid=%[5]d home=%[6]s
}
mail_location = maildir:%[7]s
service imap-login {
  chroot =
  inet_listener imap {
    port = 0
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = %[8]s
    ssl = yes
  }
}
service anvil {
  chroot =
}
`, dir, loginUser, internalUser, d.uid, d.gid, home, d.Maildir, d.Port)
}

// run starts the server with conf, stopped when t ends, and returns once
// it takes connections.
func (d *Dovecot) run(t testing.TB, bin, dir, conf string) {
	t.Helper()
	confPath := filepath.Join(dir, "dovecot.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-F", "-c", confPath)
	out := &limitedBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	// Dovecot has no readiness signal here: it is up once its port takes
	// a connection.
	addr := net.JoinHostPort(d.Host, d.Port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "dovecot.log"))
			t.Fatalf("dovecot did not listen on %s: %v\n%s%s", addr, err, out.buf, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort returns a port of 127.0.0.1 free a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	max int
	buf []byte
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// CAPEM returns the certificate of the authority that signed Dovecot's,
// in PEM, as the connection form's certificate field takes it.
func (d *Dovecot) CAPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: d.ca.Raw}))
}

// Fields returns the connection form's fields that reach Dovecot and
// trust its authority.
func (d *Dovecot) Fields() map[string]string {
	return map[string]string{"host": d.Host, "port": d.Port, "username": Username, "password": Password,
		"tls": "true", "certificate": d.CAPEM()}
}

// Deliver writes raw into the INBOX as a maildir file (in cur, already
// seen by a mail client), owned by the mail's user, and returns its path.
// It may run from several goroutines.
func (d *Dovecot) Deliver(t testing.TB, raw []byte) string {
	t.Helper()
	return d.DeliverTo(t, "", raw)
}

// DeliverTo puts raw in the folder named folder ("" is INBOX), made if
// need be: a Maildir++ folder is a directory ".name" of the maildir.
func (d *Dovecot) DeliverTo(t testing.TB, folder string, raw []byte) string {
	t.Helper()
	dir := d.Maildir
	if folder != "" {
		dir = filepath.Join(d.Maildir, "."+folder)
		for _, p := range []string{dir, filepath.Join(dir, "cur"), filepath.Join(dir, "new"), filepath.Join(dir, "tmp")} {
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(p, d.uid, d.gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	n := d.seq.Add(1)
	// A maildir name: time.unique.host, then the flags (S: seen).
	p := filepath.Join(dir, "cur", fmt.Sprintf("%d.%s_%d.imaptest:2,S", 1_700_000_000+n, d.prefix, n))
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(p, d.uid, d.gid); err != nil {
		t.Fatal(err)
	}
	return p
}
