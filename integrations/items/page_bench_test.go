package items

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/storage"
)

// fillUsers stores perUser items for each of users users (one record
// each) and returns the store and the users' record ids.
func fillUsers(tb testing.TB, users, perUser int) (*Store, []Owner) {
	tb.Helper()
	st := storage.New(filepath.Join(tb.TempDir(), "main"), storage.Options{Sync: storage.SyncNone})
	s := New(st, testVault(tb, 3), tb.TempDir())
	if err := st.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	owners := make([]Owner, users)
	var ops []storage.Op
	for u := range users {
		owners[u] = Owner{UserID: fmt.Sprintf("user-%d", u), RecordID: fmt.Sprintf("record-%d", u), Integration: "gmail"}
		for i := range perUser {
			it, err := s.NewItem(owners[u], &integrations.Item{
				ProviderID: fmt.Sprintf("msg-%d", i), Title: "a title", From: "a@example.com",
				Date: now.Add(-time.Duration(i) * time.Minute),
			}, now)
			if err != nil {
				tb.Fatal(err)
			}
			ops = append(ops, s.InsertOp(it))
			if len(ops) == 5000 {
				if err := st.Commit(ops...); err != nil {
					tb.Fatal(err)
				}
				ops = ops[:0]
			}
		}
	}
	if err := st.Commit(ops...); err != nil {
		tb.Fatal(err)
	}
	return s, owners
}

// scanPage is a page the way GET /v1/items read it before any index: a
// scan of every item of every user (referencePage). It is the reference
// the benchmark compares with.
func (s *Store) scanPage(q Query) ([]ItemRecord, bool) { return referencePage(s, q) }

// BenchmarkPage10Users50000Items pages 50 items of one user among 10 users
// of 50,000 items each, alternately the newest and a page from a cursor
// half-way down, and reports per page its time (ns/page) and the items it
// read of the index (read/page). Two ratios compare inside the run, so
// that they hold on a shared machine: x-faster-than-scan, the time of the
// same pages from a scan of every item (the way pages were read before any
// index), timed back to back with one indexed page in every 512, over that
// of an indexed page; and x-cost-vs-500-items, the time of a page here
// over that of the same pages among 10 users of 500 items, timed back to
// back with each, which stays near 1 when a page costs its own size only.
func BenchmarkPage10Users50000Items(b *testing.B) {
	const users, perUser, fewPerUser, scanEvery = 10, 50000, 500, 512
	s, owners := fillUsers(b, users, perUser)
	small, smallOwners := fillUsers(b, users, fewPerUser)
	queries := func(s *Store, o Owner, n int) []Query {
		full, _ := s.scanPage(Query{UserID: o.UserID, Records: map[string]bool{o.RecordID: true}, Limit: n})
		mid := full[n/2]
		q := Query{UserID: o.UserID, Records: map[string]bool{o.RecordID: true}, Limit: DefaultLimit}
		deep := q
		deep.After = &Cursor{Date: mid.Date, ID: mid.ID}
		return []Query{q, deep}
	}
	qs, smallQs := queries(s, owners[3], perUser), queries(small, smallOwners[3], fewPerUser)
	read := 0
	source := s.pageSource
	s.pageSource = func(d *dense, u uint16, from func(*entry) bool, fn func(uint32) bool) {
		source(d, u, from, func(sl uint32) bool { read++; return fn(sl) })
	}
	runtime.GC() // the fills' garbage is not the page's cost
	b.ReportAllocs()
	var indexed, fewer, scanned time.Duration
	scans, i := 0, 0
	// b.Loop runs the fills above once, not once per round.
	for ; b.Loop(); i++ {
		q := qs[i%2]
		start := time.Now()
		page, _, _ := s.Page(q)
		indexed += time.Since(start)
		b.StopTimer()
		if len(page) != DefaultLimit {
			b.Fatalf("page of %d items, want %d", len(page), DefaultLimit)
		}
		start = time.Now()
		small.Page(smallQs[i%2])
		fewer += time.Since(start)
		// A scan costs thousands of pages: pair one with a page now and
		// then only, or the benchmark would run for an hour.
		if i%scanEvery == 0 {
			start = time.Now()
			want, _ := s.scanPage(q)
			scanned += time.Since(start)
			scans++
			if page[0].ID != want[0].ID || page[len(page)-1].ID != want[len(want)-1].ID {
				b.Fatalf("indexed page %s..%s, scanned %s..%s", page[0].ID, page[len(page)-1].ID, want[0].ID, want[len(want)-1].ID)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(indexed.Nanoseconds())/float64(i), "ns/page")
	b.ReportMetric(float64(read)/float64(i), "read/page")
	b.ReportMetric(float64(scanned)/float64(indexed)*float64(i)/float64(scans), "x-faster-than-scan")
	b.ReportMetric(float64(indexed)/float64(fewer), "x-cost-vs-500-items")
	b.ReportMetric(float64(s.Len()), "items")
}
