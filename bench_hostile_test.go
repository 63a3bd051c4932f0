package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHostileBodiesRSS is the memory-exhaustion attack on the real
// binary: one signed-in user opens 1,000 connections from 127.0.0.2, each
// sending a 1 MiB JSON body in 16 pieces 100 ms apart to PUT /v1/user/password with CSRF_TOKENS=true
// and the session's token header (so the handler reads the whole body), while a
// normal user on 127.0.0.3 signs in and reads their profile. It reports
// the binary's resident memory before the attack, its peak and after,
// from /proc/PID/status (before-rss-MB, hwm-MB, rss-MB), the attack's answers (accepted, refused-503, reset),
// and fails if the peak passes 96 MB or the normal user is not served.
// It runs with the default limits, and again with the connection limits
// lifted (body-budget-only), as an attacker with many addresses would
// face them.
// Traffic goes to 127.0.0.1 only.
func BenchmarkHostileBodiesRSS(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc/PID/status")
	}
	bin := filepath.Join(b.TempDir(), "searchsvc")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	// With the default limits; then with the connection limits out of the
	// way, as from many addresses, so that only the body budget holds.
	b.Run("defaults", func(b *testing.B) { hostileBodies(b, bin) })
	b.Run("body-budget-only", func(b *testing.B) {
		hostileBodies(b, bin, "MAX_CONNECTIONS=100000", "MAX_CLIENT_CONNECTIONS=100000")
	})
}

func hostileBodies(b *testing.B, bin string, extraEnv ...string) {
	cmd := exec.Command(bin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "LISTEN_ADDR=127.0.0.1:0", "DATA_DIR=" + b.TempDir(),
		"SESSION_SECURE=false", "STORE_SYNC=none", "LOG_FORMAT=json", "LOG_LEVEL=info", "CSRF_TOKENS=true"}, extraEnv...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := waitListening(b, stderr)
	go io.Copy(io.Discard, stderr)
	base := "http://" + addr

	user := clientFrom("127.0.0.3")
	attacker := clientFrom("127.0.0.2")
	cookie, token := signUp(b, attacker, base, "attacker@example.com")
	_, _ = signUp(b, user, base, "user@example.com")

	body := []byte(`{"currentPassword":"` + strings.Repeat("a", 1<<20-40) + `","newPassword":"x"}`)
	head := fmt.Sprintf("PUT /v1/user/password HTTP/1.1\r\nHost: %s\r\nCookie: svc_session=%s\r\nX-CSRF-Token: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, cookie, token, len(body))
	_, baseRSS := procMemory(b, cmd.Process.Pid)
	var accepted, refused, reset atomic.Int64
	var userFailures []string
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 1000 {
			wg.Go(func() {
				switch status := attack(addr, head, body); status {
				case 0:
					reset.Add(1)
				case http.StatusServiceUnavailable:
					refused.Add(1)
				default:
					accepted.Add(1)
				}
			})
		}
		served := make(chan []string)
		go func() {
			var fails []string
			for i := 0; ; i++ {
				select {
				case <-stop:
					served <- fails
					return
				default:
				}
				if s := status(user, "GET", base+"/v1/user/profile", ""); s != 200 {
					fails = append(fails, "profile "+strconv.Itoa(s))
				}
				if i > 0 {
					// One sign-in per attack: more would meet the login rate limit.
				} else if s := status(user, "POST", base+"/v1/auth/login", `{"email":"user@example.com","password":"correct horse battery"}`); s != 200 {
					fails = append(fails, "login "+strconv.Itoa(s))
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		wg.Wait()
		close(stop)
		userFailures = append(userFailures, <-served...)
	}
	b.StopTimer()
	hwm, rss := procMemory(b, cmd.Process.Pid)
	b.ReportMetric(float64(hwm)/1e6, "hwm-MB")
	b.ReportMetric(float64(rss)/1e6, "rss-MB")
	b.ReportMetric(float64(baseRSS)/1e6, "before-rss-MB")
	b.ReportMetric(float64(accepted.Load())/float64(b.N), "accepted/op")
	b.ReportMetric(float64(refused.Load())/float64(b.N), "refused-503/op")
	b.ReportMetric(float64(reset.Load())/float64(b.N), "reset/op")
	if len(userFailures) > 0 {
		b.Errorf("the normal user was not served during the attack: %v", userFailures)
	}
	if hwm > 96e6 {
		b.Errorf("peak RSS %.1f MB, over 96 MB", float64(hwm)/1e6)
	}
}

// attack sends one hostile request on a connection of its own from
// 127.0.0.2 and returns the status it got, 0 if the connection broke.
func attack(addr, head string, body []byte) int {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 30 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return 0
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	go func() {
		// Slowly, as an attacker would: every connection's body is
		// then in flight at once.
		if _, err := c.Write([]byte(head)); err != nil {
			return
		}
		for chunk := range slices.Chunk(body, len(body)/16+1) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// clientFrom is an HTTP client whose connections come from the loopback
// address from.
func clientFrom(from string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	jar, _ := cookiejar.New(nil)
	return &http.Client{Timeout: 30 * time.Second, Jar: jar, Transport: &http.Transport{DialContext: d.DialContext}}
}

func signUp(b *testing.B, c *http.Client, base, email string) (cookie, csrf string) {
	b.Helper()
	res, err := c.Post(base+"/v1/auth/register", "application/json",
		strings.NewReader(`{"email":"`+email+`","name":"N","password":"correct horse battery"}`))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	json.NewDecoder(res.Body).Decode(&m)
	if res.StatusCode != 201 {
		b.Fatalf("register %s: %d %v", email, res.StatusCode, m)
	}
	for _, ck := range res.Cookies() {
		if ck.Name == "svc_session" {
			cookie = ck.Value
		}
	}
	csrf, _ = m["csrfToken"].(string)
	return cookie, csrf
}

func status(c *http.Client, method, url, body string) int {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// procMemory reads the peak (VmHWM) and current (VmRSS) resident memory
// of process pid, in bytes.
func procMemory(b *testing.B, pid int) (hwm, rss int64) {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		f := strings.Fields(string(v))
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch string(k) {
		case "VmHWM":
			hwm = n << 10
		case "VmRSS":
			rss = n << 10
		}
	}
	return hwm, rss
}
