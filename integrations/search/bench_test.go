package search

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
)

// The large benchmarks share one index of benchMails mails (the corpus
// repeated with fresh ids), built once per process into a temporary
// directory: 100,000 under `make bench`, fewer under -benchtime 1x so a
// quick run stays quick. SEARCH_BENCH_MAILS overrides.
func benchMails() int {
	if v, err := strconv.Atoi(os.Getenv("SEARCH_BENCH_MAILS")); err == nil && v > 0 {
		return v
	}
	if f := flag.Lookup("test.benchtime"); f != nil && f.Value.String() == "1x" {
		return 12_000
	}
	return 100_000
}

// benchQueries are the ten queries of the figures: a common word, a rare
// word, two words, three words, a phrase, a prefix, from:, subject:, OR,
// NOT.
var benchQueries = []string{
	"free",
	"zoning",
	"mailing list",
	"free software download",
	`"click here"`,
	"unsub*",
	"from:yahoo",
	"subject:money",
	"linux OR windows",
	"money -free",
}

// built is the shared large index and what building it measured.
type built struct {
	dir       string
	mails     int
	textBytes int64
	seconds   float64
	// CPU time of the whole process while building: on a shared machine
	// the wall clock also counts the other processes.
	cpuSeconds float64
	peakHeap   int64 // above the heap before indexing
	diskBytes  int64
	written    int64
	texts      map[string]string // id to text, for snippets
	segments   int
	flushes    int64
	merges     int64
	// Segment blocks before compression, written and in the final index:
	// their ratio is the merge policy's, without the corpus's repetition,
	// which makes merged segments compress far better than flushed ones.
	plainWritten int64
	plainFinal   int64
	err          error
}

var (
	buildOnce sync.Once
	big       built
)

// TestMain removes the shared index the benchmarks built, unless it was
// SEARCH_BENCH_DIR.
func TestMain(m *testing.M) {
	if mode := os.Getenv(rssChildEnv); mode != "" {
		os.Exit(rssChildMain(mode))
	}
	code := m.Run()
	if big.dir != "" && big.dir != os.Getenv("SEARCH_BENCH_DIR") {
		os.RemoveAll(big.dir)
	}
	os.Exit(code)
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	return liveHeap()
}

// liveHeap is the heap marked live by the last collection: what the
// process holds, without the garbage awaiting the next one.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

func buildBig(b *testing.B) *built {
	b.Helper()
	buildOnce.Do(func() {
		raw := mailtest.Corpus(b)
		big.mails = benchMails()
		if keep := os.Getenv("SEARCH_BENCH_DIR"); keep != "" {
			// For profiling queries: an index built by an earlier run is
			// reused (and the build figures are not measured).
			big.dir = keep
			if _, err := os.Stat(filepath.Join(keep, checkpointName)); err == nil {
				ix, err := Open(Config{Dir: keep, Vault: testVault})
				if err != nil {
					big.err = err
					return
				}
				big.diskBytes, big.segments = ix.Stats().BytesOnDisk, ix.Stats().Segments
				big.err = ix.Close()
				big.seconds, big.textBytes, big.written = 1, 1, 1
				return
			}
		} else if big.dir, big.err = os.MkdirTemp("", "searchbench"); big.err != nil {
			return
		}
		// The texts for snippets are the caller's (it reads them from the
		// items); they are kept for one pass of the corpus, as ids repeat
		// their text every pass.
		big.texts = map[string]string{}
		base := heapInUse()
		var peak atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if v := liveHeap(); v > peak.Load() {
						peak.Store(v)
					}
				}
			}
		})
		start, cpuStart := time.Now(), processCPU()
		// The build ends once indexing is quiet and the merges that calls
		// for are done: the clock skips the quiet time (FlushAfter) rather
		// than the benchmark waiting it out.
		var skip atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(skip.Load())) }
		ix, err := Open(Config{Dir: big.dir, Vault: testVault, Now: now})
		if err != nil {
			big.err = err
			return
		}
		batch := make([]Doc, 0, 100)
		for i := range big.mails {
			m, err := mail.Parse(raw[i%len(raw)])
			if err != nil {
				continue
			}
			d := Doc{ID: newUUID(), RecordID: "rec-1", Integration: "imap", Kind: "email",
				Title: m.Subject, From: m.From, To: m.To, Text: m.Text, Date: m.Date}
			big.textBytes += int64(len(d.Title) + len(d.From) + len(d.Text))
			for _, to := range d.To {
				big.textBytes += int64(len(to))
			}
			batch = append(batch, d)
			if len(batch) == cap(batch) || i == big.mails-1 {
				if big.err = ix.Add(userA, batch...); big.err != nil {
					return
				}
				batch = batch[:0]
			}
		}
		ix.SetCheckpoint(1)
		if big.err = ix.Flush(); big.err != nil {
			return
		}
		skip.Store(int64(time.Hour))
		settle(ix) // the merges the build called for belong to it
		big.err = ix.Close()
		big.seconds = time.Since(start).Seconds()
		big.cpuSeconds = (processCPU() - cpuStart).Seconds()
		close(stop)
		wg.Wait()
		big.peakHeap = peak.Load() - base
		ix2, err := Open(Config{Dir: big.dir, Vault: testVault})
		if err != nil {
			big.err = err
			return
		}
		st := ix2.Stats()
		big.diskBytes, big.segments = st.BytesOnDisk, st.Segments
		big.written = ix.Stats().BytesWritten
		big.flushes, big.merges = ix.Stats().Flushes, ix.Stats().Merges
		big.plainWritten = ix.stats.plainWritten.Load()
		big.plainFinal = plainSize(ix2)
		ix2.Close()
	})
	if big.err != nil {
		b.Fatal(big.err)
	}
	return &big
}

