package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/mail/mailtest"
)

// dovecotMails is how many mails BenchmarkDovecotFirstSync syncs: the
// shared corpus, repeated, to 60,000 mails (DOVECOT_BENCH_MAILS for
// fewer, for a quicker look or a profile).
const dovecotMails = 60_000

// memoryHighMiB is searchsvc.service's MemoryHigh=112M, where the kernel
// starts reclaiming the service's pages hard.
const memoryHighMiB = 112

// BenchmarkDovecotFirstSync is a new user's first sync of a big mailbox
// from a local IMAP server: Debian's Dovecot holding 60,000 mails (the
// shared corpus repeated, each copy with fresh Message-IDs, written into
// its maildir), and the real binary with the default settings (as
// searchsvc.service runs it, on plain http on loopback) connected to it
// through POST /v1/user-integrations/imap/credentials. It reports, from
// exec until every mail is searchable (the search index holds it, as GET
// /v1/admin/metrics counts its documents):
//
//   - hwm-MiB: the binary's peak RSS (VmHWM), against the unit's
//     MemoryHigh of 112 MiB, said NOT MET without failing;
//   - mails/s: mails searchable a second of wall time from the connect,
//     and stored-mails/s those the connection's itemsSynced counts;
//   - cpu-us/mail: the binary's CPU (user and system) per mail until all
//     are searchable, and sys-cpu-us/mail its system part (files,
//     fsyncs, sockets).
//
// With DOVECOT_BENCH_PROFILE set to a file name, and perf installed, it
// records the binary's CPU profile during the sync into that file (perf
// record -g; read it with perf report -i FILE): the sync runs in the
// binary, out of reach of go test's -cpuprofile.
func BenchmarkDovecotFirstSync(b *testing.B) {
	corpus := mailtest.Corpus(b)
	bin := buildBinary(b)
	n := dovecotCount(b)
	for b.Loop() {
		b.StopTimer()
		dc := imaptest.StartDovecot(b)
		for i := range n {
			dc.Deliver(b, freshMessageID(corpus[i%len(corpus)], i))
		}
		env := piEnv(b.TempDir())
		delete(env, "STORE_SYNC") // the default: fsync
		env["ALLOW_PRIVATE_TARGETS"] = "true"
		cmd, addr := startBinary(b, bin, env)
		pid := cmd.Process.Pid
		base := "http://" + addr
		c := clientFrom("127.0.0.1")
		signUp(b, c, base, "dove@example.org") // the client's jar keeps the session
		stopProfile := startPerf(b, pid)
		b.StartTimer()
		start := time.Now()
		synced, rec := connectAndWait(b, c, base, dc.Fields(), n)
		stored := time.Since(start)
		if synced != n {
			b.Fatalf("synced %d mails, want %d: %v", synced, n, rec)
		}
		waitSearchable(b, c, base, n)
		wall := time.Since(start)
		b.StopTimer()
		stopProfile()
		hwm, rss := procMemory(b, pid)
		user, sys := procCPUSplit(b, pid)
		cpu := user + sys
		mib := func(n int64) float64 { return float64(n) / (1 << 20) }
		b.ReportMetric(mib(hwm), "hwm-MiB")
		b.ReportMetric(mib(rss), "rss-after-MiB")
		b.ReportMetric(float64(synced)/wall.Seconds(), "mails/s")
		b.ReportMetric(float64(synced)/stored.Seconds(), "stored-mails/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(synced), "cpu-us/mail")
		b.ReportMetric(float64(sys.Microseconds())/float64(synced), "sys-cpu-us/mail")
		b.Logf("%d mails stored in %v, searchable in %v (CPU %v, of it system %v), VmHWM %.1f MiB, VmRSS after %.1f MiB",
			synced, stored, wall, cpu, sys, mib(hwm), mib(rss))
		if mib(hwm) > memoryHighMiB {
			b.Logf("NOT MET: VmHWM %.1f MiB is over MemoryHigh=%d MiB", mib(hwm), memoryHighMiB)
		}
		b.StartTimer()
	}
}

// connectAndWait connects the IMAP account of fields and polls GET
// /v1/user-integrations, twice a second, until its itemsSynced reaches n
// or the sync stops on an error; it returns the count and the record.
func connectAndWait(b *testing.B, c *http.Client, base string, fields map[string]string, n int) (int, map[string]any) {
	b.Helper()
	body, _ := json.Marshal(map[string]any{"fields": fields})
	if s := status(c, "POST", base+"/v1/user-integrations/imap/credentials", string(body)); s != 201 {
		b.Fatalf("connect Dovecot: %d", s)
	}
	deadline := time.Now().Add(30 * time.Minute)
	for {
		time.Sleep(500 * time.Millisecond)
		res, err := c.Get(base + "/v1/user-integrations")
		if err != nil {
			b.Fatal(err)
		}
		var m struct{ Results []map[string]any }
		err = json.NewDecoder(res.Body).Decode(&m)
		res.Body.Close()
		if err != nil || len(m.Results) != 1 {
			b.Fatalf("GET /v1/user-integrations: %d %v %v", res.StatusCode, err, m)
		}
		rec := m.Results[0]
		synced, _ := rec["itemsSynced"].(float64)
		if int(synced) >= n || rec["status"] == "error" || rec["status"] == "needs_reauth" || time.Now().After(deadline) {
			return int(synced), rec
		}
	}
}

// dovecotCount is dovecotMails, or DOVECOT_BENCH_MAILS.
func dovecotCount(b *testing.B) int {
	b.Helper()
	v := os.Getenv("DOVECOT_BENCH_MAILS")
	if v == "" {
		return dovecotMails
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("DOVECOT_BENCH_MAILS=%q: want a positive number", v)
	}
	return n
}

// waitSearchable polls GET /v1/admin/metrics (the client's user is the
// first, so the administrator), twice a second, until the search index
// holds n documents.
func waitSearchable(b *testing.B, c *http.Client, base string, n int) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Minute)
	for {
		res, err := c.Get(base + "/v1/admin/metrics")
		if err != nil {
			b.Fatal(err)
		}
		var m struct {
			Result struct{ Search struct{ Documents int } }
		}
		err = json.NewDecoder(res.Body).Decode(&m)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("GET /v1/admin/metrics: %d %v", res.StatusCode, err)
		}
		if m.Result.Search.Documents >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the index holds %d documents after 30 minutes, want %d", m.Result.Search.Documents, n)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// startPerf starts perf record on process pid when DOVECOT_BENCH_PROFILE
