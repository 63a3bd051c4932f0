package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations/gmail"
	"searchsvc/integrations/index"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
)

// The data BenchmarkAnswers searches: one person's mailbox of
// answersItems mails, the shared corpus repeated with fresh ids.
const (
	answersItems = 60_000
	// answersVersion names the cached directory with what the index
	// keeps: "4" item texts in packs, indexed with languages, links and
	// marks (a "3" directory's texts in a file each are moved into packs
	// by the start-up sweep, which then runs during the measurement);
	// "3" segments with stored fields of 768 bytes of text
	// (docs/search.md#answers-from-the-index); "2" kept 1,024; "1" was the
	// index before them.
	answersVersion = "4"
)

// answersWide is the 40-word OR query whose time BenchmarkAnswers reports
// as wide-ms.
var answersWide = strings.Join([]string{
	"money", "free", "linux", "windows", "software", "download", "email", "list", "click", "here",
	"business", "offer", "price", "order", "people", "report", "internet", "market", "credit", "company",
	"server", "kernel", "package", "debian", "python", "network", "security", "update", "version", "release",
	"mailing", "subscribe", "remove", "website", "million", "income", "program", "system", "user", "file",
}, " OR ")

// answersDir returns the cached data directory of BenchmarkAnswers under
// os.TempDir, building it first when no complete one is there.
func answersDir(b *testing.B) (string, millionBuilt) {
	b.Helper()
	return cachedBuild(b, fmt.Sprintf("searchsvc-bench-answers-%s-%d", answersVersion, answersItems), func(tmp string) millionBuilt {
		start := time.Now()
		built := buildAnswers(b, tmp)
		built.Seconds = time.Since(start).Seconds()
		return built
	})
}

// buildAnswers writes answersItems items of the first user of
// millionAccounts into dir through the packages, as a sync stores them,
// with their index through the indexer (see buildMillion).
func buildAnswers(b *testing.B, dir string) millionBuilt {
	b.Helper()
	b.Logf("building %d items in %s (once; later runs reuse it)", answersItems, dir)
	corpus := parsedCorpus(b)
	env := piEnv(dir)
	c, err := loadConfig(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	s, err := openStores(c, log)
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry(nil)
	if err != nil {
		b.Fatal(err)
	}
	x, err := index.Open(index.Config{Search: searchConfig(dir, s.vault, c.SearchCacheMB, log), Items: s.items,
		Registry: reg, MaxQueueBytes: 256 << 20, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	var built millionBuilt
	users, recs := millionAccounts(b, s, &built)
	owner := items.Owner{UserID: users[0], RecordID: recs[0], Integration: gmail.Domain}
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Now().UTC()
	for batch := 0; batch*millionBatch < answersItems; batch++ {
		if err := corpusBatch(s, x, owner, corpus, batch*millionBatch, 1, epoch, now); err != nil {
			b.Fatal(err)
		}
		if batch%50 == 49 {
			x.Flush()
		}
	}
	if err := s.main.Commit(s.records.ProgressOp(recs[0], records.Progress{Succeeded: true, Finished: true}, now)); err != nil {
		b.Fatal(err)
	}
	x.Flush()
	settleMerges(b, x)
	st := x.Search().Stats()
	built.IndexBytes, built.IndexWritten, built.Segments = st.BytesOnDisk, st.BytesWritten, st.Segments
	if err := errors.Join(x.Close(s.main.Position()), s.closeStores()); err != nil {
		b.Fatal(err)
	}
	return built
}

// BenchmarkAnswers starts the real binary on one person's mailbox of
// 60,000 mails (built once through the packages and cached under
// os.TempDir; see answersDir) and times GET /v1/search over one
// keep-alive connection, as a person's browser asks it: the ten queries
// of the search benchmark (millionQueries) at limit 20 with their
// snippets, a round to warm the cache, then 10 rounds. It reports
// search-median-ms and search-slowest-ms (the median and the slowest of
// the ten queries' means), search-max-ms (the slowest single answer),
// wide-ms (the mean of the 40-word OR query, answersWide, at limit 100),
// search-cpu-ms (the binary's CPU a query) and index-bytes-per-mail. The
// bounds it is held to (median ≤ 2 ms, slowest ≤ 10 ms, wide ≤ 10 ms) are
// said, NOT MET, without failing. It is skipped under -short.
func BenchmarkAnswers(b *testing.B) {
	if testing.Short() {
		b.Skip("builds 60,000 items (minutes) unless cached")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("needs /proc/PID/stat")
	}
	dir, built := answersDir(b)
	bin := buildBinary(b)
	env := piEnv(dir)
	env["POLL_INTERVAL"] = "86400" // the record is synced: no sync runs while measuring
	b.ResetTimer()
	for range b.N {
		cmd, addr := startBinary(b, bin, env)
		base := "http://" + addr
		waitHealthy(b, base)
		timed := millionClient(b, base, built.Sessions)
		means := make([]time.Duration, len(millionQueries))
		var slowestOne, wide time.Duration
		var cpu time.Duration
		for round := range 11 {
			if round == 1 {
				cpu = procCPU(b, cmd.Process.Pid)
			}
			for i, q := range millionQueries {
				d, body := timed(0, "/v1/search?limit=20&q="+url.QueryEscape(q))
				if round == 0 {
					answersCheck(b, q, body)
				} else {
					means[i] += d / 10
					slowestOne = max(slowestOne, d)
				}
			}
			d, body := timed(0, "/v1/search?limit=100&q="+url.QueryEscape(answersWide))
			if round == 0 {
				answersCheck(b, "the 40 words", body)
			} else {
				wide += d / 10
			}
		}
		cpu = procCPU(b, cmd.Process.Pid) - cpu
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		median, slowest := medianDuration(means), slices.Max(means)
		b.ReportMetric(ms(median), "search-median-ms")
		b.ReportMetric(ms(slowest), "search-slowest-ms")
		b.ReportMetric(ms(slowestOne), "search-max-ms")
		b.ReportMetric(ms(wide), "wide-ms")
		b.ReportMetric(ms(cpu)/float64(10*(len(millionQueries)+1)), "search-cpu-ms")
		b.ReportMetric(float64(built.IndexBytes)/answersItems, "index-bytes-per-mail")
		b.ReportMetric(float64(answersItems), "items")
		b.Logf("queries (mean ms): %s", queryTimes(means))
		if median > 2*time.Millisecond || slowest > 10*time.Millisecond || wide > 10*time.Millisecond {
			b.Logf("NOT MET: search median %.2f ms (bound 2), slowest %.2f ms (bound 10), 40 words %.2f ms (bound 10)",
				ms(median), ms(slowest), ms(wide))
		}
		// Stopped as systemd stops it, so that the next run starts on
		// an index level with the store (killed, its start caught the
		// user up while the queries were measured).
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
}

// answersCheck fails the benchmark unless a search's answer has results,
// each with a title or a snippet: an answer without them would be
// faster for the wrong reason.
func answersCheck(b *testing.B, q string, body []byte) {
	b.Helper()
	var page struct {
		Results []struct {
			Title   string            `json:"title"`
			Snippet []json.RawMessage `json:"snippet"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &page); err != nil || len(page.Results) == 0 {
		b.Fatalf("%s: %v, %d results", q, err, len(page.Results))
	}
	withSnippet := 0
	for _, r := range page.Results {
		if len(r.Snippet) > 0 {
			withSnippet++
		}
	}
	if withSnippet == 0 {
		b.Fatalf("%s: no result with a snippet", q)
	}
}
