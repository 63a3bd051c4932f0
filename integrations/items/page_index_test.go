package items

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"searchsvc/storage"
)

// pageStore is an item store in dir, closed at the end of the test.
func pageStore(tb testing.TB, dir string) (*storage.Store, *Store) {
	tb.Helper()
	st := storage.New(filepath.Join(dir, "main"), storage.Options{Sync: storage.SyncNone})
	s := New(st, testVault(tb, 3), filepath.Join(dir, "items"))
	if err := st.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st, s
}

// testItem is an item of the record with a date n minutes after base.
func testItem(id, userID, recordID string, minutes int) ItemRecord {
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	return ItemRecord{
		ID: id, UserID: userID, RecordID: recordID, Integration: "gmail",
		Key: itemKey(recordID, id), Date: base.Add(time.Duration(minutes) * time.Minute), CreatedAt: base,
	}
}

// referencePage is the page of q by brute force: every item of the
// table, kept by the rules of GET /v1/items spelled out again, sorted.
func referencePage(s *Store, q Query) ([]ItemRecord, bool) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	var all []ItemRecord
	// What memory holds of each item (ids, date, deletion) is all a page
	// is chosen and ordered by: reading every item back for each of the
	// many reference pages would take minutes under -race.
	var mem []ItemRecord
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) {
		for i := range d.ents.n {
			if !d.ents.at(uint32(i)).gone() {
				mem = append(mem, d.record(uint32(i)))
			}
		}
	})
	slices.Values(mem)(func(it ItemRecord) bool {
		if it.DeletedAt != nil || it.UserID != q.UserID || !q.Records[it.RecordID] || !matches(q, it.ID) {
			return true
		}
		if q.After != nil {
			if it.Date.After(q.After.Date) || it.Date.Equal(q.After.Date) && it.ID >= q.After.ID {
				return true
			}
		}
		all = append(all, it)
		return true
	})
	slices.SortFunc(all, func(a, b ItemRecord) int {
		if c := b.Date.Compare(a.Date); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if len(all) > limit {
		return all[:limit], true
	}
	return all, false
}

func pageIDs(page []ItemRecord) []string {
	ids := make([]string, len(page))
	for i := range page {
		ids[i] = page[i].ID
	}
	return ids
}

// matches reports whether id passes q's InIDs and NinIDs.
func matches(q Query, id string) bool {
	if len(q.InIDs) > 0 && !slices.Contains(q.InIDs, id) {
		return false
	}
	return !slices.Contains(q.NinIDs, id)
}

// TestPageCases: the order and each filter of GET /v1/items on a small
// set, with the pages written out.
func TestPageCases(t *testing.T) {
	_, s := pageStore(t, t.TempDir())
	// u1 has records r1 and r2; u2 has r3. Items at equal dates order by
	// id, descending. i6 is soft-deleted, i9 is u2's. An item's id is a
	// UUID: iN stands for 0000000N-…, "zz" for the largest, so that ids
	// order as their names do.
	id := func(name string) string {
		switch {
		case name == "zz":
			return "ffffffff-ffff-4fff-bfff-ffffffffffff"
		case len(name) == 2 && name[0] == 'i':
			return "0000000" + name[1:] + "-0000-4000-8000-000000000000"
		}
		return name
	}
	ids := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = id(n)
		}
		return out
	}
	var ops []storage.Op
	for _, it := range []ItemRecord{
		testItem(id("i1"), "u1", "r1", 10), testItem(id("i2"), "u1", "r1", 30), testItem(id("i3"), "u1", "r2", 30),
		testItem(id("i4"), "u1", "r2", 20), testItem(id("i5"), "u1", "r1", 40), testItem(id("i6"), "u1", "r1", 50),
		testItem(id("i7"), "u1", "r2", 5), testItem(id("i8"), "u1", "r1", 30), testItem(id("i9"), "u2", "r3", 60),
	} {
		ops = append(ops, s.InsertOp(it))
	}
	if err := s.st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	scrubbed, _ := s.RemoveProviderOps("r1", []string{id("i6")}, time.Now())
	if err := s.st.Commit(scrubbed...); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	both := map[string]bool{"r1": true, "r2": true}
	for _, tc := range []struct {
		name     string
		q        Query
		want     []string
		wantMore bool
	}{
		{"newest first, ties by id", Query{UserID: "u1", Records: both, Limit: 10}, []string{"i5", "i8", "i3", "i2", "i4", "i1", "i7"}, false},
		{"limit", Query{UserID: "u1", Records: both, Limit: 3}, []string{"i5", "i8", "i3"}, true},
		{"limit equal to the count", Query{UserID: "u1", Records: both, Limit: 7}, []string{"i5", "i8", "i3", "i2", "i4", "i1", "i7"}, false},
		{"cursor inside a tie", Query{UserID: "u1", Records: both, Limit: 2, After: &Cursor{Date: base.Add(30 * time.Minute), ID: "i8"}}, []string{"i3", "i2"}, true},
		{"cursor at a date no item has", Query{UserID: "u1", Records: both, Limit: 10, After: &Cursor{Date: base.Add(25 * time.Minute), ID: "zz"}}, []string{"i4", "i1", "i7"}, false},
		{"cursor after the last", Query{UserID: "u1", Records: both, Limit: 10, After: &Cursor{Date: base.Add(5 * time.Minute), ID: "i7"}}, nil, false},
		{"one record", Query{UserID: "u1", Records: map[string]bool{"r2": true}, Limit: 10}, []string{"i3", "i4", "i7"}, false},
		{"another user's record", Query{UserID: "u1", Records: map[string]bool{"r3": true}, Limit: 10}, nil, false},
		{"no record", Query{UserID: "u1", Limit: 10}, nil, false},
		{"inIds", Query{UserID: "u1", Records: both, Limit: 2, InIDs: []string{"i1", "i6", "i9", "i4", "i7", "nope"}}, []string{"i4", "i1"}, true},
		{"inIds and ninIds, after a cursor", Query{UserID: "u1", Records: both, Limit: 5, InIDs: []string{"i1", "i2", "i4", "i7"}, NinIDs: []string{"i1"}, After: &Cursor{Date: base.Add(30 * time.Minute), ID: "i3"}}, []string{"i2", "i4", "i7"}, false},
		{"ninIds", Query{UserID: "u1", Records: both, Limit: 3, NinIDs: []string{"i5", "i3"}}, []string{"i8", "i2", "i4"}, true},
		{"the other user", Query{UserID: "u2", Records: map[string]bool{"r3": true}, Limit: 10}, []string{"i9"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.InIDs, q.NinIDs = ids(q.InIDs), ids(q.NinIDs)
			if q.After != nil {
				q.After = &Cursor{Date: q.After.Date, ID: id(q.After.ID)}
			}
			if tc.want != nil {
				tc.want = ids(tc.want)
			}
			page, more := mustPage(t, s, q)
			if got := pageIDs(page); !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) || more != tc.wantMore {
				t.Errorf("got %v (more %v), want %v (more %v)", got, more, tc.want, tc.wantMore)
			}
		})
	}
}