// names a file, and returns what stops it.
func startPerf(b *testing.B, pid int) (stop func()) {
	b.Helper()
	out := os.Getenv("DOVECOT_BENCH_PROFILE")
	if out == "" {
		return func() {}
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		b.Fatalf("DOVECOT_BENCH_PROFILE is set but perf is not installed (apt-get install linux-perf): %v", err)
	}
	cmd := exec.Command(perf, "record", "-F", "499", "-g", "-o", out, "-p", strconv.Itoa(pid))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Second) // perf attaches
	return func() {
		cmd.Process.Signal(os.Interrupt) // perf writes the file on SIGINT
		cmd.Wait()
	}
}

// freshMessageID returns raw with its Message-ID replaced by one unique
// to copy i, so that repeated copies of the corpus are distinct mails.
func freshMessageID(raw []byte, i int) []byte {
	head, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		head, body = raw, nil
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "Message-ID: <dovecot-bench-%d@example.org>\n", i)
	skipping := false
	for line := range strings.Lines(string(head)) {
		if skipping && (line[0] == ' ' || line[0] == '\t') {
			continue // a folded Message-ID
		}
		skipping = len(line) > 11 && strings.EqualFold(line[:11], "message-id:")
		if !skipping {
			out.WriteString(line)
		}
	}
	if !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		out.WriteByte('\n')
	}
	out.WriteByte('\n')
	out.Write(body)
	return out.Bytes()
}
