package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMetrics(t *testing.T) {
	env := testEnv(t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env["METRICS_ADDR"] = ln.Addr().String()
	ln.Close()
	env["LOGIN_RATE_LIMIT"] = "3"
	srv := startRun(t, env)
	admin := newClient(t, srv.URL)
	admin.do("POST", "/v1/auth/register", map[string]string{"email": "root@example.org", "password": "a long enough password", "name": "Root"})
	other := newClient(t, srv.URL)
	other.do("POST", "/v1/auth/register", map[string]string{"email": "bob@example.org", "password": "a long enough password", "name": "Bob"})
	other.do("POST", "/v1/auth/login", map[string]string{"email": "bob@example.org", "password": "a long enough password"})
	other.do("POST", "/v1/auth/login", map[string]string{"email": "bob@example.org", "password": "wrong password!!"})
	other.do("POST", "/v1/auth/login", map[string]string{"email": "bob@example.org", "password": "wrong password!!"})
	if status, body, _ := other.do("POST", "/v1/auth/login", map[string]string{"email": "bob@example.org", "password": "x"}); status != 429 {
		t.Fatalf("fourth login: got %d %v, want 429", status, body)
	}
	if status, body, _ := other.do("GET", "/v1/admin/metrics", nil); status != 403 || errMessage(body) != "admin required" {
		t.Errorf("metrics as a non-admin: got %d %v", status, body)
	}
	status, body, _ := admin.do("GET", "/v1/admin/metrics", nil)
	if status != 200 {
		t.Fatalf("metrics: got %d %v", status, body)
	}
	m := body["result"].(map[string]any)
	logins := m["logins"].(map[string]any)
	if logins["ok"] != 1.0 || logins["failed"] != 2.0 || logins["throttled"] != 1.0 {
		t.Errorf("logins: got %v, want ok 1, failed 2, throttled 1", logins)
	}
	// Root's session and Bob's login one: logging in replaced the session
	// Bob's browser got at registration (session fixation protection).
	if m["sessions_active"] != 2.0 {
		t.Errorf("sessions_active: got %v, want 2", m["sessions_active"])
	}
	if st := m["store_main"].(map[string]any); st["live_records"].(float64) < 1 || st["failed"] != false {
		t.Errorf("store_main: got %v", st)
	}
	if r := m["requests"].(map[string]any); r["4xx"].(float64) < 4 {
		t.Errorf("requests: got %v, want at least four 4xx", r)
	}

	// The text format on METRICS_ADDR, after a search whose words must
	// not show in any label.
	const query = "zebracornflakes"
	if status, body, _ := other.do("GET", "/v1/search?q="+query, nil); status != 200 {
		t.Fatalf("search: got %d %v", status, body)
	}
	_, prof, _ := other.do("GET", "/v1/user/profile", nil)
	bobID, _ := prof["result"].(map[string]any)["id"].(string)
	if bobID == "" {
		t.Fatalf("profile: got %v", prof)
	}
	got := scrapeMetrics(t, env["METRICS_ADDR"])
	for _, line := range []string{
		`searchsvc_build_info{goversion="` + runtime.Version() + `",version="dev"} 1`,
		`searchsvc_logins_total{outcome="failed"} 2`,
		`searchsvc_logins_total{outcome="ok"} 1`,
		`searchsvc_logins_total{outcome="throttled"} 1`,
		`searchsvc_http_requests_total{class="4xx",route="POST /v1/auth/login"} 3`,
		`searchsvc_http_requests_total{class="2xx",route="GET /v1/search"} 1`,
		`searchsvc_sessions_active 2`,
		`searchsvc_search_queries_total 1`,
		`searchsvc_search_query_duration_seconds_count 1`,
		`searchsvc_store_records{store="sessions"} 2`,
		`searchsvc_items{integration="feed"} 0`,
		`searchsvc_sync_tasks_total{integration="gmail",outcome="ok"} 0`,
		`searchsvc_sync_runs_total{integration="imap",outcome="error"} 0`,
		`searchsvc_index_documents 0`,
		`# TYPE searchsvc_http_request_duration_seconds histogram`,
		`searchsvc_http_request_duration_seconds_bucket{le="+Inf"} `,
		`searchsvc_disk_free_bytes `,
		`searchsvc_process_resident_memory_bytes `,
		`searchsvc_go_heap_bytes `,
		`searchsvc_index_bytes `,
		`searchsvc_store_bytes{store="main"} `,
	} {
		if !strings.Contains(got, line) {
			t.Errorf("METRICS_ADDR /metrics lacks %q", line)
		}
	}
	for _, personal := range []string{"bob@example.org", "root@example.org", "Bob", bobID, query} {
		if strings.Contains(got, personal) {
			t.Errorf("METRICS_ADDR /metrics holds %q", personal)
		}
	}
}

// scrapeMetrics gets METRICS_ADDR's /metrics, checks its media type, and
// lints it with promtoolCheck.
func scrapeMetrics(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("METRICS_ADDR /metrics: got %d %q, %v", resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	promtoolCheck(t, text)
	return string(text)
}

// promtoolCheck runs Prometheus' own linter on a scrape: it must find
// nothing. Without promtool (Debian's prometheus package) the check is
// skipped, unless CI is set: .ci/run installs it.
func promtoolCheck(t *testing.T, text []byte) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is missing; .ci/run installs it with Debian's prometheus package")
		}
		t.Skip("promtool not installed (apt-get install prometheus): the scrape is not linted")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("promtool check metrics: %v\n%s\non\n%s", err, out, text)
	}
}

// writeCert writes a fresh self-signed certificate for 127.0.0.1 and
// returns it.
func writeCert(t *testing.T, certFile, keyFile string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "searchsvc test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	return cert
}

// TestTLSReloadOnSIGHUP serves HTTPS from TLS_CERT_FILE, replaces the
// certificate on disk and sends SIGHUP: new connections get the new one.
func TestTLSReloadOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := writeCert(t, certFile, keyFile, 1)
	env := testEnv(t.TempDir())
	env["TLS_CERT_FILE"], env["TLS_KEY_FILE"] = certFile, keyFile
	srv := startRun(t, env)
	addr := srv.URL[len("http://"):]

	served := func() *big.Int {
		t.Helper()
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber
	}
	if got := served(); got.Cmp(first.SerialNumber) != 0 {
		t.Fatalf("serial: got %v, want %v", got, first.SerialNumber)
	}
	pool := x509.NewCertPool()
	pool.AddCert(first)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz over TLS: %v %v", resp, err)
	}
	resp.Body.Close()

	// A broken file on SIGHUP keeps the current certificate.
	os.WriteFile(certFile, []byte("not a certificate"), 0o600)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitLog(t, srv, "keeping the current one")
	if got := served(); got.Cmp(first.SerialNumber) != 0 {
		t.Errorf("after a failed reload: serial %v, want %v", got, first.SerialNumber)
	}

	second := writeCert(t, certFile, keyFile, 2)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitLog(t, srv, "reloaded TLS certificate")
	if got := served(); got.Cmp(second.SerialNumber) != 0 {
		t.Errorf("after SIGHUP: serial %v, want %v", got, second.SerialNumber)
	}
}

// waitLog waits (bounded) until the server has logged want.
func waitLog(t *testing.T, srv *server, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !containsLog(srv, want) {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not log %q", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func containsLog(srv *server, want string) bool {
	return strings.Contains(srv.Logs.String(), want)
}
