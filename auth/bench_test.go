package auth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/sessions"
	"searchsvc/storage"
)

// nullWriter is a ResponseWriter that keeps nothing, so benchmarks measure
// the handler and not a recorder.
type nullWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) WriteHeader(s int)           { w.status = s }
func (w *nullWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

func (w *nullWriter) reset() {
	clear(w.h)
	w.status, w.n = 0, 0
}

// profileRequest returns an authenticated GET /v1/user/profile and the
// env it is for.
func profileRequest(b *testing.B) (*testEnv, *http.Request) {
	e := newEnv(b)
	c := e.register("ada@example.com", "Ada Lovelace")
	r := httptest.NewRequest("GET", "/v1/user/profile", nil)
	r.RemoteAddr = "192.0.2.1:40000"
	r.AddCookie(&http.Cookie{Name: sessions.CookieName, Value: c.cookie})
	return e, r
}

// bareProfile returns a bare handler that writes the same JSON as the
// real chain answers r with (its own request id, timestamp and duration)
// through the same envelope writer, and does nothing else: no middleware,
// routing, session or user lookup.
func bareProfile(b *testing.B, e *testEnv, r *http.Request) http.Handler {
	u, ok := e.users.byEmail("ada@example.com")
	if !ok {
		b.Fatal("no user")
	}
	view := viewUser(u)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.One(w, r, "user.readOne", view)
	})
	chainRec, bareRec := httptest.NewRecorder(), httptest.NewRecorder()
	e.handler.ServeHTTP(chainRec, r)
	bare.ServeHTTP(bareRec, r)
	if c, bb := stripVolatile(chainRec.Body.Bytes()), stripVolatile(bareRec.Body.Bytes()); c != bb {
		b.Fatalf("the bare handler does not write the chain's JSON:\n%s\n%s", bb, c)
	}
	return bare
}

// stripVolatile is body without what differs between any two responses:
// the request id, timestamp and duration.
func stripVolatile(body []byte) string {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return "not JSON: " + string(body)
	}
	delete(m, "requestId")
	delete(m, "timestamp")
	delete(m, "duration")
	out, _ := json.Marshal(m)
	return string(out)
}

