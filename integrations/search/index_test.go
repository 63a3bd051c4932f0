package search

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations/vault"
)

var (
	testKey   = bytes.Repeat([]byte{7}, 32)
	testVault = mustVault(testKey)
)

// mustVault is a vault sealing under current and opening under previous.
func mustVault(current []byte, previous ...[]byte) *vault.Vault {
	v, err := vault.New(current, previous...)
	if err != nil {
		panic(err)
	}
	return v
}

func openTest(t *testing.T, dir string, mod ...func(*Config)) *Index {
	t.Helper()
	cfg := Config{Dir: dir, Vault: testVault, FlushAfter: time.Hour}
	for _, m := range mod {
		m(&cfg)
	}
	ix, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// word analyzes one query word into the term the index keeps.
func qword(w string) string {
	out := w
	Analyze(w, func(t Token) { out = t.Term })
	return out
}

func qterm(w string) Term { return Term{Field: FieldAny, Text: qword(w), Word: w} }

func qfield(f Field, w string) Term { return Term{Field: f, Text: qword(w)} }

func qprefix(w string) Term {
	out := w
	Analyze(w, func(t Token) { out = t.Word })
	return Term{Field: FieldAny, Text: out, Prefix: true}
}

func qphrase(f Field, ws ...string) Phrase {
	p := Phrase{Field: f}
	for _, w := range ws {
		p.Terms = append(p.Terms, qword(w))
	}
	return p
}

func day(s string) time.Time {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return d
}

const (
	userA = "0b9f7a2e-1111-4c6e-9a57-000000000001"
	userB = "0b9f7a2e-2222-4c6e-9a57-000000000002"
)

func handDocs() []Doc {
	return []Doc{
		{ID: "d1", RecordID: "r1", Integration: "gmail", Kind: "email", Title: "Quarterly report",
			From: "Alice Smith <alice@example.org>", To: []string{"Bob Jones <bob@example.org>"},
			Text: "Here are the numbers for the quarterly report, as promised.", Date: day("2026-11-10")},
		{ID: "d2", RecordID: "r1", Integration: "gmail", Kind: "email", Title: "Lunch on Friday",
			From: "Bob Jones <bob@example.org>", To: []string{"Alice Smith <alice@example.org>", "Dave <dave@example.net>"},
			Text: "A report of lunch plans; quarterly numbers come later.", Date: day("2026-11-11")},
		{ID: "d3", RecordID: "r2", Integration: "slack", Kind: "message",
			From: "Carol", Text: "Invoice attached for the marketing budget.", Date: day("2026-10-01")},
		{ID: "d4", RecordID: "r3", Integration: "dropbox", Kind: "file", Title: "budget q3 xlsx",
			Text: "receipt for the budget, running late", Date: day("2026-09-01")},
		{ID: "d5", RecordID: "r4", Integration: "feed", Kind: "entry", Title: "News of the world",
			Text: "The quarterly earnings report season starts.", Date: day("2026-11-12")},
	}
}

func search(t *testing.T, ix *Index, user string, req Request) Result {
	t.Helper()
	res, err := ix.Search(user, req)
	if err != nil {
		t.Fatalf("Search(%#v): %v", req.Query, err)
	}
	return res
}

func hitIDs(res Result) []string {
	ids := []string{}
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

func sorted(ids []string) []string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return ids
}

// queryCases are known answers over handDocs, one per node type; want is
// sorted unless ordered is set.
var queryCases = []struct {
	name    string
	q       Node
	want    []string
	ordered bool
}{
	{"term", qterm("quarterly"), []string{"d1", "d2", "d5"}, false},
	{"term ranks the title first", qterm("quarterly"), []string{"d1"}, true},
	{"title field", qfield(FieldTitle, "report"), []string{"d1"}, false},
	{"text field", qfield(FieldText, "report"), []string{"d1", "d2", "d5"}, false},
	{"from", qfield(FieldFrom, "alice"), []string{"d1"}, false},
	{"from address", qfield(FieldFrom, "example"), []string{"d1", "d2"}, false},
	{"to", qfield(FieldTo, "alice"), []string{"d2"}, false},
	{"to second recipient", qfield(FieldTo, "dave"), []string{"d2"}, false},
	{"and", And{Children: []Node{qterm("quarterly"), qterm("numbers")}}, []string{"d1", "d2"}, false},
	{"and nothing", And{Children: []Node{qterm("quarterly"), qterm("invoice")}}, []string{}, false},
	{"or", Or{Children: []Node{qterm("invoice"), qterm("receipt")}}, []string{"d3", "d4"}, false},
	{"not in and", And{Children: []Node{qterm("budget"), Not{Child: qterm("receipt")}}}, []string{"d3"}, false},
	{"not alone", Not{Child: qterm("quarterly")}, []string{"d3", "d4"}, false},
	{"phrase", qphrase(FieldAny, "quarterly", "report"), []string{"d1"}, false},
	{"phrase in order only", qphrase(FieldAny, "report", "quarterly"), []string{}, false},
	{"phrase in a field", qphrase(FieldTitle, "quarterly", "report"), []string{"d1"}, false},
	{"phrase not across recipients", qphrase(FieldTo, "example", "org", "dave"), []string{}, false},
	{"phrase of three", qphrase(FieldAny, "the", "quarterly", "earnings"), []string{"d5"}, false},
	{"prefix", qprefix("quart"), []string{"d1", "d2", "d5"}, false},
	{"prefix of a word, not of its stem", qprefix("runn"), []string{"d4"}, false},
	{"stemmed", qterm("promise"), []string{"d1"}, false},
	{"prefix in and", And{Children: []Node{qprefix("bud"), qterm("marketing")}}, []string{"d3"}, false},
	{"kind", Kind{Kind: "file"}, []string{"d4"}, false},
	{"kind and term", And{Children: []Node{qterm("budget"), Kind{Kind: "message"}}}, []string{"d3"}, false},
	{"integration", Integration{Integration: "slack"}, []string{"d3"}, false},
	{"after", DateRange{After: day("2026-11-11")}, []string{"d2", "d5"}, false},
	{"before", DateRange{Before: day("2026-10-01")}, []string{"d4"}, false},
	{"between", DateRange{After: day("2026-10-01"), Before: day("2026-11-11")}, []string{"d1", "d3"}, false},
	{"or of and", Or{Children: []Node{And{Children: []Node{qterm("lunch"), qterm("friday")}}, qterm("invoice")}}, []string{"d2", "d3"}, false},
	{"missing word", qterm("zeppelin"), []string{}, false},
	{"term after filters", And{Children: []Node{Or{Children: []Node{Kind{Kind: "file"}, Kind{Kind: "message"}}}, qterm("budget")}}, []string{"d3", "d4"}, false},
	{"rare term first", And{Children: []Node{qterm("the"), qterm("marketing"), qterm("budget")}}, []string{"d3"}, false},
}

func checkQueries(t *testing.T, ix *Index) {
	t.Helper()
	for _, tc := range queryCases {
		res := search(t, ix, userA, Request{Query: tc.q})
		got := hitIDs(res)
		if tc.ordered {
			got = got[:min(len(got), len(tc.want))]
		} else {
			got = sorted(got)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if !tc.ordered && res.Total != len(tc.want) {
			t.Errorf("%s: total %d, want %d", tc.name, res.Total, len(tc.want))
		}
	}
}

func TestQueries(t *testing.T) {
	for _, mode := range []string{"buffered", "flushed", "segments", "merged", "reopened"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			factor := 2
			if mode == "segments" {
				factor = 100 // no merge, not even by a flush
			}
			ix := openTest(t, dir, func(c *Config) { c.MergeFactor = factor })
			docs := handDocs()
			switch mode {
			case "buffered", "flushed", "reopened":
				if err := ix.Add(userA, docs...); err != nil {
					t.Fatal(err)
				}
			default: // one segment per document
				for _, d := range docs {
					ix.Add(userA, d)
					ix.Flush()
				}
			}
			if mode != "buffered" {
				if err := ix.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if got := ix.Stats().Segments; mode == "segments" && got != len(docs) {
				t.Fatalf("segments: got %d, want %d", got, len(docs))
			}
			if mode == "merged" {
				waitMerged(t, ix)
			}
			if mode == "reopened" {
				ix.Close()
				ix = openTest(t, dir)
			}
			checkQueries(t, ix)
		})
	}
}

// waitMerged runs the merges the merger would pick (MergeFactor 2: until
// one segment is left) on the test's goroutine. A merge the merger runs
// meanwhile is waited for on its mergeDone, and its inputs picked again.
func waitMerged(t *testing.T, ix *Index) {
	t.Helper()
	for _, u := range ix.userList() {
		for {
			u.mu.Lock()
			for u.merging && !u.gone {
				u.mergeDone.Wait()
			}
			u.mu.Unlock()
			in := ix.pickMerge(u)
			if len(in) == 0 {
				break
			}
			if err := ix.merge(u, in); err != nil {
				t.Fatalf("merge: %v", err)
			}
		}
	}
	if got := ix.Stats().Segments; got != 1 {
		t.Fatalf("segments: got %d, want 1", got)
	}
}

func TestUsersAreApart(t *testing.T) {
	ix := openTest(t, t.TempDir())
	ix.Add(userA, handDocs()...)
	other := handDocs()
	for i := range other {
		other[i].ID = "b-" + other[i].ID
	}
	ix.Add(userB, other...)
	for _, flush := range []bool{false, true} {
		if flush {
			ix.Flush()
		}
		for _, tc := range queryCases {
			for _, h := range search(t, ix, userA, Request{Query: tc.q}).Hits {
				if strings.HasPrefix(h.ID, "b-") {
					t.Errorf("%s: user A found B's %s", tc.name, h.ID)
				}
			}
			for _, h := range search(t, ix, userB, Request{Query: tc.q}).Hits {
				if !strings.HasPrefix(h.ID, "b-") {
					t.Errorf("%s: user B found A's %s", tc.name, h.ID)
				}
			}
		}
	}
	res := search(t, ix, "0b9f7a2e-3333-4c6e-9a57-000000000003", Request{Query: qterm("quarterly")})
	if len(res.Hits) != 0 || res.Total != 0 {
		t.Errorf("a user without items: got %v", hitIDs(res))
	}
	for _, q := range []Node{Term{Field: FieldAny, Text: ""}, Term{Field: FieldAny, Text: "a", Prefix: true}, And{}, nil} {
		if _, err := ix.Search(userA, Request{Query: q}); !errors.Is(err, ErrBadQuery) {
			t.Errorf("query %#v: got %v, want %v", q, err, ErrBadQuery)
		}
	}
	if _, err := ix.Search("../etc", Request{Query: qterm("x")}); err != ErrBadUser {
		t.Errorf("bad user id: got %v, want %v", err, ErrBadUser)
	}
}

func TestRanking(t *testing.T) {
	ix := openTest(t, t.TempDir())
	ix.Add(userA,
		Doc{ID: "text-old", Kind: "email", Text: "about the zebra and other animals", Date: day("2026-01-01")},
		Doc{ID: "title", Kind: "email", Title: "zebra", Text: "animals of the savanna", Date: day("2025-01-01")},
		Doc{ID: "text-new", Kind: "email", Text: "about the zebra and other animals", Date: day("2026-02-01")},
		Doc{ID: "from", Kind: "email", From: "Zebra Crossing <z@example.org>", Text: "animals here", Date: day("2024-01-01")},
		Doc{ID: "twice", Kind: "email", Text: "zebra zebra in a long text about animals and plains", Date: day("2023-01-01")},
	)
	for _, flush := range []bool{false, true} {
		if flush {
			ix.Flush()
		}
		res := search(t, ix, userA, Request{Query: qterm("zebra")})
		want := []string{"title", "from", "twice", "text-new", "text-old"}
		if got := hitIDs(res); !slices.Equal(got, want) {
			t.Errorf("relevance: got %v, want %v", got, want)
		}
		for i := 1; i < len(res.Hits); i++ {
			if res.Hits[i].Score > res.Hits[i-1].Score {
				t.Errorf("scores not descending: %v", res.Hits)
			}
		}
		res = search(t, ix, userA, Request{Query: qterm("animals"), Sort: SortDate})
		want = []string{"text-new", "text-old", "title", "from", "twice"}
		if got := hitIDs(res); !slices.Equal(got, want) {
			t.Errorf("date: got %v, want %v", got, want)
		}
	}
}

func TestPagingAndFilters(t *testing.T) {
	ix := openTest(t, t.TempDir(), func(c *Config) { c.FlushBytes = 4 << 10 })
	var docs []Doc
	for i := range 57 {
		docs = append(docs, Doc{ID: fmt.Sprintf("m%02d", i), RecordID: fmt.Sprintf("r%d", i%3), Kind: "email",
			Text: strings.Repeat("common ", 1+i%5) + fmt.Sprintf("w%d", i), Date: day("2026-01-01").Add(time.Duration(i%7) * time.Hour)})
	}
	ix.Add(userA, docs...)
	for _, sort := range []string{SortRelevance, SortDate} {
		var all []string
		cursor := ""
		for page := 0; ; page++ {
			res := search(t, ix, userA, Request{Query: qterm("common"), Limit: 10, Sort: sort, Cursor: cursor})
			if res.Total != 57 {
				t.Errorf("%s page %d: total %d, want 57", sort, page, res.Total)
			}
			all = append(all, hitIDs(res)...)
			if res.NextCursor == "" {
				if len(res.Hits) != 7 {
					t.Errorf("%s: last page has %d hits, want 7", sort, len(res.Hits))
				}
				break
			}
			if len(res.Hits) != 10 {
				t.Fatalf("%s page %d: %d hits, want 10", sort, page, len(res.Hits))
			}
			cursor = res.NextCursor
		}
		one := search(t, ix, userA, Request{Query: qterm("common"), Limit: 100, Sort: sort})
		if !slices.Equal(all, hitIDs(one)) {
			t.Errorf("%s: pages %v differ from one page %v", sort, all, hitIDs(one))
		}
	}
	if _, err := ix.Search(userA, Request{Query: qterm("common"), Cursor: "bogus!"}); err != ErrBadCursor {
		t.Errorf("bad cursor: got %v, want %v", err, ErrBadCursor)
	}
	res := search(t, ix, userA, Request{Query: qterm("common"), RecordID: "r1", Limit: 100})
	if res.Total != 19 {
		t.Errorf("record filter: total %d, want 19", res.Total)
	}
	for _, h := range res.Hits {
		if h.RecordID != "r1" {
			t.Errorf("record filter: got a hit of %s", h.RecordID)
		}
	}
	res = search(t, ix, userA, Request{Query: qterm("common"), InIDs: []string{"m01", "m02", "zz"}, NinIDs: []string{"m02"}})
	if got := hitIDs(res); !slices.Equal(got, []string{"m01"}) {
		t.Errorf("id filters: got %v, want [m01]", got)
	}
	res = search(t, ix, userA, Request{Query: qterm("w3")})
	if len(res.Hits) != 1 || res.Hits[0].Kind != "email" || res.Hits[0].RecordID != "r0" || !res.Hits[0].Date.Equal(day("2026-01-01").Add(3*time.Hour)) {
		t.Errorf("hit columns: got %+v", res.Hits)
	}
}

func TestTotalIsLowerBound(t *testing.T) {
	ix := openTest(t, t.TempDir())
	var docs []Doc
	for i := range MaxTotal + 5 {
		docs = append(docs, Doc{ID: fmt.Sprint(i), Kind: "email", Text: "same"})
	}
	ix.Add(userA, docs...)
	res := search(t, ix, userA, Request{Query: qterm("same")})
	if res.Total != MaxTotal || !res.TotalIsLowerBound {
		t.Errorf("got total %d lower bound %v, want %d true", res.Total, res.TotalIsLowerBound, MaxTotal)
	}
	ix.Delete(userA, "1", "2", "3", "4", "5")
	res = search(t, ix, userA, Request{Query: qterm("same")})
	if res.Total != MaxTotal || res.TotalIsLowerBound {
		t.Errorf("got total %d lower bound %v, want %d false", res.Total, res.TotalIsLowerBound, MaxTotal)
	}
}

// TestOnQuery: each query, answered or refused, reports its time on the
// index's clock to Config.OnQuery, the service's duration histogram.
func TestOnQuery(t *testing.T) {
	// The merger reads the clock too, from its own goroutine.
	var mu sync.Mutex
	now := time.Unix(1e9, 0)
	var got []time.Duration
	ix := openTest(t, t.TempDir(), func(c *Config) {
		c.Now = func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			now = now.Add(time.Millisecond)
			return now
		}
		c.OnQuery = func(d time.Duration) { got = append(got, d) }
	})
	if _, err := ix.Search(userA, Request{Query: qterm("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(userA, Request{}); !errors.Is(err, ErrBadQuery) {
		t.Fatalf("no query: got %v, want ErrBadQuery", err)
	}
	// The refusal's time is one step of the clock, or more if the
	// merger read the clock meanwhile.
	if len(got) != 2 || got[0] <= 0 || got[1] < time.Millisecond {
		t.Errorf("OnQuery: got %v, want two positive durations, the refusal's at least 1ms", got)
	}
	if s := ix.Stats(); s.Queries != 2 {
		t.Errorf("Stats().Queries: got %d, want 2", s.Queries)
	}
}