// randomQuery is a query of one of users over a random choice of records,
// filters, limit and cursor; items are the ids to draw filters from.
func randomQuery(tb testing.TB, rng *rand.Rand, users []string, records []string, items []ItemRecord) Query {
	q := Query{UserID: users[rng.IntN(len(users))], Records: map[string]bool{}, Limit: 1 + rng.IntN(12)}
	for _, r := range records {
		if rng.IntN(3) > 0 {
			q.Records[r] = true
		}
	}
	pick := func() []string {
		var ids []string
		for range 1 + rng.IntN(15) {
			if len(items) > 0 {
				ids = append(ids, items[rng.IntN(len(items))].ID)
			}
		}
		return ids
	}
	var in, nin []string
	switch rng.IntN(6) {
	case 0:
		in = pick()
	case 1:
		nin = pick()
	case 2:
		in, nin = pick(), pick()
	}
	q.InIDs, q.NinIDs = in, nin
	if rng.IntN(2) == 0 && len(items) > 0 {
		it := items[rng.IntN(len(items))]
		c := Cursor{Date: it.Date, ID: it.ID}
		if rng.IntN(3) == 0 {
			c.Date = c.Date.Add(time.Duration(rng.IntN(61)-30) * time.Second)
		}
		q.After = &c
	}
	return q
}

