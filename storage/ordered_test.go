package storage

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// rankRec is the ordered index's test record: grouped by Group, ordered by
// Rank descending then id ascending, live unless Dead.
type rankRec struct {
	ID    string `json:"id"`
	Group string `json:"g,omitempty"`
	Rank  int    `json:"r"`
	Dead  bool   `json:"dead,omitempty"`
}

func rankBefore(a, b *rankRec) bool {
	if a.Rank != b.Rank {
		return a.Rank > b.Rank
	}
	return a.ID < b.ID
}

type rankDB struct {
	s    *Store
	t    *Table[rankRec]
	less *int // calls of Less, for the tests that count work
}

func openRankDB(tb testing.TB, dir string) *rankDB {
	tb.Helper()
	db := &rankDB{s: New(dir, Options{Sync: SyncNone}), less: new(int)}
	db.t = Register(db.s, "ranks", TableConfig[rankRec]{
		ID:   func(r *rankRec) string { return r.ID },
		Live: func(r *rankRec) bool { return !r.Dead },
		Ordered: map[string]Ordered[rankRec]{"by-rank": {
			Key:  func(r *rankRec) string { return r.Group },
			Less: func(a, b *rankRec) bool { *db.less++; return rankBefore(a, b) },
		}},
	})
	if err := db.s.Open(); err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { db.s.Close() })
	return db
}

// ascend is what Ascend gives for group from the first record of rank at
// most maxRank (every record if maxRank is nil).
func (db *rankDB) ascend(group string, maxRank *int) []rankRec {
	var from func(*rankRec) bool
	if maxRank != nil {
		from = func(r *rankRec) bool { return r.Rank <= *maxRank }
	}
	var got []rankRec
	db.t.Ascend("by-rank", group, from, func(r rankRec) bool {
		got = append(got, r)
		return true
	})
	return got
}

// reference is the same, by a scan of every record; an empty group is
// not indexed.
func (db *rankDB) reference(group string, maxRank *int) []rankRec {
	var want []rankRec
	db.t.Scan(func(r rankRec) bool {
		if !r.Dead && r.Group != "" && r.Group == group && (maxRank == nil || r.Rank <= *maxRank) {
			want = append(want, r)
		}
		return true
	})
	slices.SortFunc(want, func(a, b rankRec) int {
		if rankBefore(&a, &b) {
			return -1
		}
		return 1
	})
	return want
}

func (db *rankDB) check(t *testing.T, when string, groups []string) {
	t.Helper()
	for _, g := range groups {
		for _, maxRank := range []*int{nil, new(-1), new(0), new(7), new(120), new(1000)} {
			got, want := db.ascend(g, maxRank), db.reference(g, maxRank)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: group %q from rank %v: got %d records %v, want %d %v", when, g, maxRank, len(got), got, len(want), want)
			}
		}
		if n, want := db.t.OrderedLen("by-rank", g), len(db.reference(g, nil)); n != want {
			t.Fatalf("%s: OrderedLen(%q): got %d, want %d", when, g, n, want)
		}
	}
}

// TestOrderedMatchesScan: after random inserts, moves between groups, rank
// changes, soft and hard deletes, several to a Commit, an ordered index
// (up to a few thousand records a key, so chunks split and merge) reads
// what a sorted scan gives, from any position, and the same again
// after a restart (replay builds it anew).
func TestOrderedMatchesScan(t *testing.T) {
	groups := []string{"a", "b", "c", ""}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			db := openRankDB(t, dir)
			rng := rand.New(rand.NewPCG(seed, 99))
			for step := range 300 {
				var ops []Op
				for range 1 + rng.IntN(200) {
					id := fmt.Sprintf("r%04d", rng.IntN(3000))
					rank := rng.IntN(200)
					_, exists := db.t.Get(id)
					switch n := rng.IntN(10); {
					case n < 7 || !exists:
						ops = append(ops, db.t.Put(rankRec{
							ID: id, Group: groups[rng.IntN(len(groups))], Rank: rank, Dead: rng.IntN(8) == 0,
						}))
					case n < 8:
						ops = append(ops, db.t.UpdateIfExists(id, func(r *rankRec) error { r.Rank = rank; return nil }))
					default:
						ops = append(ops, db.t.DeleteIfExists(id, nil))
					}
				}
				if err := db.s.Commit(ops...); err != nil {
					t.Fatalf("step %d: Commit: %v", step, err)
				}
				if step%25 == 0 {
					db.check(t, fmt.Sprintf("step %d", step), groups)
				}
			}
			db.check(t, "end", groups)
			if err := db.s.Close(); err != nil {
				t.Fatal(err)
			}
			db = openRankDB(t, dir)
			db.check(t, "after restart", groups)
		})
	}
}

