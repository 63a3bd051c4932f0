package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/httpx"
)

// BenchmarkProfileOverHTTP measures what a client sees: an authenticated
// GET /v1/user/profile over a loopback connection, through the real chain
// (apiHandler, as run serves it: httpx.Handler with the access log, the
// mux, auth's Require, the session and user lookups, the envelope),
// against a bare handler on the same kind of server that writes the very
// same bytes. The two are timed in alternating blocks within one run, so
// machine noise hits both. ratio is bare time over chain time (1.0: the
// chain costs nothing); see reportRatio for it and median-ratio. The
// server logs as run's does, in text, but to io.Discard: production also
// pays a write to stderr per line (in batches, off the requests' path).
//
// In "sequential" and "parallel" the client runs in this process, so its
// own work and the garbage collector's are shared with the server's; in
// "client-process" the client is a separate process (this test binary
// again, as TestLoadClient), as a browser would be.
func BenchmarkProfileOverHTTP(b *testing.B) {
	b.Run("sequential", func(b *testing.B) { profileOverHTTP(b, "sequential") })
	b.Run("parallel", func(b *testing.B) { profileOverHTTP(b, "parallel") })
	b.Run("client-process", func(b *testing.B) { profileOverHTTP(b, "client-process") })
}

func profileOverHTTP(b *testing.B, mode string) {
	dir := b.TempDir()
	env := testEnv(dir)
	c, err := loadConfig(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	if err := c.devSecrets(); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil)) // formats every line, as LOG_FORMAT=text (the default) does
	a, err := openApp(c, func(k string) string { return env[k] }, log)
	if err != nil {
		b.Fatal(err)
	}
	defer a.close(log)
	api, err := apiHandler(a, c, log)
	if err != nil {
		b.Fatal(err)
	}
	chain := httptest.NewServer(api)
	defer chain.Close()
	defer api.FlushAccessLog()

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	resp, err := client.Post(chain.URL+"/v1/auth/register", "application/json",
		strings.NewReader(`{"email":"bench@example.org","password":"a long enough password","name":"Bench"}`))
	if err != nil || resp.StatusCode != 201 {
		b.Fatalf("register: %v %v", resp, err)
	}
	resp.Body.Close()
	// fetch may run on any goroutine; get, on the benchmark's own only.
	fetch := func(url string) ([]byte, error) {
		resp, err := client.Get(url)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
		}
		return body, nil
	}
	get := func(url string) []byte {
		body, err := fetch(url)
		if err != nil {
			b.Fatal(err)
		}
		return body
	}
	same := get(chain.URL + "/v1/user/profile")
	var profile struct {
		Result struct {
			ID        string    `json:"id"`
			Email     string    `json:"email"`
			Name      string    `json:"name"`
			Role      string    `json:"role"`
			CreatedAt time.Time `json:"createdAt"`
		} `json:"result"`
	}
	if err := json.Unmarshal(same, &profile); err != nil {
		b.Fatal(err)
	}
	// The bare handler builds the same JSON document per request (its own
	// request id, timestamp and duration, the same user) with the same
	// encoder, and nothing else: no middleware, routing or session.
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.One(w, r, "user.readOne", profile.Result)
	}))
	defer bare.Close()
	if got := get(bare.URL + "/"); !bytes.Equal(stripVolatile(got), stripVolatile(same)) {
		b.Fatalf("the bare handler does not write the same JSON:\n%s\n%s", got, same)
	}

	if mode == "client-process" {
		var cookie string
		for _, ck := range jar.Cookies(mustParseURL(b, chain.URL)) {
			if ck.Name == "svc_session" {
				cookie = ck.Value
			}
		}
		b.ResetTimer()
		chainTimes, bareTimes := runLoadClient(b, chain.URL+"/v1/user/profile", bare.URL+"/", cookie, b.N)
		reportRatio(b, chainTimes, bareTimes)
		return
	}
	if mode == "parallel" {
		// Throughput with 16 concurrent clients: both servers saturate the
		// two cores, so the ratio is one of CPU cost per request. Rounds
		// alternate between the two so that noise from the machine hits
		// both alike. A chain round ends by writing its waiting access
		// lines, so that their cost is the chain's and cannot fall into
		// a bare round.
		var chainTimes, bareTimes []time.Duration
		hammer := func(url string, n int, end func()) time.Duration {
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for w := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < n; i += 16 {
						if _, err := fetch(url); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
			end()
			return time.Since(start)
		}
		b.ResetTimer()
		const round = 400 // 25 requests per client
		for i := 0; i < b.N; i += round {
			n := min(round, b.N-i)
			chainTimes = append(chainTimes, hammer(chain.URL+"/v1/user/profile", n, api.FlushAccessLog))
			bareTimes = append(bareTimes, hammer(bare.URL+"/", n, func() {}))
		}
		reportRatio(b, chainTimes, bareTimes)
		return
	}
	const block = 50
	var chainTimes, bareTimes []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += block {
		n := min(block, b.N-i)
		start := time.Now()
		for range n {
			get(chain.URL + "/v1/user/profile")
		}
		chainTimes = append(chainTimes, time.Since(start))
		start = time.Now()
		for range n {
			get(bare.URL + "/")
		}
		bareTimes = append(bareTimes, time.Since(start))
	}
	reportRatio(b, chainTimes, bareTimes)
}

