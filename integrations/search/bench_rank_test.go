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

// The ranking benchmark (docs/search.md, "Ranking and freshness") runs
// the queries of a public test collection through the real index and
// reports nDCG@10 and MAP. The collection is in the folder
// SEARCH_RANK_COLLECTION names, in SMART's format: Cranfield 1400 in
// its usual three files (cran.all.1400, cran.qry, cranqrel, with graded
// judgments), or a collection of Glasgow's set in three files named
// X.ALL, X.QRY and X.REL (MEDLINE, CISI; judged relevant or not). The
// repository does not carry them (docs/development.md, "Benchmarks").

// rankEnv names the folder of the collection.
const rankEnv = "SEARCH_RANK_COLLECTION"

// rankDoc is one document of the collection.
type rankDoc struct{ id, title, text string }

// rankQuery is one query: its number in the judgments and its text.
type rankQuery struct {
	num  int
	text string
}

// rankCollection is the documents, the queries in their file's order and
// the graded judgments, by query number and then document id: for
// Cranfield 4 a complete answer down to 1 of minimal interest, for the
// others 1 relevant.
type rankCollection struct {
	name    string
	docs    []rankDoc
	queries []rankQuery
	grades  map[int]map[string]int
}

// loadRank reads the collection, or skips the benchmark without it.
func loadRank(b *testing.B) *rankCollection {
	b.Helper()
	dir := os.Getenv(rankEnv)
	if dir == "" {
		b.Skipf("%s is not set: give it a folder with Cranfield's cran.all.1400, cran.qry and cranqrel, or MEDLINE's or CISI's X.ALL, X.QRY and X.REL (docs/development.md, \"Benchmarks\")", rankEnv)
	}
	if _, err := os.Stat(filepath.Join(dir, "cran.all.1400")); err == nil {
		return loadCranfield(b, dir)
	}
	all, _ := filepath.Glob(filepath.Join(dir, "*.ALL"))
	if len(all) != 1 {
		b.Fatalf("%s: no cran.all.1400 and not one X.ALL", dir)
	}
	return loadSMART(b, strings.TrimSuffix(all[0], ".ALL"))
}

// loadCranfield reads Cranfield 1400, whose judgments number the queries
// in their file's order (the n-th query is number n).
func loadCranfield(b *testing.B, dir string) *rankCollection {
	b.Helper()
	c := &rankCollection{name: "cranfield", grades: map[int]map[string]int{}}
	for _, r := range readDotted(b, filepath.Join(dir, "cran.all.1400")) {
		c.docs = append(c.docs, rankDoc{id: "c" + r['I'], title: r['T'], text: r['W']})
	}
	for i, r := range readDotted(b, filepath.Join(dir, "cran.qry")) {
		c.queries = append(c.queries, rankQuery{num: i + 1, text: r['W']})
	}
	readJudged(b, c, filepath.Join(dir, "cranqrel"), func(code int) int {
		if code < 1 || code > 4 { // -1: no relevant document known
			return 0
		}
		return 5 - code
	})
	if len(c.docs) != 1400 || len(c.queries) != 225 || len(c.grades) < 200 {
		b.Fatalf("%s: %d documents, %d queries, %d judged; want Cranfield's 1400, 225 and 225", dir, len(c.docs), len(c.queries), len(c.grades))
	}
	return c
}

// loadSMART reads base.ALL, base.QRY and base.REL, whose judgments name
// the queries by their .I numbers and hold relevant documents only.
func loadSMART(b *testing.B, base string) *rankCollection {
	b.Helper()
	c := &rankCollection{name: strings.ToLower(filepath.Base(base)), grades: map[int]map[string]int{}}
	for _, r := range readDotted(b, base+".ALL") {
		// The text holds the title, as Cranfield's does, so that plain
		// BM25 ranks on the same words as BM25F.
		text := r['W']
		if r['T'] != "" {
			text = r['T'] + "\n" + text
		}
		c.docs = append(c.docs, rankDoc{id: "c" + r['I'], title: r['T'], text: text})
	}
	for _, r := range readDotted(b, base+".QRY") {
		n, err := strconv.Atoi(r['I'])
		if err != nil {
			b.Fatalf("%s.QRY: query number %q", base, r['I'])
		}
		c.queries = append(c.queries, rankQuery{num: n, text: r['W']})
	}
	readJudged(b, c, base+".REL", func(int) int { return 1 })
	if len(c.docs) < 100 || len(c.grades) < 20 {
		b.Fatalf("%s: %d documents, %d queries judged; want a collection", base, len(c.docs), len(c.grades))
	}
	return c
}

// readJudged reads a file of judgments, a line each: the query number,
// the document number and a code that grade turns into a grade (0: not
// relevant).
func readJudged(b *testing.B, c *rankCollection, path string, grade func(code int) int) {
	b.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		q, _ := strconv.Atoi(f[0])
		code, _ := strconv.Atoi(f[2])
		g := grade(code)
		if g == 0 {
			continue
		}
		if c.grades[q] == nil {
			c.grades[q] = map[string]int{}
		}
		c.grades[q]["c"+f[1]] = g
	}
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
		if len(line) >= 2 && line[0] == '.' && strings.Contains("ITAWBX", line[1:2]) && (len(line) == 2 || line[2] == ' ') {
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
// search engine is measured, through Index.Search and its cursors, over
// every query and over the even-numbered ones alone (the weights were
// chosen on the odd ones):
//
//   - bm25: one field (the text, which holds the title), every word
//     weighed, no proximity: plain BM25, the baseline;
//   - bm25f: the title as the title field, every word weighed, no
//     proximity: the ranking before natural-language queries;
//   - bm25f+quiet: function words weigh nothing (rank.go's
//     quietStopwords), no proximity;
//   - bm25f+quiet+proximity: the service's ranking.
func BenchmarkRanking(b *testing.B) {
	c := loadRank(b)
	for _, v := range []struct {
		name              string
		fields, quiet, px bool
	}{
		{"bm25", false, false, false},
		{"bm25f", true, false, false},
		{"bm25f+quiet", true, true, false},
		{"bm25f+quiet+proximity", true, true, true},
	} {
		b.Run(v.name, func(b *testing.B) {
			ix := rankIndex(b, c, v.fields, v.px)
			ix.allWords = !v.quiet
			var sum, even rankSums
			start := time.Now()
			for range b.N {
				sum, even = rankSums{}, rankSums{}
				for _, q := range c.queries {
					g := c.grades[q.num]
					if len(g) == 0 {
						continue
					}
					ranked := rankRun(b, ix, q.text)
					sum.add(ranked, g)
					if q.num%2 == 0 {
						even.add(ranked, g)
					}
				}
			}
			per := time.Since(start) / time.Duration(b.N*max(1, sum.n))
			b.ReportMetric(sum.ndcg/float64(sum.n), "nDCG@10")
			b.ReportMetric(sum.ap/float64(sum.n), "MAP")
			b.ReportMetric(even.ndcg/float64(max(1, even.n)), "nDCG@10-even")
			b.ReportMetric(even.ap/float64(max(1, even.n)), "MAP-even")
			b.ReportMetric(float64(sum.n), "queries")
			b.ReportMetric(float64(per.Microseconds()), "µs/query")
		})
	}
}

// rankSums adds up the figures of judged queries.
type rankSums struct {
	ndcg, ap float64
	n        int
}

func (s *rankSums) add(ranked []string, grades map[string]int) {
	s.ndcg += ndcgAt(ranked, grades, 10)
	s.ap += averagePrecision(ranked, grades)
	s.n++
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