// TestPageMatchesReference: over random inserts, dates (many equal),
// soft deletes of single items and of whole records, removals for good
// and filters, every page equals the brute-force one, following the
// cursors through a user's items gives all of them once, and after a
// restart (the index built anew by the replay) the pages are the same.
func TestPageMatchesReference(t *testing.T) {
	users := []string{"u1", "u2", "u3"}
	records := []string{"r1", "r2", "r3", "r4", "r5"} // r_i is u_{(i-1)%3+1}'s
	owner := func(r string) string { return users[(int(r[1]-'1'))%len(users)] }
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := t.TempDir()
			st, s := pageStore(t, dir)
			rng := rand.New(rand.NewPCG(seed, 7))
			var items []ItemRecord
			n := 0
			check := func(when string) {
				t.Helper()
				for range 40 {
					q := randomQuery(t, rng, users, records, items)
					got, gotMore := mustPage(t, s, q)
					want, wantMore := referencePage(s, q)
					if !slices.Equal(pageIDs(got), pageIDs(want)) || gotMore != wantMore {
						t.Fatalf("%s: query %+v after %v: got %v (more %v), want %v (more %v)",
							when, q, q.After, pageIDs(got), gotMore, pageIDs(want), wantMore)
					}
				}
			}
			for step := range 60 {
				var ops []storage.Op
				for range rng.IntN(80) {
					r := records[rng.IntN(len(records))]
					n++
					it := testItem(fmt.Sprintf("%08x-0000-4000-8000-000000000000", rng.Uint32()), owner(r), r, rng.IntN(50))
					it.Key = itemKey(r, fmt.Sprint(n))
					items = append(items, it)
					ops = append(ops, s.InsertOp(it))
				}
				switch rng.IntN(8) {
				case 0: // a disconnect
					more, _ := s.RemoveRecordOps(records[rng.IntN(len(records))], time.Now())
					ops = append(ops, more...)
				case 1, 2: // a few soft deletes, a few for good
					for range rng.IntN(20) {
						if len(items) == 0 {
							break
						}
						it := items[rng.IntN(len(items))]
						if rng.IntN(2) == 0 {
							ops = append(ops, s.t.Delete(it.ID))
						} else {
							ops = append(ops, s.scrubOp(it.ID, time.Now()))
						}
					}
				}
				if err := st.Commit(ops...); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if step%6 == 0 {
					check(fmt.Sprintf("step %d", step))
				}
			}
			check("end")

			// Cursor by cursor through each user's items: every live item once.
			walk := func() [][]string {
				var all [][]string
				for _, u := range users {
					q := Query{UserID: u, Records: map[string]bool{}, Limit: 7}
					for _, r := range records {
						q.Records[r] = true
					}
					want, _ := referencePage(s, Query{UserID: u, Records: q.Records, Limit: len(items) + 1})
					var got []string
					for {
						page, more := mustPage(t, s, q)
						got = append(got, pageIDs(page)...)
						if !more {
							break
						}
						last := page[len(page)-1]
						q.After = &Cursor{Date: last.Date, ID: last.ID}
					}
					if !slices.Equal(got, pageIDs(want)) {
						t.Fatalf("pages of %s one after another: got %d items %v, want %d %v", u, len(got), got, len(want), pageIDs(want))
					}
					all = append(all, got)
				}
				return all
			}
			before := walk()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			_, s = pageStore(t, dir)
			if after := walk(); !slices.EqualFunc(after, before, slices.Equal) {
				t.Fatalf("pages after a restart: got %v, want %v", after, before)
			}
			check("after restart")
		})
	}
}

// TestPageReadsItsOwnSize: a page reads limit+1 items of the index
// (limit to return, one to know that more follow), plus the items a
// filter skips, whether it is the first page or one deep into 5,000 items
// of the user among 4 users; with inIds it reads none of the index.
func TestPageReadsItsOwnSize(t *testing.T) {
	s, owners := fillUsers(t, 4, 5000)
	read := 0
	source := s.pageSource
	s.pageSource = func(d *dense, u uint16, from func(*entry) bool, fn func(uint32) bool) {
		source(d, u, from, func(sl uint32) bool { read++; return fn(sl) })
	}
	o := owners[2]
	records := map[string]bool{o.RecordID: true}
	full, _ := referencePage(s, Query{UserID: o.UserID, Records: records, Limit: 5000})
	mid := &Cursor{Date: full[2500].Date, ID: full[2500].ID}
	skipped := pageIDs(full[2501:2521])
	for _, tc := range []struct {
		name     string
		q        Query
		wantRead int
	}{
		{"first page", Query{Limit: 10}, 11},
		{"deep page", Query{Limit: 10, After: mid}, 11},
		{"largest page", Query{Limit: MaxLimit, After: mid}, MaxLimit + 1},
		{"ninIds skipping 20", Query{Limit: 10, After: mid, NinIDs: skipped}, 31},
		{"inIds", Query{Limit: 10, InIDs: skipped}, 0},
		{"last page", Query{Limit: 10, After: &Cursor{Date: full[4994].Date, ID: full[4994].ID}}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read = 0
			q := tc.q
			q.UserID, q.Records = o.UserID, records
			page, more := mustPage(t, s, q)
			want, wantMore := referencePage(s, q)
			if !slices.Equal(pageIDs(page), pageIDs(want)) || more != wantMore {
				t.Fatalf("page: got %v (more %v), want %v (more %v)", pageIDs(page), more, pageIDs(want), wantMore)
			}
			if read != tc.wantRead {
				t.Errorf("items read: got %d, want %d (of the user's %d and %d in all)", read, tc.wantRead, len(full), s.Len())
			}
		})
	}
}
