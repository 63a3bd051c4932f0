package api_test

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
	"searchsvc/integrations/search"
	"searchsvc/storage"
)

// benchQueries are the ten queries of the search figures (as in the
// search package's benchmarks): a common word, a rare word, two words,
// three words, a phrase, a prefix, from:, subject:, OR, NOT.
var benchQueries = []string{
	"free", "zoning", "mailing list", "free software download", `"click here"`,
	"unsub*", "from:yahoo", "subject:money", "linux OR windows", "money -free",
}

// BenchmarkSearchRouteSnippets measures what GET /v1/search adds to the
// index's answer, in process: for each of the twenty hits of a page, the
// item's lookup, its sealed metadata and its sealed content file opened,
// and its snippet. Corpus mails are stored as the sync stores them
// (sealed metadata, sealed content files) and indexed; each of the ten
// queries is asked of the index alone and of the route, alternately.
// extra-ms/query is the difference: what "with snippets" costs.
func BenchmarkSearchRouteSnippets(b *testing.B) {
	raws := mailtest.Corpus(b)
	if len(raws) > 2000 {
		raws = raws[:2000]
	}
	f := newSearchFixture(b)
	rec := f.connectManual("u1", "corpus")
	owner := items.Owner{UserID: rec.UserID, RecordID: rec.ID, Integration: rec.Integration}
	var ops []storage.Op
	var files []items.Staged
	var docs []search.Doc
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for i, raw := range raws {
		m, err := mail.Parse(raw)
		if err != nil {
			continue
		}
		out := &integrations.Item{ProviderID: fmt.Sprintf("corpus-%d", i),
			Title: m.Subject, From: m.From, To: m.To, Date: m.Date, Text: m.Text, Size: int64(len(raw))}
		it, err := f.items().NewItem(owner, out, now)
		if err != nil {
			b.Fatal(err)
		}
		st, err := f.items().Stage(&it, m.Text)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, st)
		ops = append(ops, f.items().InsertOp(it))
		docs = append(docs, search.Doc{ID: it.ID, RecordID: it.RecordID, Integration: it.Integration, Kind: "email",
			Title: m.Subject, From: m.From, To: m.To, Text: m.Text, Date: it.Date})
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
	parsed := make([]search.Node, len(benchQueries))
	for i, q := range benchQueries {
		n, err := search.Parse(q)
		if err != nil {
			b.Fatal(err)
		}
		parsed[i] = n
	}
	var indexTime, routeTime time.Duration
	results := 0
	b.ResetTimer()
	for range b.N {
		for i, q := range benchQueries {
			start := time.Now()
			res, err := f.ix.Search("u1", search.Request{Query: parsed[i], Limit: 20})
			indexTime += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			start = time.Now()
			r := httptest.NewRequest("GET", "/v1/search?limit=20&q="+url.QueryEscape(q), nil)
			r.Header.Set("X-Test-User", "u1")
			w := httptest.NewRecorder()
			f.srv.ServeHTTP(w, r)
			routeTime += time.Since(start)
			if w.Code != 200 {
				b.Fatalf("%s: %d %s", q, w.Code, w.Body)
			}
			results += len(res.Hits)
		}
	}
	n := float64(b.N * len(benchQueries))
	b.ReportMetric(float64(indexTime.Microseconds())/1e3/n, "index-ms/query")
	b.ReportMetric(float64(routeTime.Microseconds())/1e3/n, "route-ms/query")
	b.ReportMetric(float64((routeTime-indexTime).Microseconds())/1e3/n, "extra-ms/query")
	b.ReportMetric(float64(results)/n, "results/query")
	b.ReportMetric(float64(len(docs)), "mails")
}
