package search

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The ranking benchmark (docs/search.md, "How results are ranked") runs
// the queries of a public test collection with graded relevance
// judgments through the real index and reports nDCG@10 and MAP. The
// collection is Cranfield 1400 in its usual three files (cran.all.1400,
// cran.qry, cranqrel) in the folder SEARCH_RANK_COLLECTION names; the
// repository does not carry it (docs/development.md, "Benchmarks").

// rankEnv names the folder of the collection.
const rankEnv = "SEARCH_RANK_COLLECTION"

// rankDoc is one document of the collection.
type rankDoc struct{ id, title, text string }

// rankCollection is the documents, the queries in their file's order and
// the graded judgments, by query number (the n-th query is number n) and
// then document id: 4 a complete answer down to 1 of minimal interest.
type rankCollection struct {
	docs    []rankDoc
	queries []string
	grades  map[int]map[string]int
}

// loadRank reads the collection, or skips the benchmark without it.
func loadRank(b *testing.B) *rankCollection {
	b.Helper()
	dir := os.Getenv(rankEnv)
	if dir == "" {
		b.Skipf("%s is not set: give it a folder with Cranfield's cran.all.1400, cran.qry and cranqrel (docs/development.md, \"Benchmarks\")", rankEnv)
	}
	c := &rankCollection{grades: map[int]map[string]int{}}
	for _, r := range readDotted(b, filepath.Join(dir, "cran.all.1400")) {
		c.docs = append(c.docs, rankDoc{id: "c" + r['I'], title: r['T'], text: r['W']})
	}
	for _, r := range readDotted(b, filepath.Join(dir, "cran.qry")) {
		c.queries = append(c.queries, r['W'])
	}
	raw, err := os.ReadFile(filepath.Join(dir, "cranqrel"))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		q, _ := strconv.Atoi(f[0])
		code, _ := strconv.Atoi(f[2])
		if code < 1 || code > 4 { // -1: no relevant document known
			continue
		}
		if c.grades[q] == nil {
			c.grades[q] = map[string]int{}
		}
		c.grades[q]["c"+f[1]] = 5 - code
	}
	if len(c.docs) != 1400 || len(c.queries) != 225 || len(c.grades) < 200 {
		b.Fatalf("%s: %d documents, %d queries, %d judged; want Cranfield's 1400, 225 and 225", dir, len(c.docs), len(c.queries), len(c.grades))
	}
	return c
}

// readDotted reads a file of SMART's format: records started by ".I n",
// fields by a line of a dot and a letter.
func readDotted(b *testing.B, path string) []map[byte]string {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []map[byte]string
	var field byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if len(line) >= 2 && line[0] == '.' && strings.Contains("ITAWB", line[1:2]) && (len(line) == 2 || line[2] == ' ') {
			field = line[1]
			if field == 'I' {
				out = append(out, map[byte]string{'I': strings.TrimSpace(line[2:])})
			}
			continue
		}
		if len(out) > 0 {
			out[len(out)-1][field] += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkRanking reports nDCG@10 and MAP (over the first 1,000
// results) of the collection's queries, each the OR of its words as a
// search engine is measured, through Index.Search and its cursors:
//
//   - bm25: one field (the text, which holds the title), no proximity:
//     plain BM25, the baseline;
//   - bm25f: the title as the title field, without proximity: the
//     ranking before proximity;
//   - bm25f+proximity: the service's ranking.
func BenchmarkRanking(b *testing.B) {
	c := loadRank(b)
	for _, v := range []struct {
		name       string
		fields, px bool
	}{{"bm25", false, false}, {"bm25f", true, false}, {"bm25f+proximity", true, true}} {
		b.Run(v.name, func(b *testing.B) {
			ix := rankIndex(b, c, v.fields, v.px)
			var ndcg, ap float64
			judged := 0
			start := time.Now()
			for range b.N {
				ndcg, ap, judged = 0, 0, 0
				for qi, q := range c.queries {
					if len(c.grades[qi+1]) == 0 {
						continue
					}
					judged++
					ranked := rankRun(b, ix, q)
					ndcg += ndcgAt(ranked, c.grades[qi+1], 10)
					ap += averagePrecision(ranked, c.grades[qi+1])
				}
			}
			per := time.Since(start) / time.Duration(b.N*judged)
			b.ReportMetric(ndcg/float64(judged), "nDCG@10")
			b.ReportMetric(ap/float64(judged), "MAP")
			b.ReportMetric(float64(judged), "queries")
			b.ReportMetric(float64(per.Microseconds()), "µs/query")
		})
	}
}

// rankIndex indexes the collection; fields puts each title in the title
// field, px keeps proximity on.
func rankIndex(b *testing.B, c *rankCollection, fields, px bool) *Index {
	b.Helper()
	ix, err := Open(Config{Dir: b.TempDir(), Vault: testVault, FlushAfter: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	ix.noProximity = !px
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	docs := make([]Doc, 0, len(c.docs))
	for _, d := range c.docs {
		doc := Doc{ID: d.id, RecordID: "rec-1", Integration: "folder", Kind: "file", Text: d.text, Date: date}
		if fields {
			doc.Title = d.title
		}
		docs = append(docs, doc)
	}
	if err := ix.Add(userA, docs...); err != nil {
		b.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		b.Fatal(err)
	}
	return ix
}

// rankRun searches the OR of the query's words and returns the ids of the
// first 1,000 results in order.
func rankRun(b *testing.B, ix *Index, q string) []string {
	b.Helper()
	var or Or
	seen := map[string]bool{}
	Analyze(q, func(t Token) {
		if !seen[t.Term] {
			seen[t.Term] = true
			or.Children = append(or.Children, Term{Field: FieldAny, Text: t.Term})
		}
	})
	var ids []string
	req := Request{Query: or, Limit: MaxLimit}
	for len(ids) < 1000 {
		res, err := ix.Search(userA, req)
		if err != nil {
			b.Fatal(fmt.Errorf("%q: %w", q, err))
		}
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
		}
		if res.NextCursor == "" {
			break
		}
		req.Cursor = res.NextCursor
	}
	return ids[:min(len(ids), 1000)]
}

// ndcgAt is the normalised discounted cumulative gain of the first k
// results, a result's gain its grade.
func ndcgAt(ranked []string, grades map[string]int, k int) float64 {
	var dcg, ideal float64
	for i, id := range ranked[:min(k, len(ranked))] {
		dcg += float64(grades[id]) / math.Log2(float64(i+2))
	}
	var best []int
	for _, g := range grades {
		best = append(best, g)
	}
	slices.Sort(best)
	slices.Reverse(best)
	for i, g := range best[:min(k, len(best))] {
		ideal += float64(g) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// averagePrecision is the mean of the precisions at each relevant result,
// over every judged relevant document.
func averagePrecision(ranked []string, grades map[string]int) float64 {
	if len(grades) == 0 {
		return 0
	}
	var hits, sum float64
	for i, id := range ranked {
		if grades[id] > 0 {
			hits++
			sum += hits / float64(i+1)
		}
	}
	return sum / float64(len(grades))
}
