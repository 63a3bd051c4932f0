package syncer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/fakemail"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// The figures of the sync: how long 5,000 messages take to sync from a
// Gmail-like API over HTTP and the peak resident memory meanwhile, and
// the memory 50,000 stored items cost once the store is open. Resident
// memory is read from /proc/self/status (VmRSS; VmHWM, the peak, after
// resetting it through /proc/self/clear_refs), so the figures are Linux's;
// elsewhere they are reported as -1. Both benchmarks hold real files in a
// temporary directory: the sync fsyncs as in production.

// procStatus returns a field of /proc/self/status in bytes, or -1.
func benchProcStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
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

// resetPeakRSS makes VmHWM start again from the current VmRSS.
func benchResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

func benchVault(b *testing.B, fill byte) *vault.Vault {
	v, err := vault.New(bytes.Repeat([]byte{fill}, vault.KeySize))
	if err != nil {
		b.Fatal(err)
	}
	return v
}

func benchMB(n int64) float64 {
	if n < 0 {
		return -1
	}
	return float64(n) / (1 << 20)
}

// fakeBody is a message body of about n bytes of varied words, so that it
// compresses like text rather than like a repeated string.
func fakeBody(k, n int) string {
	words := []string{"meeting", "invoice", "tomorrow", "report", "attached", "please", "review", "thanks",
		"regards", "project", "schedule", "update", "question", "budget", "draft", "deadline", "call",
		"weekend", "family", "photos", "travel", "booking", "confirmation", "password", "account"}
	var b strings.Builder
	x := uint32(k*2654435761 + 1)
	for b.Len() < n {
		x = x*1664525 + 1013904223
		b.WriteString(words[x>>16%uint32(len(words))])
		if x&7 == 0 {
			fmt.Fprintf(&b, " %d", x>>20)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// BenchmarkSync5000 syncs a mailbox of 5,000 messages (bodies of about
// 4 KiB) from the fake Gmail-like API over httptest, with the static-token
// fake integration (the Gmail integration's tasks are not written yet),
// two workers, pages of 100 and fsync on.
func BenchmarkSync5000(b *testing.B) {
	const messages = 5000
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		m := fakemail.New(b, nil)
		m.PageSize = 100
		m.Fill("box", messages, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		for i := range m.Boxes["box"] {
			m.Boxes["box"][i].Body = fakeBody(i, 4096)
		}
		reg, err := integrations.NewRegistry(fakemail.ManualDefinition(m))
		if err != nil {
			b.Fatal(err)
		}
		st := storage.New(filepath.Join(dir, "main"), storage.Options{})
		v := benchVault(b, 3)
		recs := records.New(st, v, nil)
		s, err := New(Config{Records: recs, Items: items.New(st, v, filepath.Join(dir, "items")), Tasks: NewTasks(st, v),
			Registry: reg, Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Open(); err != nil {
			b.Fatal(err)
		}
		rec, err := recs.Connect("u1", fakemail.ManualDomain, integrations.Credentials{Fields: map[string]string{"mailbox": "box"}})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		debug.FreeOSMemory()
		before := benchProcStatus("VmRSS")
		benchResetPeakRSS()
		b.StartTimer()

		start := time.Now()
		if err := s.RunOnce(context.Background()); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)

		b.StopTimer()
		peak := benchProcStatus("VmHWM")
		got, _ := recs.ByID(rec.ID)
		if got.ItemsSynced != messages || got.Status != records.StatusConnected {
			b.Fatalf("synced %d items, status %s, want %d", got.ItemsSynced, got.Status, messages)
		}
		stats := st.Stats()
		b.ReportMetric(elapsed.Seconds(), "s/sync")
		b.ReportMetric(benchMB(peak), "peak-RSS-MB")
		b.ReportMetric(benchMB(peak-before), "peak-RSS-growth-MB")
		b.ReportMetric(float64(stats.Batches), "log-lines")
		b.ReportMetric(float64(stats.BytesWritten)/messages, "log-B/msg")
		b.ReportMetric(float64(benchDirSize(filepath.Join(dir, "items")))/messages, "content-B/msg")
		st.Close()
		b.StartTimer()
	}
}

func benchDirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// BenchmarkOpen50000Items opens a main store holding 50,000 items of one
// record and reports the time, the heap the items hold, and the process's
// resident memory after the open.
func BenchmarkOpen50000Items(b *testing.B) {
	const nItems = 50000
	dir := b.TempDir()
	vault := benchVault(b, 4)
	st := storage.New(dir, storage.Options{Sync: storage.SyncNone})
	recs := records.New(st, vault, nil)
	s, err := New(Config{Records: recs, Items: items.New(st, vault, b.TempDir()), Tasks: NewTasks(st, vault),
		Registry: &integrations.Registry{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Open(); err != nil {
		b.Fatal(err)
	}
	rec, err := recs.Connect("6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "gmail", integrations.Credentials{AccessToken: "a", RefreshToken: "r"})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ops []storage.Op
	for i := range nItems {
		it, err := s.items.NewItem(items.Owner{UserID: rec.UserID, RecordID: rec.ID, Integration: rec.Integration}, &integrations.Item{
			ProviderID: fmt.Sprintf("18c%013x", i*7919),
			Title:      fmt.Sprintf("Re: %s about the %s, week %d", fakeBody(i, 20), fakeBody(i+1, 12), i%52),
			From:       fmt.Sprintf("Sender Name %d <sender%d@example.com>", i%300, i%300),
			To:         []string{"me@example.com"},
			Date:       now.Add(-time.Duration(i) * time.Minute),
			Size:       int64(4000 + i%50000),
		}, now)
		if err != nil {
			b.Fatal(err)
		}
		ops = append(ops, s.items.InsertOp(it))
		if len(ops) == 1000 {
			if err := st.Commit(ops...); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	fileBytes := benchDirSize(dir)

	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heapBefore, rssBefore := ms.HeapAlloc, benchProcStatus("VmRSS")
		benchResetPeakRSS()
		b.StartTimer()

		start := time.Now()
		st := storage.New(dir, storage.Options{Sync: storage.SyncNone})
		recs := records.New(st, vault, nil)
		s, err := New(Config{Records: recs, Items: items.New(st, vault, b.TempDir()), Tasks: NewTasks(st, vault),
			Registry: &integrations.Registry{}})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Open(); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)

		b.StopTimer()
		peak := benchProcStatus("VmHWM")
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapAfter := ms.HeapAlloc
		debug.FreeOSMemory()
		rssAfter := benchProcStatus("VmRSS")
		if n := s.items.Len(); n != nItems {
			b.Fatalf("open found %d items, want %d", n, nItems)
		}
		b.ReportMetric(elapsed.Seconds(), "s/open")
		b.ReportMetric(float64(int64(heapAfter)-int64(heapBefore))/nItems, "heap-B/item")
		b.ReportMetric(benchMB(rssAfter), "RSS-after-open-MB")
		b.ReportMetric(benchMB(rssAfter-rssBefore), "RSS-growth-MB")
		b.ReportMetric(benchMB(peak), "peak-RSS-MB")
		b.ReportMetric(float64(fileBytes)/nItems, "log-B/item")
		st.Close()
		b.StartTimer()
	}
}