// reportRatio reports the average time per request of each side, ratio
// (bare time over chain time, all blocks summed: every cost of either side
// counts, wherever it fell) and median-ratio (the median of that ratio
// over pairs of equally long blocks, which a block slowed by something
// else entirely cannot move).
func reportRatio(b *testing.B, chainTimes, bareTimes []time.Duration) {
	var chainSum, bareSum time.Duration
	ratios := make([]float64, len(chainTimes))
	for i := range chainTimes {
		chainSum += chainTimes[i]
		bareSum += bareTimes[i]
		ratios[i] = float64(bareTimes[i]) / float64(chainTimes[i])
	}
	b.ReportMetric(float64(chainSum.Nanoseconds())/float64(b.N), "chain-ns/req")
	b.ReportMetric(float64(bareSum.Nanoseconds())/float64(b.N), "bare-ns/req")
	b.ReportMetric(float64(bareSum)/float64(chainSum), "ratio")
	b.ReportMetric(median(ratios), "median-ratio")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// stripVolatile blanks what differs between any two responses: the
// request id, timestamp and duration.
func stripVolatile(body []byte) []byte {
	var m map[string]any
	json.Unmarshal(body, &m)
	delete(m, "requestId")
	delete(m, "timestamp")
	delete(m, "duration")
	out, _ := json.Marshal(m)
	return out
}

func mustParseURL(b *testing.B, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		b.Fatal(err)
	}
	return u
}

// runLoadClient runs TestLoadClient in a child process against the two
// URLs and returns the time it spent on each block of each.
func runLoadClient(b *testing.B, chainURL, bareURL, cookie string, n int) (chain, bare []time.Duration) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadClient$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LOADCLIENT_CHAIN="+chainURL, "LOADCLIENT_BARE="+bareURL,
		"LOADCLIENT_COOKIE="+cookie, "LOADCLIENT_N="+strconv.Itoa(n))
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("load client: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		var c, bb int64
		if _, err := fmt.Sscanf(line, "loadclient %d %d", &c, &bb); err == nil {
			chain, bare = append(chain, time.Duration(c)), append(bare, time.Duration(bb))
		}
	}
	if len(chain) == 0 {
		b.Fatalf("load client output %q: no blocks", out)
	}
	return chain, bare
}

// TestLoadClient is the client process of BenchmarkProfileOverHTTP's
// client-process mode; it does nothing in a normal test run. It alternates
// blocks of 50 requests between the two URLs over one keep-alive
// connection each and prints the time spent on each pair of blocks.
func TestLoadClient(t *testing.T) {
	chainURL := os.Getenv("LOADCLIENT_CHAIN")
	if chainURL == "" {
		t.Skip("the client process of BenchmarkProfileOverHTTP")
	}
	n, _ := strconv.Atoi(os.Getenv("LOADCLIENT_N"))
	bareURL, cookie := os.Getenv("LOADCLIENT_BARE"), os.Getenv("LOADCLIENT_COOKIE")
	client := &http.Client{}
	get := func(u string) {
		req, _ := http.NewRequest("GET", u, nil)
		req.AddCookie(&http.Cookie{Name: "svc_session", Value: cookie})
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", u, resp.StatusCode)
		}
	}
	for i := 0; i < n; i += 50 {
		k := min(50, n-i)
		start := time.Now()
		for range k {
			get(chainURL)
		}
		chain := time.Since(start)
		start = time.Now()
		for range k {
			get(bareURL)
		}
		fmt.Printf("loadclient %d %d\n", chain.Nanoseconds(), time.Since(start).Nanoseconds())
	}
}
