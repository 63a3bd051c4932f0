package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"searchsvc/httpx"
)

// wrkBlocks and wrkBlockSeconds shape BenchmarkAuthReadWrk's run: blocks
// alternate between the two servers, each starting first in turn, so
// that the machine's noise hits both alike.
const (
	wrkBlocks       = 6
	wrkBlockSeconds = 3
)

// needWrk returns wrk's path, or skips (fails under CI, whose .ci/run
// installs it).
func needWrk(b *testing.B) string {
	b.Helper()
	p, err := exec.LookPath("wrk")
	if err != nil {
		if os.Getenv("CI") != "" {
			b.Fatal("wrk is not installed; .ci/run installs it (apt-get install wrk)")
		}
		b.Skip("wrk is not installed (apt-get install wrk): BenchmarkAuthReadWrk skipped")
	}
	return p
}

// BenchmarkAuthReadWrk drives the real binary, with the production
// defaults of the collector and the memory limit (config.go), and a bare
// standard-library server in another process, with wrk, in alternating
// blocks of one run: an authenticated GET /v1/user/profile through the
// whole chain (access log, mux, session and user lookups, envelope)
// against a handler that only looks the cookie up in a map and writes the
// same JSON. ratio is the chain's requests a second over the bare
// server's, summed over the blocks; median-ratio the median of the
// blocks' ratios. The bound is 0.85; it is said, not failed
// on, as BenchmarkPiMemory says its bounds. chain-gc/10k-req is the
// binary's collections (GODEBUG=gctrace=1) over the blocks, per 10,000
// of its requests: what the memory limit's room above the live heap
// (memlimit.go) costs the path, which a loaded machine's ratio hides.
func BenchmarkAuthReadWrk(b *testing.B) {
	wrk := needWrk(b)
	bin := buildBinary(b)
	for range b.N {
		chainProc, chainURL, cookie, profile, same := startSignedIn(b, bin, b.TempDir(), map[string]string{"GODEBUG": "gctrace=1"})
		chainPID := chainProc.cmd.Process.Pid
		barePID, bareURL := startBareServer(b, cookie, profile, same)
		gcs := chainProc.gcs.Load()
		var chain, bare wrkTotals
		var ratios []float64
		for i := range wrkBlocks {
			var c, r wrkTotals
			if i%2 == 0 {
				c = runWrk(b, wrk, chainURL, cookie, chainPID)
				r = runWrk(b, wrk, bareURL, cookie, barePID)
			} else {
				r = runWrk(b, wrk, bareURL, cookie, barePID)
				c = runWrk(b, wrk, chainURL, cookie, chainPID)
			}
			chain.add(c)
			bare.add(r)
			ratios = append(ratios, c.rps/r.rps)
		}
		gcs = chainProc.gcs.Load() - gcs
		cpuRatio := (bare.cpu / bare.reqs) / (chain.cpu / chain.reqs)
		b.Logf("chain %.0f req/s, bare %.0f req/s, ratio %.3f (blocks %.3f); CPU a request: chain %.1f µs, bare %.1f µs, ratio %.3f; the chain's collections: %d over %.0f requests",
			chain.rps/wrkBlocks, bare.rps/wrkBlocks, chain.rps/bare.rps, ratios,
			chain.cpu/chain.reqs*1e6, bare.cpu/bare.reqs*1e6, cpuRatio, gcs, chain.reqs)
		b.ReportMetric(float64(gcs)/chain.reqs*1e4, "chain-gc/10k-req")
		b.ReportMetric(chain.rps/wrkBlocks, "chain-req/s")
		b.ReportMetric(bare.rps/wrkBlocks, "bare-req/s")
		b.ReportMetric(chain.rps/bare.rps, "ratio")
		b.ReportMetric(median(ratios), "median-ratio")
		b.ReportMetric(chain.cpu/chain.reqs*1e6, "chain-cpu-µs/req")
		b.ReportMetric(bare.cpu/bare.reqs*1e6, "bare-cpu-µs/req")
		b.ReportMetric(cpuRatio, "cpu-ratio")
		if chain.rps/bare.rps < 0.85 {
			b.Logf("NOT MET: the authenticated read path is %.3f× the bare server, under 0.85×", chain.rps/bare.rps)
		}
	}
}

