package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/sessions"
)

// countingWriter counts the bytes written to it: the journal's share of
// the SD card.
type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n.Add(int64(len(p))); return len(p), nil }

// BenchmarkLogBytesPerDay is what a day of requests at 10 a second writes
// to the log (the journal, so the SD card) through the real handler stack
// (apiHandler on the real app, LOG_FORMAT=text, LOG_LEVEL=info): 6,000
// requests a round, ten simulated minutes, of which 90 % authenticated
// reads (profile, sessions, items), 5 % without a cookie (401) and 5 % to
// an unknown path (404). bytes/day extrapolates them to 864,000 requests.
// With ACCESS_LOG=summary (the default) it fails above 2 MB a day.
func BenchmarkLogBytesPerDay(b *testing.B) {
	for _, mode := range []string{"summary", "all"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			env := testEnv(dir)
			env["LOG_FORMAT"], env["LOG_LEVEL"], env["ACCESS_LOG"] = "text", "info", mode
			getenv := func(k string) string { return env[k] }
			c, err := loadConfig(getenv)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.devSecrets(); err != nil {
				b.Fatal(err)
			}
			out := &countingWriter{}
			log := newLogger(c, out)
			a, err := openApp(c, getenv, log)
			if err != nil {
				b.Fatal(err)
			}
			defer a.close(slog.New(slog.DiscardHandler))
			var clock atomic.Int64
			clock.Store(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC).UnixNano())
			api, err := apiHandlerClock(a, c, log, func() time.Time { return time.Unix(0, clock.Load()) })
			if err != nil {
				b.Fatal(err)
			}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/v1/auth/register",
				strings.NewReader(`{"email":"pi@example.org","password":"a long enough password","name":"Pi"}`))
			req.Header.Set("Content-Type", "application/json")
			api.ServeHTTP(rec, req)
			if rec.Code != 201 {
				b.Fatalf("register: %d %s", rec.Code, rec.Body)
			}
			var cookie string
			for _, ck := range rec.Result().Cookies() {
				if ck.Name == sessions.CookieName {
					cookie = ck.Value
				}
			}
			paths := []string{"/v1/user/profile", "/v1/user/sessions", "/v1/items"}
			const perRound = 6000
			b.ReportAllocs()
			b.ResetTimer()
			var logged int64
			for range b.N {
				api.FlushAccessLog()
				before := out.n.Load()
				for i := range perRound {
					clock.Add(int64(100 * time.Millisecond))
					r := httptest.NewRequest("GET", paths[i%len(paths)], nil)
					want := 200
					switch i % 20 {
					case 0:
						want = 401
					case 1:
						r = httptest.NewRequest("GET", "/nothing-here", nil)
						want = 404
					}
					if want != 401 {
						r.AddCookie(&http.Cookie{Name: sessions.CookieName, Value: cookie})
					}
					w := httptest.NewRecorder()
					api.ServeHTTP(w, r)
					if w.Code != want {
						b.Fatalf("GET %s: got %d, want %d", r.URL.Path, w.Code, want)
					}
				}
				api.FlushAccessLog()
				logged += out.n.Load() - before
			}
			b.StopTimer()
			perDay := float64(logged) / float64(b.N) / perRound * 864_000
			b.ReportMetric(perDay/1e6, "MB/day")
			b.ReportMetric(float64(logged)/float64(b.N)/perRound, "bytes/request")
			if mode == "summary" && perDay > 2e6 {
				b.Errorf("ACCESS_LOG=summary logs %.2f MB a day at 10 requests a second, over 2 MB", perDay/1e6)
			}
		})
	}
}
