package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/auth"
	"searchsvc/storage"
)

// Sizes of the store BenchmarkPiMemory builds: a household's Pi after
// years, and more.
const (
	piUsers    = 10_000
	piSessions = 100_000
	piUsed     = 2_000 // sessions the authenticated load uses
	piBurst    = 32    // concurrent logins
	piPassword = "correct horse battery staple"
)

// buildBinary builds the service into a temporary directory.
func buildBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "searchsvc")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// piEnv is the environment of the binary in BenchmarkPiMemory: production
// settings but plain http on loopback, fixed secrets, and no fsync (the
// benchmark measures memory; the machine's disk is shared).
func piEnv(dir string) map[string]string {
	return map[string]string{
		"PATH":            os.Getenv("PATH"),
		"LISTEN_ADDR":     "127.0.0.1:0",
		"DATA_DIR":        dir,
		"SESSION_SECURE":  "false",
		"SESSION_SECRET":  strings.Repeat("s", 48),
		"CREDENTIALS_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"STORE_SYNC":      "none",
		"LOG_FORMAT":      "json",
		"LOG_LEVEL":       "info",
	}
}

// buildPiStore writes piUsers users (all with one precomputed hash of
// piPassword, so that no Argon2 runs per user) and piSessions sessions
// into dir through the app's own packages, as openApp wires them, and
// returns the ids of piUsed sessions, each of another user, and the
// emails of the users.
func buildPiStore(b *testing.B, dir string) (used []string, emails []string) {
	b.Helper()
	env := piEnv(dir)
	getenv := func(k string) string { return env[k] }
	c, err := loadConfig(getenv)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	a, err := openApp(c, getenv, log)
	if err != nil {
		b.Fatal(err)
	}
	defer a.close(log)
	h, err := auth.NewHasher(auth.DefaultParams(), 1)
	if err != nil {
		b.Fatal(err)
	}
	hash, err := h.Hash(context.Background(), piPassword)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	ids := make([]string, piUsers)
	emails = make([]string, piUsers)
	var ops []storage.Op
	for i := range piUsers {
		ids[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		emails[i] = fmt.Sprintf("user%05d@example.org", i)
		ops = append(ops, a.users.InsertOp(auth.User{ID: ids[i], Email: emails[i], Name: fmt.Sprintf("User %d", i),
			Role: auth.RoleUser, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}))
		if len(ops) == 1000 {
			if err := a.mainStore.Commit(ops...); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	used = make([]string, piUsed)
	var wg sync.WaitGroup
	var failed atomic.Value
	per := piSessions / piUsers
	for w := range 8 {
		wg.Go(func() {
			for u := w; u < piUsers; u += 8 {
				for k := range per {
					ip := netip.AddrFrom4([4]byte{127, 0, 0, 1}) // where the load comes from: no address warnings
					s, err := a.sessions.Create(ids[u], ip, "Mozilla/5.0 (X11; Linux aarch64) Firefox/140.0", "password")
					if err != nil {
						failed.Store(err)
						return
					}
					if k == 0 && u < piUsed {
						used[u] = s.ID
					}
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return used, emails
}

// startBinary starts bin with env and returns it and its address once it
// listens. It is killed when the benchmark ends.
func startBinary(b *testing.B, bin string, env map[string]string) (*exec.Cmd, string) {
	b.Helper()
	cmd := exec.Command(bin)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	br := bufio.NewReader(stderr)
	addr := ""
	for addr == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatalf("the binary stopped before listening: %v", err)
		}
		if i := strings.Index(line, `"addr":"`); i >= 0 && strings.Contains(line, `"msg":"listening"`) {
			addr = line[i+8:]
			addr = addr[:strings.IndexByte(addr, '"')]
		}
	}
	go io.Copy(io.Discard, br)
	return cmd, addr
}

// resetPeak resets the process's VmHWM to its current RSS, so the next
// reading is the peak since now.
func resetPeak(b *testing.B, pid int) {
	b.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		b.Fatalf("reset VmHWM: %v", err)
	}
}

// BenchmarkPiMemory measures the real binary's resident memory (VmRSS and
// VmHWM from /proc/PID/status) with a store of 10,000 users and 100,000
// sessions, built directly through the packages:
//
//   - start-rss-MB: right after it listens (the replay's garbage given
//     back);
//   - load-rss-MB: after 20 s of authenticated GET /v1/user/profile from 4
//     clients over 2,000 of the sessions;
//   - burst-peak-MB, burst-extra-MB: the peak while 32 logins arrive at
//     once (each from its own loopback address; those beyond the hash
//     queue are refused 503 at once: logins-ok, logins-503), and that peak over the
//     RSS before them, against the bound of CPUs × 19 MiB (docs/security.md, "Passwords");
//     burst-s: how long until the last of them is answered;
//   - burst-after-MB, burst-20s-MB: RSS when the last login is answered
//     (and the hasher has gone idle), and 20 s later.
//
// It says NOT MET, without failing, if the start RSS passes 48 MB, the
// load RSS 64 MB, or the burst's extra the bound.
func BenchmarkPiMemory(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc/PID/status")
	}
	bin := buildBinary(b)
	dir := b.TempDir()
	used, emails := buildPiStore(b, dir)
	b.ResetTimer()
	for range b.N {
		cmd, addr := startBinary(b, bin, piEnv(dir))
		pid := cmd.Process.Pid
		base := "http://" + addr
		_, start := procMemory(b, pid)

		// 20 s of authenticated reads, 4 clients.
		var served, failed atomic.Int64
		end := time.Now().Add(20 * time.Second)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				client := &http.Client{Timeout: 10 * time.Second}
				for i := w; time.Now().Before(end); i += 4 {
					req, _ := http.NewRequest("GET", base+"/v1/user/profile", nil)
					req.AddCookie(&http.Cookie{Name: "svc_session", Value: used[i%len(used)]})
					res, err := client.Do(req)
					if err != nil {
						failed.Add(1)
						continue
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						failed.Add(1)
						continue
					}
					served.Add(1)
				}
			})
		}
		wg.Wait()
		if n := failed.Load(); n > 0 {
			b.Fatalf("%d authenticated reads failed (%d served)", n, served.Load())
		}
		_, load := procMemory(b, pid)

		// 32 logins at once.
		resetPeak(b, pid)
		_, before := procMemory(b, pid)
		var ok, busy, bad atomic.Int64
		burstStart := time.Now()
		for i := range piBurst {
			wg.Go(func() {
				c := clientFrom(fmt.Sprintf("127.0.1.%d", i+1))
				switch s := status(c, "POST", base+"/v1/auth/login",
					`{"email":"`+emails[i]+`","password":"`+piPassword+`"}`); s {
				case 200:
					ok.Add(1)
				case 503: // the hash queue is full: refused at once, as designed
					busy.Add(1)
				default:
					bad.Add(1)
				}
			})
		}
		wg.Wait()
		burst := time.Since(burstStart)
		if n := bad.Load(); n > 0 {
			b.Fatalf("%d of %d logins failed", n, piBurst)
		}
		time.Sleep(100 * time.Millisecond) // the idle hasher's FreeOSMemory runs after the last answer
		peak, after := procMemory(b, pid)
		time.Sleep(20 * time.Second)
		_, later := procMemory(b, pid)

		mb := func(n int64) float64 { return float64(n) / 1e6 }
		b.Logf("start %.1f MB, load %.1f MB, burst peak %.1f MB (+%.1f), after %.1f MB, 20 s later %.1f MB",
			mb(start), mb(load), mb(peak), mb(peak-before), mb(after), mb(later))
		b.ReportMetric(mb(start), "start-rss-MB")
		b.ReportMetric(mb(load), "load-rss-MB")
		b.ReportMetric(float64(served.Load())/20, "reads/s")
		b.ReportMetric(float64(ok.Load()), "logins-ok")
		b.ReportMetric(float64(busy.Load()), "logins-503")
		b.ReportMetric(burst.Seconds(), "burst-s")
		b.ReportMetric(mb(peak), "burst-peak-MB")
		b.ReportMetric(mb(peak-before), "burst-extra-MB")
		b.ReportMetric(mb(after), "burst-after-MB")
		b.ReportMetric(mb(later), "burst-20s-MB")
		// The bounds are said, not failed on: the figure is reported so
		// that `make bench` goes on to the benchmarks after this one.
		if start > 48e6 {
			b.Logf("NOT MET: RSS after start %.1f MB, over 48 MB", mb(start))
		}
		if load > 64e6 {
			b.Logf("NOT MET: RSS after 20 s of load %.1f MB, over 64 MB", mb(load))
		}
		if bound := int64(runtime.NumCPU()) * 19 << 20; peak-before > bound {
			b.Logf("NOT MET: a burst of %d logins took %.1f MB over its start, over CPUs × 19 MiB = %.1f MB", piBurst, mb(peak-before), mb(bound))
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
}