// settle waits until no merge runs or is called for.
func settle(ix *Index) {
	for {
		busy := false
		for _, u := range ix.userList() {
			u.mu.RLock()
			busy = busy || u.merging
			u.mu.RUnlock()
			busy = busy || len(ix.pickMerge(u)) > 0
		}
		if !busy {
			return
		}
		ix.kick(ix.mergeKick)
		time.Sleep(20 * time.Millisecond)
	}
}

// plainSize is the size of every block of the index before compression.
func plainSize(ix *Index) int64 {
	var n int64
	for _, u := range ix.userList() {
		for _, p := range u.parts {
			if p.seg == nil {
				continue
			}
			memo := &blockMemo{}
			for b := range p.seg.offs {
				if plain, err := p.seg.block(uint32(b), memo); err == nil {
					n += int64(len(plain))
				}
			}
		}
	}
	return n
}

// BenchmarkIndexCorpus builds the shared index and reports its figures:
// mails/s (parsing, analysis, sealing and merges included, until Close
// has written everything), the sealed index's size as % of the extracted
// text, bytes written per byte of the final index, the heap held above
// the caller's while indexing, and the segments left.
func BenchmarkIndexCorpus(b *testing.B) {
	bb := buildBig(b)
	for b.Loop() {
	}
	b.ReportMetric(float64(bb.mails), "mails")
	b.ReportMetric(float64(bb.mails)/bb.seconds, "mails/s")
	if bb.cpuSeconds > 0 {
		b.ReportMetric(float64(bb.mails)/bb.cpuSeconds, "mails/cpu-s")
	}
	b.ReportMetric(100*float64(bb.diskBytes)/float64(bb.textBytes), "size-%-of-text")
	b.ReportMetric(float64(bb.written)/float64(bb.diskBytes), "written/final")
	b.ReportMetric(float64(bb.peakHeap)/(1<<20), "index-heap-MB")
	b.ReportMetric(float64(bb.segments), "segments")
	b.ReportMetric(float64(bb.flushes), "flushes")
	b.ReportMetric(float64(bb.plainWritten)/float64(bb.plainFinal), "plain-written/final")
	b.ReportMetric(float64(bb.merges), "merges")
}

// BenchmarkIndexOnce indexes the corpus once, each mail once, into a
// fresh index: the figures of mails that do not repeat (the large index
// repeats the corpus, which DEFLATE partly sees through).
func BenchmarkIndexOnce(b *testing.B) {
	raw := mailtest.Corpus(b)
	var textBytes, disk, written int64
	b.ReportAllocs()
	for b.Loop() {
		dir := b.TempDir()
		ix, err := Open(Config{Dir: dir, Vault: testVault})
		if err != nil {
			b.Fatal(err)
		}
		textBytes = 0
		for _, r := range raw {
			m, err := mail.Parse(r)
			if err != nil {
				continue
			}
			d := Doc{ID: newUUID(), RecordID: "rec-1", Integration: "imap", Kind: "email",
				Title: m.Subject, From: m.From, To: m.To, Text: m.Text, Date: m.Date}
			textBytes += int64(len(d.Title) + len(d.From) + len(d.Text))
			for _, to := range d.To {
				textBytes += int64(len(to))
			}
			if err := ix.Add(userA, d); err != nil {
				b.Fatal(err)
			}
		}
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		written = ix.Stats().BytesWritten
		ix, _ = Open(Config{Dir: dir, Vault: testVault})
		disk = ix.Stats().BytesOnDisk
		ix.Close()
	}
	b.ReportMetric(float64(len(raw)*b.N)/b.Elapsed().Seconds(), "mails/s")
	b.ReportMetric(100*float64(disk)/float64(textBytes), "size-%-of-text")
	b.ReportMetric(float64(written)/float64(disk), "written/final")
}

