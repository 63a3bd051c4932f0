package main

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/auth"
	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/storage"
)

// idleItems is how many items BenchmarkIdleGC's store holds
// (a real Gmail of 100,000 mails).
const idleItems = 100_000

// idleWindow is how long BenchmarkIdleGC counts the collector's cycles.
const idleWindow = 60 * time.Second

// BenchmarkIdleGC builds a store of one user with a Gmail connection of
// idleItems mails through the packages, lets the real binary index them
// (its catch-up at start), restarts it with the production defaults and
// counts the collector's cycles (GODEBUG=gctrace=1, one line a cycle)
// during idleWindow of idle, 10 s after it listens: gc-cycles-60s, at
// most 2 (the runtime forces one every two minutes even when nothing
// allocates). idle-rss-MB is its RSS at the end. The Gmail connection's
// last sync is now, so that no poll falls in the window.
func BenchmarkIdleGC(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc/PID/status")
	}
	bin := buildBinary(b)
	dir := b.TempDir()
	buildIdleStore(b, dir, idleItems)
	env := piEnv(dir)
	first := startLogged(b, bin, env)
	first.waitFor(b, "search index caught up", 10*time.Minute)
	first.stop(b)
	b.ResetTimer()
	for range b.N {
		env["GODEBUG"] = "gctrace=1"
		p := startLogged(b, bin, env)
		time.Sleep(10 * time.Second)
		before := p.gcs.Load()
		time.Sleep(idleWindow)
		cycles := p.gcs.Load() - before
		_, rss := procMemory(b, p.cmd.Process.Pid)
		p.stop(b)
		b.Logf("%d items: %d collector cycles in %s of idle, RSS %.1f MB", idleItems, cycles, idleWindow, float64(rss)/1e6)
		b.ReportMetric(float64(cycles), "gc-cycles-60s")
		b.ReportMetric(float64(rss)/1e6, "idle-rss-MB")
		if cycles > 2 {
			b.Logf("NOT MET: %d collector cycles in %s of idle, over 2", cycles, idleWindow)
		}
	}
}

// buildIdleStore writes into dir, through the app's own packages, one
// user with a Gmail connection synced a moment ago holding n mails (no
// content files: their metadata only).
func buildIdleStore(b *testing.B, dir string, n int) {
	b.Helper()
	env := piEnv(dir)
	c, err := loadConfig(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	s, err := openStores(c, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer s.closeStores()
	now := time.Now().UTC()
	userID := "00000000-0000-4000-8000-000000000001"
	if err := s.main.Commit(s.users.InsertOp(auth.User{ID: userID, Email: "idle@example.org", Name: "Idle",
		Role: auth.RoleUser, PasswordHash: "x", CreatedAt: now, UpdatedAt: now})); err != nil {
		b.Fatal(err)
	}
	rec, err := s.records.Connect(userID, "gmail", integrations.Credentials{AccessToken: "a", RefreshToken: "r"})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.main.Commit(s.records.ProgressOp(rec.ID, records.Progress{Succeeded: true, Items: int64(n), Finished: true}, now)); err != nil {
		b.Fatal(err)
	}
	owner := items.Owner{UserID: userID, RecordID: rec.ID, Integration: rec.Integration}
	var ops []storage.Op
	for i := range n {
		it, err := s.items.NewItem(owner, &integrations.Item{
			ProviderID: fmt.Sprintf("18c%013x", i*7919),
			Title:      fmt.Sprintf("Re: the %s of week %d, about %s", idleWords[i%len(idleWords)], i%52, idleWords[(i/7)%len(idleWords)]),
			From:       fmt.Sprintf("Sender %d <sender%d@example.com>", i%300, i%300),
			To:         []string{"idle@example.org"},
			Date:       now.Add(-time.Duration(i) * time.Minute),
			Size:       int64(4000 + i%50000),
		}, now)
		if err != nil {
			b.Fatal(err)
		}
		ops = append(ops, s.items.InsertOp(it))
		if len(ops) == 1000 || i == n-1 {
			if err := s.main.Commit(ops...); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
}

var idleWords = strings.Fields("budget invoice holiday meeting report garden concert review migration backup tickets dinner")

// logged is a binary started by startLogged: its log lines are read as
// they come, counting the collector's.
type logged struct {
	cmd   *exec.Cmd
	addr  string
	gcs   atomic.Int64
	lines chan string // the service's own lines, dropped when nobody reads
}

// startLogged starts bin with env and returns once it listens.
func startLogged(b *testing.B, bin string, env map[string]string) *logged {
	b.Helper()
	p := &logged{cmd: exec.Command(bin), lines: make(chan string, 64)}
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "gc ") {
				p.gcs.Add(1)
				continue
			}
			if i := strings.Index(line, `"addr":"`); i >= 0 && strings.Contains(line, `"msg":"listening"`) {
				a := line[i+8:]
				addr <- a[:strings.IndexByte(a, '"')]
			}
			select {
			case p.lines <- line:
			default:
			}
		}
		close(p.lines)
	}()
	select {
	case p.addr = <-addr:
	case <-time.After(5 * time.Minute):
		b.Fatal("the binary did not listen within 5 minutes")
	}
	return p
}

// waitFor waits until the binary logs a line containing msg.
func (p *logged) waitFor(b *testing.B, msg string, limit time.Duration) {
	b.Helper()
	deadline := time.After(limit)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				b.Fatalf("the binary stopped before logging %q", msg)
			}
			if strings.Contains(line, msg) {
				return
			}
		case <-deadline:
			b.Fatalf("no %q within %s", msg, limit)
		}
	}
}

// stop stops the binary as systemd would (SIGTERM) and waits for it.
func (p *logged) stop(b *testing.B) {
	b.Helper()
	p.cmd.Process.Signal(os.Interrupt)
	p.cmd.Wait()
}

// BenchmarkIdleRSSEmpty starts the real binary on an empty data directory
// with the production defaults and reports its RSS after 10 s of idle
// (idle-rss-MB, at most 12), split into the binary's file pages
// (file-MB) and its anonymous memory (anon-MB), and its peak from exec
// (hwm-MB).
func BenchmarkIdleRSSEmpty(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc/PID/status")
	}
	bin := buildBinary(b)
	b.ResetTimer()
	for range b.N {
		cmd, _ := startBinary(b, bin, piEnv(b.TempDir()))
		time.Sleep(10 * time.Second)
		st := procStatus(b, cmd.Process.Pid)
		cmd.Process.Kill()
		cmd.Wait()
		mb := func(k string) float64 { return float64(st[k]) * 1024 / 1e6 }
		b.Logf("idle RSS %.1f MB (file %.1f, anon %.1f), peak %.1f MB", mb("VmRSS"), mb("RssFile"), mb("RssAnon"), mb("VmHWM"))
		b.ReportMetric(mb("VmRSS"), "idle-rss-MB")
		b.ReportMetric(mb("RssFile"), "file-MB")
		b.ReportMetric(mb("RssAnon"), "anon-MB")
		b.ReportMetric(mb("VmHWM"), "hwm-MB")
		if mb("VmRSS") > 12 {
			b.Logf("NOT MET: the empty service's idle RSS is %.1f MB, over 12 MB", mb("VmRSS"))
		}
	}
}

// procStatus reads the kB fields of /proc/PID/status.
func procStatus(b *testing.B, pid int) map[string]int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		var n int64
		fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(v, " kB")), &n)
		out[k] = n
	}
	return out
}
