package imap_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// The IMAP sync's figures: a folder of 5,000 corpus mails synced from
// imaptest by the real Syncer into a real store (fsync on), the time and
// the peak resident memory of the process that syncs, and what a second
// sync with no change costs. Resident memory is the kernel's VmHWM,
// which a process cannot reset, so the sync runs in a child process (this
// test binary again, TestSyncerBenchChild) while the server, with its
// copy of the mail, stays in the parent and does not count.

// benchChildEnv carries the child's configuration (benchChild, JSON).
const benchChildEnv = "IMAP_SYNCER_BENCH_CHILD"

type benchChild struct {
	Host, Port, CA, Dir string
}

// countingIndexer is an Indexer that only counts, as the sync hands the
// search index each batch's texts.
type countingIndexer struct{ indexed, removed atomic.Int64 }

func (x *countingIndexer) Index(_ string, its []syncer.IndexedItem) { x.indexed.Add(int64(len(its))) }
func (x *countingIndexer) Remove(_ string, ids []string)            { x.removed.Add(int64(len(ids))) }
func (x *countingIndexer) RemoveRecord(string, string)              {}
func (x *countingIndexer) RemoveUser(string)                        {}

func BenchmarkSyncerIMAP5000(b *testing.B) {
	const messages = 5000
	mails := corpusMessages(b, messages)
	srv := imaptest.New(b)
	for i, m := range mails {
		srv.Append("INBOX", m, epoch.Add(time.Duration(i)*time.Minute))
	}
	var size int64
	for _, m := range mails {
		size += int64(len(m))
	}
	mails = nil
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		cfg, _ := json.Marshal(benchChild{Host: srv.Host, Port: srv.Port, CA: srv.CAPEM(), Dir: b.TempDir()})
		cmd := exec.Command(os.Args[0], "-test.run=^TestSyncerBenchChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), benchChildEnv+"="+string(cfg))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		srv.ResetStats()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		out := bufio.NewReader(stdout)
		// read returns the fields of the child's next line starting with
		// prefix, skipping the test framework's lines.
		read := func(prefix string) []string {
			for {
				line, err := out.ReadString('\n')
				if err != nil {
					cmd.Process.Kill()
					cmd.Wait()
					b.Fatalf("child: %v before %q; stderr:\n%s", err, prefix, stderr.String())
				}
				if f := strings.Fields(line); len(f) > 0 && f[0] == prefix {
					return f[1:]
				}
			}
		}
		b.StartTimer()
		first := read("first")
		b.StopTimer()
		firstStats := srv.Stats()
		srv.ResetStats()
		io.WriteString(stdin, "again\n")
		second := read("second")
		secondStats := srv.Stats()
		rss := read("rss")
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatalf("child: %v; stderr:\n%s", err, stderr.String())
		}

		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				b.Fatalf("child said %q: %v", s, err)
			}
			return v
		}
		if items := num(first[1]); items != messages || firstStats.Bodies != messages {
			b.Fatalf("first sync: %v items stored, %d downloaded; want %d", items, firstStats.Bodies, messages)
		}
		if items := num(second[1]); items != 0 {
			b.Fatalf("second sync stored %v items, want 0", items)
		}
		folderCmds := secondStats.Commands["EXAMINE"] + secondStats.Commands["UID SEARCH"] + secondStats.Commands["UID FETCH"]
		b.ReportMetric(num(first[0]), "s/first-sync")
		b.ReportMetric(float64(size)/num(first[0])/(1<<20), "MB/s")
		b.ReportMetric(num(rss[0])/(1<<20), "peak-RSS-MB")
		b.ReportMetric(num(rss[1])/(1<<20), "peak-RSS-after-first-MB")
		b.ReportMetric(num(second[0]), "s/second-sync")
		b.ReportMetric(float64(folderCmds), "2nd-sync-folder-cmds")
		b.ReportMetric(float64(secondStats.Bodies+secondStats.Headers+secondStats.Envelopes), "2nd-sync-downloads")
		b.StartTimer()
	}
}

// TestSyncerBenchChild is BenchmarkSyncerIMAP5000's child process, not a
// test of its own: it syncs, says "first <seconds> <items>", waits for a
// line on stdin, syncs again, says "second <seconds> <items>", then "rss
// <VmHWM bytes> <VmHWM after the first sync>".
func TestSyncerBenchChild(t *testing.T) {
	raw := os.Getenv(benchChildEnv)
	if raw == "" {
		t.Skip("only runs as BenchmarkSyncerIMAP5000's child")
	}
	var cfg benchChild
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	v, err := vault.New(bytes.Repeat([]byte{4}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	var now atomic.Int64
	now.Store(time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	reg, err := integrations.NewRegistry(imap.Dialer{}.Definition())
	if err != nil {
		t.Fatal(err)
	}
	st := storage.New(filepath.Join(cfg.Dir, "main"), storage.Options{Now: clock})
	recs := records.New(st, v, clock)
	ix := &countingIndexer{}
	s, err := syncer.New(syncer.Config{Records: recs, Items: items.New(st, v, filepath.Join(cfg.Dir, "items")), Tasks: syncer.NewTasks(st, v),
		Registry: reg, Now: clock, Indexer: ix})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fields := map[string]string{"host": cfg.Host, "port": cfg.Port, "username": imaptest.Username,
		"password": imaptest.Password, "tls": "true", "certificate": cfg.CA}
	rec, err := recs.Connect("u1", imap.Domain, integrations.Credentials{Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	sync := func() (time.Duration, int64) {
		before, _ := recs.ByID(rec.ID)
		start := time.Now()
		if err := s.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		after, _ := recs.ByID(rec.ID)
		if after.Status != records.StatusConnected || after.LastSyncAt == nil {
			t.Fatalf("record after a sync: %s, %q", after.Status, after.LastError)
		}
		return elapsed, after.ItemsSynced - before.ItemsSynced
	}
	d, n := sync()
	hwm := procStatus("VmHWM")
	fmt.Printf("first %f %d\n", d.Seconds(), n)
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	now.Add(int64(syncer.DefaultPollInterval + time.Second))
	d, n = sync()
	fmt.Printf("second %f %d\n", d.Seconds(), n)
	fmt.Printf("rss %d %d\n", procStatus("VmHWM"), hwm)
}

// procStatus returns a field of /proc/self/status in bytes, or -1 where
// there is none (not Linux).
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return -1
		}
		return kb << 10
	}
	return -1
}
