package search

import (
	"flag"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
)

// phaseMails is how many mails BenchmarkWritePhases indexes: 120,000,
// 30,000 under -benchtime 1x; SEARCH_PHASE_MAILS overrides.
func phaseMails() int {
	if v, err := strconv.Atoi(os.Getenv("SEARCH_PHASE_MAILS")); err == nil && v > 0 {
		return v
	}
	if f := flag.Lookup("test.benchtime"); f != nil && f.Value.String() == "1x" {
		return 30_000
	}
	return 120_000
}

// BenchmarkWritePhases checks that bytes written per byte of index does
// not depend on where the mail count falls in the merge cycle: it bulk
// indexes the corpus repeated with fresh ids and, whenever a flush or a
// merge has just ended (no buffer waiting, no merge running) from 20,000
// mails on, divides the bytes written so far by the index's size then.
// It reports the worst of those (written/final-worst, what a bulk that
// stopped there would show before its quiet merge), the best, how many
// points it saw, and the figure once the whole bulk is quiet and merged
// (written/final-end).
func BenchmarkWritePhases(b *testing.B) {
	raw := mailtest.Corpus(b)
	n := phaseMails()
	var worst, best, end float64
	points := 0
	for b.Loop() {
		var skip atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(skip.Load())) }
		ix, err := Open(Config{Dir: b.TempDir(), Vault: testVault, Now: now})
		if err != nil {
			b.Fatal(err)
		}
		worst, best, points = 0, 0, 0
		var lastWritten int64
		batch := make([]Doc, 0, 100)
		for i := range n {
			m, err := mail.Parse(raw[i%len(raw)])
			if err != nil {
				continue
			}
			batch = append(batch, Doc{ID: newUUID(), RecordID: "rec-1", Integration: "imap", Kind: "email",
				Title: m.Subject, From: m.From, To: m.To, Text: m.Text, Date: m.Date})
			if len(batch) < cap(batch) && i < n-1 {
				continue
			}
			if err := ix.Add(userA, batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
			st := ix.Stats()
			if i < 20_000 || st.BytesWritten == lastWritten || st.BytesOnDisk == 0 || busy(ix) {
				continue
			}
			lastWritten = st.BytesWritten
			r := float64(st.BytesWritten) / float64(st.BytesOnDisk)
			if points == 0 || r > worst {
				worst = r
			}
			if points == 0 || r < best {
				best = r
			}
			points++
		}
		if err := ix.Flush(); err != nil {
			b.Fatal(err)
		}
		skip.Store(int64(time.Hour)) // indexing is quiet
		settle(ix)
		st := ix.Stats()
		end = float64(st.BytesWritten) / float64(st.BytesOnDisk)
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "mails")
	b.ReportMetric(worst, "written/final-worst")
	b.ReportMetric(best, "written/final-best")
	b.ReportMetric(float64(points), "points")
	b.ReportMetric(end, "written/final-end")
}

// busy reports whether a buffer waits to be written or a merge runs.
func busy(ix *Index) bool {
	for _, u := range ix.userList() {
		u.mu.RLock()
		b := u.frozen > 0 || u.merging
		u.mu.RUnlock()
		if b {
			return true
		}
	}
	return false
}
