package api_test

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
	"searchsvc/storage"
)

// fairSyllables make fairWord's vocabulary, as the root package's
// BenchmarkLoadSearchFairness does: three syllables, so that a prefix of
// two expands to sixteen words.
var fairSyllables = []string{"ka", "ke", "ki", "ko", "ku", "ma", "me", "mi", "mo", "mu", "ta", "te", "ti", "to", "tu", "ra"}

func fairWord(i int) string {
	return fairSyllables[i%16] + fairSyllables[i/16%16] + fairSyllables[i/256%16] + "n"
}

// fairHeavyQuery is the flooding user's query of the fairness benchmark:
// forty prefixes ORed.
func fairHeavyQuery() string {
	var terms []string
	for i := range 40 {
		terms = append(terms, fairWord(i)[:4]+"*")
	}
	return strings.Join(terms, " OR ")
}

// newFairFixture stores and indexes n items of 150 words each of the
// fairness benchmark's vocabulary for user u1, as the sync stores them.
func newFairFixture(b *testing.B, n int) *searchFixture {
	f := newSearchFixture(b)
	rec := f.connectManual("u1", "fair")
	owner := items.Owner{UserID: rec.UserID, RecordID: rec.ID, Integration: rec.Integration}
	var ops []storage.Op
	var files []items.Staged
	var docs []search.Doc
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	x := uint32(12345)
	for i := range n {
		var sb strings.Builder
		for range 150 {
			x = x*1664525 + 1013904223
			sb.WriteString(fairWord(int(x>>20) % 4096))
			sb.WriteByte(' ')
		}
		text := sb.String()
		out := &integrations.Item{ProviderID: fmt.Sprintf("fair-%d", i), Title: fmt.Sprintf("entry %d", i),
			Date: now.Add(-time.Duration(i) * time.Minute), Text: text, Size: int64(len(text))}
		it, err := f.items().NewItem(owner, out, now)
		if err != nil {
			b.Fatal(err)
		}
		st, err := f.items().Stage(&it, text)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, st)
		ops = append(ops, f.items().InsertOp(it))
		docs = append(docs, search.Doc{ID: it.ID, RecordID: it.RecordID, Integration: it.Integration, Kind: "feed",
			Title: out.Title, Text: text, Date: it.Date})
	}
	if err := f.items().Publish(files); err != nil {
		b.Fatal(err)
	}
	if err := f.st.Commit(ops...); err != nil {
		b.Fatal(err)
	}
	if err := f.ix.Add("u1", docs...); err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkFairHeavyQuery is the fairness benchmark's heavy query (forty
// prefixes ORed, 100 results with snippets) over 4,000 feed entries, in
// process, through GET /v1/search: what one of the flood's queries
// costs in time and allocations.
func BenchmarkFairHeavyQuery(b *testing.B) {
	f := newFairFixture(b, 4000)
	target := "/v1/search?limit=100&q=" + url.QueryEscape(fairHeavyQuery())
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("X-Test-User", "u1")
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
