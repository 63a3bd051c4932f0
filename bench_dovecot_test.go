package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/mail/mailtest"
)

// dovecotMails is how many mails BenchmarkDovecotFirstSync syncs: the
// shared corpus, repeated, to 60,000 mails.
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
// exec until the connection's itemsSynced reaches the count:
//
//   - hwm-MiB: the binary's peak RSS (VmHWM), against the unit's
//     MemoryHigh of 112 MiB, said NOT MET without failing;
//   - mails/s: mails stored a second of wall time from the connect;
//   - cpu-us/mail: the binary's CPU (user and system) per mail.
func BenchmarkDovecotFirstSync(b *testing.B) {
	corpus := mailtest.Corpus(b)
	bin := buildBinary(b)
	for b.Loop() {
		b.StopTimer()
		dc := imaptest.StartDovecot(b)
		for i := range dovecotMails {
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
		b.StartTimer()
		start := time.Now()
		synced, rec := connectAndWait(b, c, base, dc.Fields(), dovecotMails)
		wall := time.Since(start)
		b.StopTimer()
		if synced != dovecotMails {
			b.Fatalf("synced %d mails, want %d: %v", synced, dovecotMails, rec)
		}
		hwm, rss := procMemory(b, pid)
		cpu := procCPU(b, pid)
		mib := func(n int64) float64 { return float64(n) / (1 << 20) }
		b.ReportMetric(mib(hwm), "hwm-MiB")
		b.ReportMetric(mib(rss), "rss-after-MiB")
		b.ReportMetric(float64(synced)/wall.Seconds(), "mails/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(synced), "cpu-us/mail")
		b.Logf("%d mails in %v (CPU %v), VmHWM %.1f MiB, VmRSS after %.1f MiB", synced, wall, cpu, mib(hwm), mib(rss))
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