// BenchmarkOpen opens the shared index.
func BenchmarkOpen(b *testing.B) {
	bb := buildBig(b)
	b.ReportAllocs()
	for b.Loop() {
		ix, err := Open(Config{Dir: bb.dir, Vault: testVault})
		if err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/open")
}

func parsedQueries(b *testing.B) []Node {
	var qs []Node
	for _, s := range benchQueries {
		q, err := Parse(s)
		if err != nil {
			b.Fatalf("%q: %v", s, err)
		}
		qs = append(qs, q)
	}
	return qs
}

// BenchmarkQueries runs the ten queries, top 20 by relevance, over the
// shared index, and reports the median and the slowest query's mean time,
// the heap the open index holds above the caller's while querying, and
// the bytes the queries wrote (none).
func BenchmarkQueries(b *testing.B) {
	benchQueriesWith(b, false)
}

// BenchmarkQueriesSnippets is BenchmarkQueries with a snippet for every
// hit, as GET /v1/search answers.
func BenchmarkQueriesSnippets(b *testing.B) {
	benchQueriesWith(b, true)
}

func benchQueriesWith(b *testing.B, snippets bool) {
	bb := buildBig(b)
	qs := parsedQueries(b)
	texts := snippetTexts(b, bb)
	ix, err := Open(Config{Dir: bb.dir, Vault: testVault})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	for _, q := range qs { // warm the cache once
		ix.Search(userA, Request{Query: q})
	}
	st0 := ix.Stats()
	written := st0.BytesWritten
	sizes := dirSizes(b, bb.dir)
	// CPU time of this thread, beside the wall clock: on a shared machine
	// the wall clock also measures the other processes.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := make([]time.Duration, len(qs))
	per := make([]time.Duration, len(qs))
	totals := make([]int, len(qs))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i, q := range qs {
			start, cpuStart := time.Now(), threadCPU()
			res, err := ix.Search(userA, Request{Query: q, Limit: 20})
			if err != nil {
				b.Fatal(err)
			}
			if snippets {
				for _, h := range res.Hits {
					Snippet(texts[h.ID], q)
				}
			}
			if res.Total == 0 {
				b.Fatalf("%q finds nothing", benchQueries[i])
			}
			per[i] += time.Since(start)
			cpu[i] += threadCPU() - cpuStart
			totals[i] = res.Total
		}
	}
	b.StopTimer()
	// What the open index holds (cache, columns, sparse indexes): the
	// heap with it open, less the heap once it is closed.
	withIndex := heapInUse()
	ms2 := make([]float64, len(per))
	for i, d := range per {
		ms2[i] = float64(d) / float64(b.N) / 1e6
		if testing.Verbose() {
			b.Logf("%-26q %8.3f ms, %8.3f ms CPU, %6d found", benchQueries[i], ms2[i], float64(cpu[i])/float64(b.N)/1e6, totals[i])
		}
	}
	median, slowest := medianMax(ms2)
	b.ReportMetric(median, "median-ms")
	b.ReportMetric(slowest, "slowest-ms")
	cpuMs := make([]float64, len(cpu))
	for i, d := range cpu {
		cpuMs[i] = float64(d) / float64(b.N) / 1e6
	}
	median, slowest = medianMax(cpuMs)
	b.ReportMetric(median, "median-cpu-ms")
	b.ReportMetric(slowest, "slowest-cpu-ms")
	st := ix.Stats()
	if n := st.CacheHits + st.CacheMisses - st0.CacheHits - st0.CacheMisses; n > 0 {
		b.ReportMetric(100*float64(st.CacheMisses-st0.CacheMisses)/float64(n), "cache-miss-%")
	}
	b.ReportMetric(float64(ix.Stats().BytesWritten-written), "query-bytes-written")
	ix.Close()
	b.ReportMetric(float64(withIndex-heapInUse())/(1<<20), "query-heap-MB")
	if after := dirSizes(b, bb.dir); !maps(after, sizes) {
		b.Errorf("queries changed the files under Dir")
	}
}

func medianMax(v []float64) (float64, float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	return (s[(n-1)/2] + s[n/2]) / 2, s[n-1]
}

// snippetTexts maps every id of the shared index to its text; the caller
// of Snippet reads it from the item, so it is not counted as the index's.
func snippetTexts(b *testing.B, bb *built) map[string]string {
	ix, err := Open(Config{Dir: bb.dir, Vault: testVault})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	docs := corpusMails(b)
	ids, _ := ix.IDs(userA)
	texts := make(map[string]string, len(ids))
	for i, id := range ids {
		texts[id] = docs[i%len(docs)].Text
	}
	return texts
}

func dirSizes(b *testing.B, dir string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				out[path] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
			}
		}
		return nil
	})
	return out
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