// BenchmarkProfile is an authenticated GET /v1/user/profile through the
// real chain: httpx.Handler, the mux, Require, Profile, with no network.
// It also reports x-bare: its time per request over that of the bare
// handler of BenchmarkProfileBare, timed by hand here (as many runs) so
// the two come from the same run. Without a network the bare handler does
// almost nothing, so this multiple is the chain's own CPU cost; what a
// client sees is BenchmarkProfileOverHTTP's ratio, in the root package.
func BenchmarkProfile(b *testing.B) {
	e, r := profileRequest(b)
	w := &nullWriter{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w.reset()
		e.handler.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
	chain := b.Elapsed()
	b.StopTimer()
	bare := bareProfile(b, e, r)
	n := max(b.N, 1000)
	start := time.Now()
	for range n {
		w.reset()
		bare.ServeHTTP(w, r)
	}
	perBare := float64(time.Since(start).Nanoseconds()) / float64(n)
	if perBare > 0 && b.N > 0 {
		b.ReportMetric(float64(chain.Nanoseconds())/float64(b.N)/perBare, "x-bare")
	}
}

// BenchmarkProfileBare writes the same JSON as BenchmarkProfile from a
// bare handler.
func BenchmarkProfileBare(b *testing.B) {
	e, r := profileRequest(b)
	bare := bareProfile(b, e, r)
	w := &nullWriter{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w.reset()
		bare.ServeHTTP(w, r)
	}
}

// BenchmarkLogin is a successful POST /v1/auth/login at the default Argon2
// parameters, through the real chain.
func BenchmarkLogin(b *testing.B) {
	e := newEnv(b, func(s *setup) { s.params = DefaultParams() })
	e.register("ada@example.com", "Ada")
	body := `{"email":"ada@example.com","password":"` + testPassword + `"}`
	w := &nullWriter{h: http.Header{}}
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		i++
		r := httptest.NewRequest("POST", "/v1/auth/login", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:40000", i>>16&255, i>>8&255, i&255) // under the rate limit
		w.reset()
		e.handler.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}

// diskBytes is what both stores have written so far.
func (e *testEnv) diskBytes() int64 {
	return e.mainStore.Stats().BytesWritten + e.sessStore.Stats().BytesWritten
}

// profileRequests sends n authenticated reads, the clock moving step
// between them, and returns the bytes written to disk meanwhile.
func profileRequests(t testing.TB, e *testEnv, cookie string, n int, step time.Duration) int64 {
	r := httptest.NewRequest("GET", "/v1/user/profile", nil)
	r.RemoteAddr = "192.0.2.1:40000"
	r.AddCookie(&http.Cookie{Name: sessions.CookieName, Value: cookie})
	w := &nullWriter{h: http.Header{}}
	before := e.diskBytes()
	for range n {
		e.clock.Add(step)
		w.reset()
		e.handler.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			t.Fatalf("status %d", w.status)
		}
	}
	return e.diskBytes() - before
}

// Authenticated reads write nothing to the SD card: lastAccessedAt is
// kept in memory and flushed in the background at most once per
// TouchInterval per session.
func TestAuthenticatedRequestsWriteNothing(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	// 1,000 requests over 100 s, as a busy client would send them.
	if n := profileRequests(t, e, c.cookie, 1000, 100*time.Millisecond); n != 0 {
		t.Fatalf("1,000 authenticated requests wrote %d bytes, want 0", n)
	}
	// The background flush then writes the session's lastAccessedAt once.
	before := e.diskBytes()
	if err := e.sm.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := e.diskBytes() - before; n == 0 || n > 2048 {
		t.Fatalf("flush wrote %d bytes, want one record", n)
	}
}

// BenchmarkDiskBytesPer1000Requests reports bytes written to disk by
// 1,000 authenticated reads (disk-B/1000req; target 0), the clock moving
// 100 ms between requests.
func BenchmarkDiskBytesPer1000Requests(b *testing.B) {
	e := newEnv(b)
	c := e.register("ada@example.com", "Ada")
	var total int64
	b.ReportAllocs()
	for b.Loop() {
		total += profileRequests(b, e, c.cookie, 1000, 100*time.Millisecond)
	}
	b.ReportMetric(float64(total)/float64(b.N), "disk-B/1000req")
}

// BenchmarkLogin32ConcurrentPeakMemory runs 32 logins at once at the
// default Argon2 parameters and reports the peak of the Go runtime's
// memory (sampled every millisecond) above what it was before, and the
// growth of the process's peak RSS. The Hasher's limit keeps it near
// NumCPU × 19 MiB whatever the burst.
func BenchmarkLogin32ConcurrentPeakMemory(b *testing.B) {
	e := newEnv(b, func(s *setup) { s.params = DefaultParams() })
	e.register("ada@example.com", "Ada")
	body := `{"email":"ada@example.com","password":"` + testPassword + `"}`
	runtime.GC()
	base := runtimeBytes()
	rss0 := maxRSS()
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if m := runtimeBytes(); m > peak.Load() {
				peak.Store(m)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	round := 0
	b.ReportAllocs()
	for b.Loop() {
		round++
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Go(func() {
				r := httptest.NewRequest("POST", "/v1/auth/login", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:40000", round>>8&255, round&255, i)
				w := &nullWriter{h: http.Header{}}
				e.handler.ServeHTTP(w, r)
				if w.status != http.StatusOK {
					b.Errorf("status %d", w.status)
				}
			})
		}
		wg.Wait()
	}
	close(stop)
	<-sampled
	b.ReportMetric(float64(peak.Load()-base)/(1<<20), "peak-MiB")
	if rss0 >= 0 {
		b.ReportMetric(float64(maxRSS()-rss0)/(1<<20), "maxrss-growth-MiB")
	}
	b.ReportMetric(float64(e.h.hasher.peak.Load()), "max-hashes-at-once")
}

// runtimeBytes is all memory mapped by the Go runtime.
func runtimeBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// BenchmarkLoginFsyncs: 4 clients log in over and over with the default
// Argon2 parameters and the real hash limit (CPUs at once), the session
// store fsyncing each commit; it reports the session store's fsyncs per
// 1,000 logins and its bytes written per login, without the lone-commit
// window (as before) and with the one main gives the session store.
func BenchmarkLoginFsyncs(b *testing.B) {
	for _, c := range []struct {
		name   string
		window time.Duration
	}{{"no-window", 0}, {"lone-window-10ms", 10 * time.Millisecond}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b, func(s *setup) {
				s.params = DefaultParams()
				s.sync = storage.SyncFsync
				s.loneWindow = c.window
				s.cfg.RateLimit = 1 << 20
			})
			e.register("ada@example.com", "Ada")
			body := `{"email":"ada@example.com","password":"` + testPassword + `"}`
			const logins = 200
			var failed atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			before := e.sessStore.Stats()
			for range b.N {
				var next atomic.Int64
				var wg sync.WaitGroup
				for w := range 4 {
					wg.Go(func() {
						wr := &nullWriter{h: http.Header{}}
						for next.Add(1) <= logins {
							r := httptest.NewRequest("POST", "/v1/auth/login", strings.NewReader(body))
							r.RemoteAddr = fmt.Sprintf("10.0.0.%d:40000", w+1)
							r.Header.Set("Content-Type", "application/json")
							wr.reset()
							e.handler.ServeHTTP(wr, r)
							if wr.status != http.StatusOK {
								failed.Add(1)
							}
						}
					})
				}
				wg.Wait()
			}
			b.StopTimer()
			after := e.sessStore.Stats()
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d logins failed", n)
			}
			n := float64(b.N * logins)
			b.ReportMetric(float64(after.Fsyncs-before.Fsyncs)/n*1000, "fsyncs/1000-logins")
			b.ReportMetric(float64(after.BytesWritten-before.BytesWritten)/n, "bytes/login")
		})
	}
}
