package webdav_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer/syncfx"
	"searchsvc/integrations/webdav"
)

// apachePath is where Debian's apache2 package puts the server, and
// apacheModules its modules.
const (
	apachePath    = "/usr/sbin/apache2"
	apacheModules = "/usr/lib/apache2/modules"
)

// apache is Debian's Apache 2 with mod_dav, run for one test with its
// own configuration in a temporary directory: TLS on 127.0.0.1 with a
// certificate of its own authority (caPEM), basic authentication of one
// user, and the folder files served by WebDAV at /.
type apache struct {
	dir, files, url, caPEM string
}

// startApache starts Apache for t, stopped when t ends. Without it the
// test skips, saying how to install it; under CI (CI set), whose .ci/run
// installs it, it fails instead.
func startApache(t *testing.T) *apache {
	t.Helper()
	if _, err := os.Stat(apachePath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("apache2 is not installed; .ci/run installs it (apt-get install apache2)")
		}
		t.Skip("apache2 is not installed (apt-get install apache2): the test against a real WebDAV server is skipped")
	}
	// Apache's workers run as another user when started as root: the
	// directory is readable by all (it holds a throw-away key and
	// password only), not t.TempDir's 0700.
	dir, err := os.MkdirTemp("", "apache-dav-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a := &apache{dir: dir, files: filepath.Join(dir, "files")}
	runAs := a.writeFiles(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	a.url = "https://" + addr + "/"
	conf := filepath.Join(dir, "apache2.conf")
	if err := os.WriteFile(conf, []byte(a.config(addr, runAs)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(apachePath, "-f", conf, "-DFOREGROUND")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	// Apache has no readiness signal here: it is up once its port takes
	// a connection.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return a
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("apache2 did not listen on %s: %v\n%s%s", addr, err, out, log)
		}
	}
}

// writeFiles writes the key, the certificates and the password file,
// makes the served folder and the lock database's, and returns the user
// the workers run as.
func (a *apache) writeFiles(t *testing.T) string {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(leafKey)
	a.caPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	files := map[string][]byte{
		"cert.pem": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		"key.pem":  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(a.dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a.setPassword(t, "app-password")
	runAs := ""
	if os.Getuid() == 0 {
		runAs = "www-data"
	} else if u, err := user.Current(); err == nil {
		runAs = u.Username
	}
	for _, d := range []string{a.files, filepath.Join(a.dir, "lock"), filepath.Join(a.dir, "run")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getuid() == 0 {
		u, err := user.Lookup(runAs)
		if err != nil {
			t.Fatalf("running as root, Apache needs the www-data user its package creates: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(filepath.Join(a.dir, "lock"), uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return runAs
}

// setPassword sets the user me's password ({SHA}, which Apache reads on
// every platform; the password file is read again at each request).
func (a *apache) setPassword(t *testing.T, pw string) {
	t.Helper()
	sum := sha1.Sum([]byte(pw))
	line := "me:{SHA}" + base64.StdEncoding.EncodeToString(sum[:]) + "\n"
	if err := os.WriteFile(filepath.Join(a.dir, "passwd"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

// config is the server's configuration for this run.
func (a *apache) config(addr, runAs string) string {
	var b strings.Builder
	for _, m := range []string{"mpm_event", "authz_core", "authz_user", "authn_core", "authn_file", "auth_basic",
		"dav", "dav_fs", "ssl", "socache_shmcb"} {
		fmt.Fprintf(&b, "LoadModule %s_module %s/mod_%s.so\n", m, apacheModules, m)
	}
	if runAs != "" {
		fmt.Fprintf(&b, "User %s\nGroup %s\n", runAs, runAs)
	}
	fmt.Fprintf(&b, `ServerRoot %[1]s
ServerName 127.0.0.1
DefaultRuntimeDir %[1]s/run
PidFile %[1]s/run/apache2.pid
Mutex file:%[1]s/run default
ErrorLog %[1]s/error.log
LogLevel warn
Listen %[2]s
SSLEngine on
SSLCertificateFile %[1]s/cert.pem
SSLCertificateKeyFile %[1]s/key.pem
SSLSessionCache none
DAVLockDB %[1]s/lock/DAVLock
DocumentRoot %[1]s/files
<Directory %[1]s/files>
  Dav On
  AuthType Basic
  AuthName "dav"
  AuthBasicProvider file
  AuthUserFile %[1]s/passwd
  Require valid-user
</Directory>
`, a.dir, addr)
	return b.String()
}

// write writes a file of the served folder.
func (a *apache) write(t *testing.T, rel, body string) {
	t.Helper()
	p := filepath.Join(a.files, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestApache syncs a folder served by Debian's Apache 2 with mod_dav
// over TLS with a private CA and basic authentication: the form checks
// the credentials and the certificate; the first sync downloads the
// files the extractor reads; a second makes PROPFIND requests only; a
// changed file is downloaded again; a moved one keeps its item without a
// download; a deleted one leaves; a changed password makes the record
// needs_reauth.
func TestApache(t *testing.T) {
	a := startApache(t)
	a.write(t, "docs/a.txt", "alpha words")
	a.write(t, "docs/sub/b.md", "bravo words")
	a.write(t, "c.bin", "\x00\x01binary")
	var mu sync.Mutex
	counts := map[string]int{}
	def := webdav.Definition(webdav.Config{Observe: func(method string, status int) {
		mu.Lock()
		defer mu.Unlock()
		counts[method+" "+strconv.Itoa(status)]++
	}})
	fields := map[string]string{webdav.FieldURL: a.url, webdav.FieldUsername: "me", webdav.FieldPassword: "app-password",
		webdav.FieldCertificate: a.caPEM}
	creds, err := def.ValidateManual(context.Background(), fields, &http.Client{})
	if err != nil {
		t.Fatalf("the form: %v", err)
	}
	bad := map[string]string{webdav.FieldURL: a.url, webdav.FieldUsername: "me", webdav.FieldPassword: "wrong"}
	_, err = def.ValidateManual(context.Background(), bad, &http.Client{})
	var ve *integrations.ValidationError
	if !errors.As(err, &ve) || ve.Field != webdav.FieldCertificate {
		t.Errorf("no certificate: got %v, want a certificate field error", err)
	}
	bad[webdav.FieldCertificate] = a.caPEM
	if _, err = def.ValidateManual(context.Background(), bad, &http.Client{}); !errors.As(err, &ve) ||
		ve.Field != webdav.FieldPassword || ve.Message != "the server refused the username or app password" {
		t.Errorf("wrong password: got %v", err)
	}

	fx := syncfx.New(t, syncfx.Options{Definition: def, Client: &http.Client{}})
	rec := fx.Connect("u1", creds)
	sync := func() map[string]int {
		mu.Lock()
		clear(counts)
		mu.Unlock()
		fx.Clock.Advance(time.Hour)
		fx.Sync(rec)
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(counts)
	}
	byPath := func() map[string]syncfx.Item {
		out := map[string]syncfx.Item{}
		for _, it := range fx.Items(rec) {
			out[it.Path] = it
		}
		return out
	}
	if got := sync(); got["GET 200"] != 2 || got["PROPFIND 207"] != 3 || len(got) != 2 {
		t.Fatalf("first sync: requests %v, want 3 PROPFIND and 2 GET; record %+v", got, fx.Record(rec))
	}
	items := byPath()
	if len(items) != 3 || !strings.Contains(items["docs/sub/b.md"].Text, "bravo words") || items["c.bin"].Title != "c.bin" {
		t.Fatalf("first sync: items %v", items)
	}
	if got := sync(); len(got) != 1 || got["PROPFIND 207"] != 3 {
		t.Errorf("second sync: requests %v, want 3 PROPFIND only", got)
	}
	a.write(t, "docs/a.txt", "alpha words, changed")
	if got := sync(); got["GET 200"] != 1 {
		t.Errorf("changed file: requests %v, want 1 GET", got)
	}
	if it := byPath()["docs/a.txt"]; !strings.Contains(it.Text, "changed") || len(byPath()) != 3 {
		t.Errorf("changed file: got %+v", it)
	}
	if err := os.MkdirAll(filepath.Join(a.files, "moved"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(a.files, "docs/sub/b.md"), filepath.Join(a.files, "moved/b2.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(a.files, "c.bin")); err != nil {
		t.Fatal(err)
	}
	if got := sync(); got["GET 200"] != 0 {
		t.Errorf("moved file: requests %v, want no GET", got)
	}
	after := byPath()
	if it, ok := after["moved/b2.md"]; !ok || it.ID != items["docs/sub/b.md"].ID || it.Title != "b2.md" {
		t.Errorf("moved file: got %+v (ok %v), want item %s re-keyed", it, ok, items["docs/sub/b.md"].ID)
	}
	if len(after) != 2 {
		t.Errorf("after a move and a deletion: %d items, want 2", len(after))
	}
	// Downloads: the moved file by its new path, as Apache serves it; the
	// deleted one is gone.
	dl := fx.Get("u1", "/v1/items/"+after["moved/b2.md"].ID+"/original")
	if dl.Status != 200 || string(dl.Body) != "bravo words" || dl.Header.Get("Content-Disposition") != "attachment; filename=b2.md" {
		t.Errorf("download of the moved file: %d %q %v", dl.Status, dl.Body, dl.Header)
	}
	if s, code, msg := errorOf(t, fx.Get("u1", "/v1/items/"+items["c.bin"].ID+"/original")); s != 404 || code != "item_not_found" || msg != "item not found" {
		t.Errorf("download of the deleted file's item: %d %s %q", s, code, msg)
	}
	a.write(t, "moved/b2.md", "bravo, written since")
	if dl := fx.Get("u1", "/v1/items/"+after["moved/b2.md"].ID+"/original"); string(dl.Body) != "bravo, written since" {
		t.Errorf("download of a file changed since the sync: %d %q", dl.Status, dl.Body)
	}
	if err := os.Remove(filepath.Join(a.files, "moved/b2.md")); err != nil {
		t.Fatal(err)
	}
	if s, code, msg := errorOf(t, fx.Get("u1", "/v1/items/"+after["moved/b2.md"].ID+"/original")); s != 404 || code != "file_gone" || msg != "file no longer available" {
		t.Errorf("download of a file deleted since the sync: %d %s %q", s, code, msg)
	}
	a.setPassword(t, "a-new-one")
	sync()
	if r := fx.Record(rec); r.Status != records.StatusNeedsReauth {
		t.Errorf("after the password changed: status %q (%q), want needs_reauth", r.Status, r.LastError)
	}
}
