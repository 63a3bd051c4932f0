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

// scanAll is the page's source before the index by user: every item.
func (s *Store) scanAll(_ string, fn func(ItemRecord) bool) { s.t.Scan(fn) }

// TestPageReadsOnlyTheUsersItems: a page reads the user's items only,
// however many items other users have.
func TestPageReadsOnlyTheUsersItems(t *testing.T) {
	s, owners := fillUsers(t, 5, 40)
	read := 0
	source := s.pageSource
	s.pageSource = func(userID string, fn func(ItemRecord) bool) {
		source(userID, func(it ItemRecord) bool { read++; return fn(it) })
	}
	q := Query{UserID: owners[2].UserID, Records: map[string]bool{owners[2].RecordID: true}, Limit: 10}
	page, more := s.Page(q)
	if len(page) != 10 || !more || page[0].UserID != owners[2].UserID {
		t.Fatalf("page: got %d items (more %v), want 10 of %s and more", len(page), more, owners[2].UserID)
	}
	if read != 40 {
		t.Errorf("items read for one page: got %d, want the user's 40 (of %d)", read, 5*40)
	}
	full, _ := s.page(q, s.scanAll)
	for i := range page {
		if page[i].ID != full[i].ID {
			t.Fatalf("page item %d: got %s, a full scan gives %s", i, page[i].ID, full[i].ID)
		}
	}
}

// BenchmarkPage10Users50000Items pages the newest 50 items of one user
// among 10 users of 50,000 items each, through the index by user, and
// reports how many times faster that is than the same page from a scan of
// every item (the way pages were read before the index). Each iteration
// times one page of each kind, back to back, so that both meet the same
// machine: on a shared machine the ratio is the figure, not the time.
func BenchmarkPage10Users50000Items(b *testing.B) {
	const users, perUser = 10, 50000
	s, owners := fillUsers(b, users, perUser)
	q := Query{UserID: owners[3].UserID, Records: map[string]bool{owners[3].RecordID: true}, Limit: DefaultLimit}
	runtime.GC() // the fill's garbage is not the page's cost
	b.ReportAllocs()
	b.ResetTimer()
	var indexed, scanned time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if page, _ := s.Page(q); len(page) != DefaultLimit {
			b.Fatalf("page of %d items, want %d", len(page), DefaultLimit)
		}
		indexed += time.Since(start)
		b.StopTimer()
		start = time.Now()
		s.page(q, s.scanAll)
		scanned += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(scanned)/float64(indexed), "x-faster-than-scan")
	b.ReportMetric(float64(s.Len()), "items")
}
