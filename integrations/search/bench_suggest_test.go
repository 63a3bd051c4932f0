package search

import (
	"runtime"
	"testing"
	"time"
)

// suggestQueries are misspellings of words of the benchmark corpus, each
// with a letter swapped, dropped, doubled or changed, and what Suggest
// must offer for them.
var suggestQueries = []struct{ q, want string }{
	{"monye", "money"},
	{"softwaer", "software"},
	{"sofwtare", "software"},
	{"donwload", "download"},
	{"unsubcsribe", "unsubscribe"},
	{"mailng list", "mailing list"},
	{"windwos", "windows"},
	{"internt", "internet"},
	{"clik here", "click here"},
	{"zonign", "zoning"},
	{"linxu", "linux"},
}

// BenchmarkSuggest times the did-you-mean of GET /v1/search
// (docs/search.md, "Misspelled words") over the shared index of
// benchMails mails: the median and the slowest of the ten misspelled
// queries, each a whole Suggest call, by the clock and by this thread's
// CPU; and the same for `word~` searches of the same words, top 20.
func BenchmarkSuggest(b *testing.B) {
	bb := buildBig(b)
	ix, err := Open(Config{Dir: bb.dir, Vault: testVault})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	fuzzy := make([]Node, len(suggestQueries))
	for i, sq := range suggestQueries {
		got, err := ix.Suggest(userA, sq.q) // and warm the cache
		if testing.Verbose() {
			b.Logf("%q: %q", sq.q, got)
		}
		if err != nil || got != sq.want {
			b.Fatalf("Suggest(%q) = %q, %v; want %q", sq.q, got, err, sq.want)
		}
		w := []byte(sq.q)
		for j := len(w) - 1; j >= 0; j-- { // every word fuzzy
			if j == len(w)-1 || w[j+1] == ' ' {
				w = append(w[:j+1], append([]byte{'~'}, w[j+1:]...)...)
			}
		}
		if fuzzy[i], err = Parse(string(w)); err != nil {
			b.Fatal(err)
		}
		res, err := ix.Search(userA, Request{Query: fuzzy[i], Limit: 20})
		if err != nil || res.Total == 0 {
			b.Fatalf("%s finds nothing (%v)", w, err)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := len(suggestQueries)
	wall, cpu := make([]time.Duration, 2*n), make([]time.Duration, 2*n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i, sq := range suggestQueries {
			start, cpuStart := time.Now(), threadCPU()
			if _, err := ix.Suggest(userA, sq.q); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(start)
			cpu[i] += threadCPU() - cpuStart
			start, cpuStart = time.Now(), threadCPU()
			if _, err := ix.Search(userA, Request{Query: fuzzy[i], Limit: 20}); err != nil {
				b.Fatal(err)
			}
			wall[n+i] += time.Since(start)
			cpu[n+i] += threadCPU() - cpuStart
		}
	}
	b.StopTimer()
	ms := func(d []time.Duration) []float64 {
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v) / float64(b.N) / 1e6
		}
		return out
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{
		{"suggest", wall[:n]}, {"suggest-cpu", cpu[:n]}, {"fuzzy", wall[n:]}, {"fuzzy-cpu", cpu[n:]},
	} {
		median, slowest := medianMax(ms(m.d))
		b.ReportMetric(median, m.name+"-median-ms")
		b.ReportMetric(slowest, m.name+"-slowest-ms")
	}
	b.ReportMetric(float64(bb.mails), "mails")
}