// startSignedIn starts bin on dir with piEnv and extra, signs up a user
// and returns the process (which counts its collections when extra sets
// GODEBUG=gctrace=1), the profile route's URL, the session cookie, the
// profile's JSON result and the whole answer.
func startSignedIn(b *testing.B, bin, dir string, extra map[string]string) (p *logged, url, cookie string, profile json.RawMessage, body []byte) {
	b.Helper()
	env := piEnv(dir)
	for k, v := range extra {
		env[k] = v
	}
	p = startLogged(b, bin, env)
	base := "http://" + p.addr
	res, err := http.Post(base+"/v1/auth/register", "application/json",
		strings.NewReader(`{"email":"wrk@example.org","password":"a long enough password","name":"Wrk"}`))
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 201 {
		b.Fatalf("register: %d", res.StatusCode)
	}
	for _, c := range res.Cookies() {
		if c.Name == "svc_session" {
			cookie = c.Value
		}
	}
	body = getWithCookie(b, base+"/v1/user/profile", cookie)
	var env2 struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &env2); err != nil {
		b.Fatal(err)
	}
	return p, base + "/v1/user/profile", cookie, env2.Result, body
}

func getWithCookie(b *testing.B, url, cookie string) []byte {
	b.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.AddCookie(&http.Cookie{Name: "svc_session", Value: cookie})
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		b.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
	}
	return body
}

// startBareServer runs TestBareServer in a child process serving profile
// to cookie, checks it writes what the chain wrote (same), and returns
// its process id and URL.
func startBareServer(b *testing.B, cookie string, profile json.RawMessage, same []byte) (pid int, url string) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBareServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BARESERVER_COOKIE="+cookie, "BARESERVER_PROFILE="+string(profile))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "bareserver ") {
		b.Fatalf("bare server: %q %v", line, err)
	}
	go io.Copy(io.Discard, br)
	url = "http://" + strings.TrimSpace(strings.TrimPrefix(line, "bareserver ")) + "/v1/user/profile"
	got := getWithCookie(b, url, cookie)
	if !bytes.Equal(stripVolatile(got), stripVolatile(same)) {
		b.Fatalf("the bare server does not write what the chain writes:\n%s\n%s", got, same)
	}
	return cmd.Process.Pid, url
}

// TestBareServer is BenchmarkAuthReadWrk's bare server, run in a child
// process; it does nothing in a normal test run. It runs with the
// runtime's defaults (no memory limit, GOGC 100), answers the one
// session cookie it was given with the profile through httpx.One (the
// envelope every route writes), anything else 401, and prints its
// address.
func TestBareServer(t *testing.T) {
	cookie := os.Getenv("BARESERVER_COOKIE")
	if cookie == "" {
		t.Skip("the bare server of BenchmarkAuthReadWrk")
	}
	var mu sync.RWMutex
	users := map[string]json.RawMessage{cookie: json.RawMessage(os.Getenv("BARESERVER_PROFILE"))}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("bareserver %s\n", ln.Addr())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("svc_session")
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.RLock()
		p, ok := users[c.Value]
		mu.RUnlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		httpx.One(w, r, "user.readOne", p)
	})}
	srv.Serve(ln)
}

var wrkRPS = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)

// wrkTotals are what blocks of wrk measured: requests a second, requests,
// and the server's CPU seconds.
type wrkTotals struct{ rps, reqs, cpu float64 }

func (t *wrkTotals) add(o wrkTotals) { t.rps += o.rps; t.reqs += o.reqs; t.cpu += o.cpu }

// runWrk runs one block of wrk against url with the session cookie and
// returns its requests a second and requests, and the CPU time the
// server (pid) spent meanwhile; a block with non-2xx answers fails.
func runWrk(b *testing.B, wrk, url, cookie string, pid int) wrkTotals {
	b.Helper()
	cpu0 := procCPU(b, pid).Seconds()
	out, err := exec.Command(wrk, "-t1", "-c16", "-d"+strconv.Itoa(wrkBlockSeconds)+"s",
		"-H", "Cookie: svc_session="+cookie, url).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("Non-2xx")) {
		b.Fatalf("wrk saw errors:\n%s", out)
	}
	m := wrkRPS.FindSubmatch(out)
	if m == nil {
		b.Fatalf("wrk output without Requests/sec:\n%s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	t := wrkTotals{rps: rps, cpu: procCPU(b, pid).Seconds() - cpu0}
	if m := wrkReqs.FindSubmatch(out); m != nil {
		t.reqs, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	return t
}

var wrkReqs = regexp.MustCompile(`([0-9]+) requests in`)