// TestOrderedBulkWork: filling one key with n records, seeking in it and
// soft-deleting all of them in one Commit cost O(n log n) comparisons,
// not O(n²), and a seek costs O(log n) calls of from.
func TestOrderedBulkWork(t *testing.T) {
	const n = 20000
	db := openRankDB(t, filepath.Join(t.TempDir(), "db"))
	bound := func(calls int) int { return calls * 40 } // 2 searches of about log2(n) = 15 steps, and orderedMoves
	var ops []Op
	for i := range n {
		ops = append(ops, db.t.Insert(rankRec{ID: fmt.Sprintf("r%05d", i), Group: "g", Rank: i}))
	}
	*db.less = 0
	if err := db.s.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	if got := *db.less; got > bound(n) {
		t.Errorf("Less calls to insert %d records: got %d, want at most %d", n, got, bound(n))
	}

	calls := 0
	var got []rankRec
	db.t.Ascend("by-rank", "g", func(r *rankRec) bool { calls++; return r.Rank <= 12345 }, func(r rankRec) bool {
		got = append(got, r)
		return len(got) < 3
	})
	if want := []int{12345, 12344, 12343}; len(got) != 3 || got[0].Rank != want[0] || got[2].Rank != want[2] {
		t.Errorf("seek to rank 12345: got %v, want ranks %v", got, want)
	}
	if calls > 2*16 {
		t.Errorf("calls of from for one seek among %d: got %d, want at most %d", n, calls, 2*16)
	}

	ops = ops[:0]
	for i := range n {
		ops = append(ops, db.t.Update(fmt.Sprintf("r%05d", i), func(r *rankRec) error { r.Dead = true; return nil }))
	}
	*db.less = 0
	if err := db.s.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	if got := *db.less; got > bound(n) {
		t.Errorf("Less calls to soft-delete %d records: got %d, want at most %d", n, got, bound(n))
	}
	if got := db.t.OrderedLen("by-rank", "g"); got != 0 {
		t.Errorf("records left in the index: got %d, want 0", got)
	}
}

// TestIndexRemovesManyAtOnce: a Commit deleting most of a key's records
// from a non-unique index (one pass over the key's list, however many
// go), then one more, leaves exactly the others, before and after a
// restart.
func TestIndexRemovesManyAtOnce(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{Sync: SyncNone})
	var ops []Op
	for i := range 3000 {
		ops = append(ops, db.creds.Insert(credential{ID: fmt.Sprintf("c%04d", i), UserID: "u1"}))
	}
	ops = append(ops, db.creds.Insert(credential{ID: "other", UserID: "u2"}))
	if err := db.s.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	ops = ops[:0]
	for i := range 3000 {
		if i%300 != 7 {
			ops = append(ops, db.creds.Delete(fmt.Sprintf("c%04d", i)))
		}
	}
	if err := db.s.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	if err := db.s.Commit(db.creds.Delete("c0007")); err != nil {
		t.Fatal(err)
	}
	want := []string{"c0307", "c0607", "c0907", "c1207", "c1507", "c1807", "c2107", "c2407", "c2707"}
	ids := func(db *testDB, user string) []string {
		var got []string
		for _, c := range db.creds.Find("user", user) {
			got = append(got, c.ID)
		}
		slices.Sort(got)
		return got
	}
	if got := ids(db, "u1"); !slices.Equal(got, want) {
		t.Fatalf("u1 after the deletes: got %v, want %v", got, want)
	}
	if got := ids(db, "u2"); !slices.Equal(got, []string{"other"}) {
		t.Fatalf("u2: got %v, want [other]", got)
	}
	db.s.Close()
	db = openDB(t, dir, Options{Sync: SyncNone})
	if got := ids(db, "u1"); !slices.Equal(got, want) {
		t.Fatalf("u1 after a restart: got %v, want %v", got, want)
	}
}
