package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer collects what the server logs, safe for the server's
// goroutines and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is one instance of the service started by a test.
type server struct {
	URL  string
	Dir  string
	Logs *syncBuffer
	stop func() error
}

// testEnv is the environment every end-to-end test starts from.
func testEnv(dir string) map[string]string {
	return map[string]string{
		"LISTEN_ADDR":    "127.0.0.1:0",
		"DATA_DIR":       dir,
		"SESSION_SECURE": "false",
		"STORE_SYNC":     "none",
		"LOG_FORMAT":     "json",
		"LOG_LEVEL":      "debug",
		"ACCESS_LOG":     "all", // the tests read the access lines
	}
}

// startRun starts run() in this process on port 0 and returns once it
// listens. The server stops at the end of the test; stopping it early
// returns run's error.
func startRun(t *testing.T, env map[string]string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	own := make(map[string]string, len(env)) // the test may change env later
	for k, v := range env {
		own[k] = v
	}
	getenv := func(k string) string { return own[k] }
	go func() {
		err := run(ctx, []string{"searchsvc"}, getenv, io.Discard, io.MultiWriter(logs, pw))
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	addr := waitListening(t, pr)
	go io.Copy(io.Discard, pr)
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(30 * time.Second):
				t.Error("run did not return within 30 s of cancel")
			}
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("run returned %v", err)
		}
	})
	return &server{URL: "http://" + addr, Dir: env["DATA_DIR"], Logs: logs, stop: stop}
}

// waitListening reads JSON log lines until the "listening" one and returns
// its address.
func waitListening(t testing.TB, r io.Reader) string {
	t.Helper()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == "listening" {
				lines <- m["addr"].(string)
				return
			}
		}
		close(lines)
	}()
	select {
	case addr, ok := <-lines:
		if !ok {
			t.Fatal("server exited before listening")
		}
		return addr
	case <-time.After(30 * time.Second):
		t.Fatal("server did not listen within 30 s")
	}
	return ""
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("GET %s: body is not JSON: %v", url, err)
	}
	return resp.StatusCode, m
}

func TestRunServesHealthzAndJSON404(t *testing.T) {
	srv := startRun(t, testEnv(t.TempDir()))
	status, body := getJSON(t, srv.URL+"/healthz")
	if status != 200 || body["result"].(map[string]any)["status"] != "ok" {
		t.Errorf("healthz: got %d %v, want 200 status ok", status, body)
	}
	status, body = getJSON(t, srv.URL+"/v1/nothing-here")
	e, _ := body["error"].(map[string]any)
	if status != 404 || e["message"] != "not found" {
		t.Errorf("unknown path: got %d %v, want 404 not found", status, body)
	}
	if err := srv.stop(); err != nil {
		t.Errorf("graceful stop: got %v, want nil", err)
	}
	// The access lines wait to be written together; the shutdown writes
	// them before "stopped".
	for _, want := range []string{`"msg":"shutting down"`, `"msg":"stopped"`, "development mode",
		`"msg":"request","request_id":"`, `"pattern":"(unmatched)","status":404`} {
		if !strings.Contains(srv.Logs.String(), want) {
			t.Errorf("logs lack %s", want)
		}
	}
	if logs := srv.Logs.String(); strings.LastIndex(logs, `"msg":"request"`) > strings.Index(logs, `"msg":"stopped"`) {
		t.Errorf("an access line after \"stopped\": %s", logs)
	}
	if fi, err := os.Stat(filepath.Join(srv.Dir, "dev-secrets.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("dev-secrets.json: %v, mode %v; want a 0600 file", err, fi)
	}
}

// TestBinary builds the real binary and runs it on port 0: the process a
// Pi owner starts, stopped with SIGTERM as systemd does.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "searchsvc")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "searchsvc ") {
		t.Errorf("searchsvc version: got %q, %v", out, err)
	}

	cmd := exec.Command(bin)
	env := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range testEnv(t.TempDir()) {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := waitListening(t, stderr)
	go io.Copy(io.Discard, stderr)
	status, body := getJSON(t, "http://"+addr+"/healthz")
	if status != 200 || body["operation"] != "health.read" {
		t.Errorf("healthz: got %d %v", status, body)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: got %v, want status 0", err)
	}
}

// TestRunTellsSystemd starts run with NOTIFY_SOCKET set, as systemd does
// for Type=notify, and reads the start's request for more time, READY=1,
// the watchdog ping and STOPPING=1.
func TestRunTellsSystemd(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	env := testEnv(t.TempDir())
	env["NOTIFY_SOCKET"] = sock
	env["WATCHDOG_USEC"] = "200000"
	env["WATCHDOG_PID"] = strconv.Itoa(os.Getpid())
	srv := startRun(t, env)

	seen := map[string]bool{}
	read := func(want string) {
		t.Helper()
		buf := make([]byte, 512)
		for !seen[want] {
			conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("waiting for %s: %v (seen %v)", want, err, seen)
			}
			for _, line := range strings.Split(string(buf[:n]), "\n") {
				seen[line] = true
			}
		}
	}
	read("EXTEND_TIMEOUT_USEC=30000000")
	read("READY=1")
	read("WATCHDOG=1")
	if status, body := getJSON(t, srv.URL+"/readyz"); status != 200 || body["result"].(map[string]any)["status"] != "ready" {
		t.Errorf("readyz: got %d %v", status, body)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	read("STOPPING=1")
}

// TestSecondServerRefused: a second process on the same DATA_DIR must not
// open the stores; its error names the holder.
func TestSecondServerRefused(t *testing.T) {
	env := testEnv(t.TempDir())
	startRun(t, env)
	var out bytes.Buffer
	err := run(context.Background(), []string{"searchsvc"}, func(k string) string { return env[k] }, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "open main store") || !strings.Contains(err.Error(), "pid") {
		t.Errorf("second server: got %v, want a lock error naming the holder", err)
	}
}
