package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// policyUser is a user whose segments hold docs documents each (a
// negative count: that many, half of them deleted).
func policyUser(docs ...int) *user {
	u := newUser("", userA)
	u.parts = nil
	for i, n := range docs {
		p := &part{seg: &segment{seq: uint64(i + 1), cols: columns{ids: make([]string, max(n, -n))}}}
		if n < 0 {
			for d := range -n/2 + 1 {
				p.remove(uint32(d))
			}
		}
		u.parts = append(u.parts, p)
	}
	return u
}

func docCounts(ps []*part) []int {
	out := []int{}
	for _, p := range ps {
		out = append(out, p.docs())
	}
	slices.Sort(out)
	return out
}

func policyIndex(quiet bool) *Index {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ix := &Index{cfg: Config{MergeFactor: 5, MaxMergeDocs: 16 << 10, FlushAfter: 2 * time.Second,
		Now: func() time.Time { return now }}}
	ix.lastAdd = now
	if quiet {
		ix.lastAdd = now.Add(-2 * time.Second)
	}
	return ix
}

func TestPickMerge(t *testing.T) {
	cases := []struct {
		name  string
		quiet bool
		docs  []int
		want  []int
	}{
		{"four flushed segments wait for a fifth", false, []int{2900, 3000, 2800, 3100}, []int{}},
		{"five of a tier become one", false, []int{2900, 3000, 2800, 3100, 3200, 14000}, []int{2800, 2900, 3000, 3100, 3200}},
		{"the five smallest of a tier", false, []int{5000, 2900, 3000, 2800, 3100, 3200}, []int{2800, 2900, 3000, 3100, 3200}},
		{"none past MaxMergeDocs", false, []int{14000, 15000, 13000, 16000, 14500, 2900}, []int{}},
		{"tier 0 first", false, []int{10, 20, 30, 40, 50, 2900, 3000, 2800, 3100, 3200}, []int{10, 20, 30, 40, 50}},
		{"more deleted than live: alone", false, []int{2900, -3000}, []int{3000}},
		{"full segments stay", false, []int{16000, 16000, 16000, 16000, 16000}, []int{}},
		{"quiet: the burst's tail, a partial flush too", true, []int{14700, 14700, 2900, 2900, 450}, []int{450, 2900, 2900}},
		{"quiet: not into a full segment", true, []int{14700, 2900}, []int{}},
		{"quiet: two flushes lift a tier", true, []int{2900, 2900}, []int{2900, 2900}},
		{"quiet: small ones stay in their tier", true, []int{400, 300}, []int{}},
		{"quiet: small ones lifted a tier", true, []int{400, 400, 300}, []int{300, 400, 400}},
		{"quiet: one segment", true, []int{3000}, []int{}},
		{"not quiet: the tail waits", false, []int{14700, 2900, 2900, 450}, []int{}},
	}
	for _, tc := range cases {
		ix := policyIndex(tc.quiet)
		u := policyUser(tc.docs...)
		if got := docCounts(ix.pickMerge(u)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPickMergeNotWhileMerging(t *testing.T) {
	ix := policyIndex(true)
	u := policyUser(2900, 3000, 2800, 3100, 3200)
	u.merging = true
	if got := ix.pickMerge(u); got != nil {
		t.Errorf("got %v, want nothing while a merge runs", docCounts(got))
	}
}

func TestFlushPartners(t *testing.T) {
	cases := []struct {
		buf     int
		docs    []int
		merging bool
		want    []int
	}{
		{2900, []int{2900, 3000, 2800}, false, []int{}},
		{2900, []int{2900, 3000, 2800, 3100}, false, []int{2800, 2900, 3000, 3100}},
		{2900, []int{2900, 3000, 2800, 3100, 1500, 14000}, false, []int{1500, 2800, 2900, 3000}},
		{2900, []int{2900, 3000, 2800, 3100}, true, []int{}},
		{4000, []int{4000, 4000, 4000, 4000}, false, []int{}}, // 20,000 documents
		{500, []int{100, 200, 300, 400, 2900}, false, []int{100, 200, 300, 400}},
		{0, []int{100, 200, 300, 400}, false, []int{}},
	}
	for _, tc := range cases {
		ix := policyIndex(false)
		u := policyUser(tc.docs...)
		u.merging = tc.merging
		b := &part{buf: newBuffer()}
		b.buf.cols.ids = make([]string, tc.buf)
		u.parts = append(u.parts, b)
		name := fmt.Sprintf("buffer of %d, segments %v, merging %v", tc.buf, tc.docs, tc.merging)
		if got := docCounts(ix.flushPartners(u, b)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}

// TestFlushMerge writes the third of three flushes together with the two
// segments before it (MergeFactor 3): one segment, numbered 3 (no
// separate flush), every answer as before, a document deleted from the
// buffer left out, and the same after a reopen.
func TestFlushMerge(t *testing.T) {
	dir := t.TempDir()
	factor3 := func(c *Config) { c.MergeFactor = 3 }
	ix := openTest(t, dir, factor3)
	docs := handDocs()
	gone := Doc{ID: "gone", RecordID: "r1", Integration: "gmail", Kind: "email", Title: "zeppelin", Date: day("2026-11-01")}
	batches := [][]Doc{docs[:2], docs[2:4], append(slices.Clone(docs[4:]), gone)}
	for i, batch := range batches {
		if err := ix.Add(userA, batch...); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			ix.Delete(userA, "gone")
		}
		if err := ix.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if st := ix.Stats(); st.Flushes != 3 || st.Merges != 1 {
		t.Errorf("flushes, merges: got %d, %d, want 3, 1", st.Flushes, st.Merges)
	}
	check := func(ix *Index) {
		t.Helper()
		u, _ := ix.getUser(userA, false)
		var seqs []uint64
		for _, p := range u.parts {
			if p.seg != nil {
				seqs = append(seqs, p.seg.seq)
			}
		}
		if !slices.Equal(seqs, []uint64{3}) {
			t.Errorf("segments: got %v, want [3]", seqs)
		}
		ids, _ := ix.IDs(userA)
		if got, want := sorted(ids), []string{"d1", "d2", "d3", "d4", "d5"}; !slices.Equal(got, want) {
			t.Errorf("ids: got %v, want %v", got, want)
		}
		checkQueries(t, ix)
	}
	check(ix)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	check(openTest(t, dir, factor3))
}

// TestBufferKeepsNoText checks that no term of a buffer points into the
// text it came from: the buffer would hold every document's whole text.
func TestBufferKeepsNoText(t *testing.T) {
	text := strings.Repeat("plain lowercase words stay as they are ", 100) + "zeppelin"
	b := newBuffer()
	b.add(analyzeDoc(Doc{ID: "d1", Title: "subject words", From: "alice", Text: text}))
	start := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	end := start + uintptr(len(text))
	if len(b.terms) < 5 {
		t.Fatalf("terms: got %d, want at least 5", len(b.terms))
	}
	for term := range b.terms {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(term))); p >= start && p < end {
			t.Errorf("term %q points into the text", term)
		}
	}
}

// A merge whose inputs were merged away between the pick and the merge
// (the merger picks under a read lock; a flush or a reseal may take them
// first) does nothing: it used to read the closed segments, mark one bad
// and log a failed merge.
func TestMergeOfInputsMergedAway(t *testing.T) {
	ix := openTest(t, t.TempDir(), func(c *Config) { c.FlushAfter = time.Hour })
	for i := range 3 {
		if err := ix.Add(userA, Doc{ID: fmt.Sprintf("d%d", i), Title: "harbour log", Text: "alpha", Date: time.Unix(int64(i+1), 0)}); err != nil {
			t.Fatal(err)
		}
		if err := ix.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	u, err := ix.getUser(userA, false)
	if err != nil || u == nil {
		t.Fatalf("user: %v", err)
	}
	u.mu.RLock()
	picked := slices.Clone(u.parts[:2])
	u.mu.RUnlock()
	if picked[0].seg == nil || picked[1].seg == nil {
		t.Fatal("want two segments to merge")
	}
	if err := ix.merge(u, picked); err != nil {
		t.Fatalf("first merge: %v", err)
	}
	merges := ix.Stats().Merges
	if err := ix.merge(u, picked); err != nil {
		t.Errorf("a merge of inputs merged away: got %v, want nothing done", err)
	}
	if got := ix.Stats().Merges; got != merges {
		t.Errorf("merges: got %d, want %d (the second did nothing)", got, merges)
	}
	if bad := picked[0].bad.Load() || picked[1].bad.Load(); bad {
		t.Error("an input merged away was marked bad")
	}
	res, err := ix.Search(userA, Request{Query: Term{Field: FieldAny, Text: "harbour"}, Limit: 10})
	if err != nil || res.Total != 3 {
		t.Errorf("after both: got %d hits (%v), want 3", res.Total, err)
	}
}
