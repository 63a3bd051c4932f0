package search

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
)

// The issue bounds the memory search adds to the service: what the
// process takes from the system, not only its live heap, since the
// collector lets the heap grow past what is live before it runs. So
// BenchmarkMemoryRSS runs children of this test binary and compares their
// peak resident set (VmHWM): one bulk-indexes the mails while another
// only parses them, as the service without search still would; one
// opens the large index and answers the ten queries while another stays
// idle. Each child sets the service's default collector setting (off
// below the limit) and memory limit (a quarter of the default
// MEMORY_LIMIT_MIB, 48 MiB, above what is live, followed after each
// collection: followLimit), and reads the mails from the compressed
// corpus one at a time, as a sync receives them, so none holds the corpus.
const (
	rssChildEnv  = "SEARCH_RSS_CHILD"
	serviceLimit = 48 << 20 // MEMORY_LIMIT_MIB's default
	serviceGC    = -1       // GC_PERCENT's default, off
)

// BenchmarkMemoryRSS reports the peak RSS search adds while bulk indexing
// (rss-index-MB, at most 64) and while querying the large index
// (rss-query-MB, at most 32), each against a child without search. The
// ten queries keep a few MB in the cache; rss-query-full-MB is the same
// child once queries for other words have filled the cache to its
// budget, as a long-running service's would be.
func BenchmarkMemoryRSS(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("no /proc/self/status: VmHWM is Linux's")
	}
	bb := buildBig(b)
	path := mailtest.CorpusPath(b)
	n := strconv.Itoa(bb.mails)
	for b.Loop() {
	}
	parse := rssChild(b, "parse", "SEARCH_RSS_CORPUS="+path, "SEARCH_RSS_MAILS="+n)
	index := rssChild(b, "index", "SEARCH_RSS_CORPUS="+path, "SEARCH_RSS_MAILS="+n, "SEARCH_RSS_DIR="+b.TempDir())
	idle := rssChild(b, "idle")
	query := rssChild(b, "query", "SEARCH_RSS_DIR="+bb.dir)
	full := rssChild(b, "query-full", "SEARCH_RSS_DIR="+bb.dir)
	b.ReportMetric(float64(parse)/(1<<20), "rss-parse-MB")
	b.ReportMetric(float64(index-parse)/(1<<20), "rss-index-MB")
	b.ReportMetric(float64(query-idle)/(1<<20), "rss-query-MB")
	b.ReportMetric(float64(full-idle)/(1<<20), "rss-query-full-MB")
}

// rssChild runs this test binary as a child in mode and returns its
// VmHWM in bytes.
func rssChild(b *testing.B, mode string, env ...string) int64 {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, rssChildEnv+"="+mode)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "vmhwm "); ok {
			kb, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatalf("child %s: %q", mode, line)
			}
			return kb << 10
		}
	}
	b.Fatalf("child %s reported no vmhwm:\n%s", mode, out)
	return 0
}

// rssChildMain runs the child named by rssChildEnv, prints its VmHWM and
// returns the exit code.
func rssChildMain(mode string) int {
	debug.SetGCPercent(serviceGC)
	followLimit(serviceLimit)
	err := func() error {
		switch mode {
		case "idle":
			return nil
		case "parse", "index":
			n, err := strconv.Atoi(os.Getenv("SEARCH_RSS_MAILS"))
			if err != nil {
				return err
			}
			return rssIndex(os.Getenv("SEARCH_RSS_CORPUS"), n, mode == "index", os.Getenv("SEARCH_RSS_DIR"))
		case "query", "query-full":
			return rssQuery(os.Getenv("SEARCH_RSS_DIR"), mode == "query-full")
		}
		return fmt.Errorf("unknown child %q", mode)
	}()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	hwm, err := vmHWM()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("vmhwm", hwm)
	return 0
}

// followLimit keeps the child's memory limit at what the runtime holds
// after each collection plus a quarter of configured, as the service
// does once its stores are open (limitFollower in the main package's
// memlimit.go, which this mirrors): the child's heap grows by that
// quarter past what search keeps before a collection, not to the limit.
func followLimit(configured int64) {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	var fit func(int)
	fit = func(int) {
		metrics.Read(s)
		held := s[5].Value.Uint64() + s[0].Value.Uint64() - s[1].Value.Uint64() - s[2].Value.Uint64() - s[3].Value.Uint64() - s[4].Value.Uint64()
		debug.SetMemoryLimit(int64(held) + configured/4)
		runtime.AddCleanup(new([64]byte), fit, 0)
	}
	fit(0)
}

// vmHWM is the process's peak resident set in kB.
func vmHWM() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// rssIndex parses n mails from the corpus at path, one at a time (the
// corpus again and again, with fresh ids), and indexes them into an index
// in dir when index is set, as buildBig does.
func rssIndex(path string, n int, index bool, dir string) error {
	var ix *Index
	if index {
		var err error
		if ix, err = Open(Config{Dir: dir, Vault: testVault}); err != nil {
			return err
		}
	}
	batch := make([]Doc, 0, 100)
	add := func() error {
		if ix != nil && len(batch) > 0 {
			if err := ix.Add(userA, batch...); err != nil {
				return err
			}
		}
		batch = batch[:0]
		return nil
	}
	for done := 0; done < n; {
		err := eachMbox(path, func(raw []byte) error {
			if done == n {
				return nil
			}
			done++
			m, err := mail.Parse(raw)
			if err != nil {
				return nil
			}
			batch = append(batch, Doc{ID: newUUID(), RecordID: "rec-1", Integration: "imap", Kind: "email",
				Title: m.Subject, From: m.From, To: m.To, Text: m.Text, Date: m.Date})
			if len(batch) == cap(batch) {
				return add()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := add(); err != nil {
		return err
	}
	if ix == nil {
		return nil
	}
	if err := ix.Flush(); err != nil {
		return err
	}
	settle(ix)
	return ix.Close()
}

// rssQuery opens the index in dir and answers the ten queries for a
// while; with fill, after queries for other words of the index have
// filled the cache.
func rssQuery(dir string, fill bool) error {
	ix, err := Open(Config{Dir: dir, Vault: testVault})
	if err != nil {
		return err
	}
	defer ix.Close()
	if fill {
		if err := fillCache(ix); err != nil {
			return err
		}
	}
	var qs []Node
	for _, s := range benchQueries {
		q, err := Parse(s)
		if err != nil {
			return err
		}
		qs = append(qs, q)
	}
	for start := time.Now(); time.Since(start) < 2*time.Second; {
		for _, q := range qs {
			if _, err := ix.Search(userA, Request{Query: q, Limit: 20}); err != nil {
				return err
			}
		}
	}
	return nil
}

// eachMbox calls fn with each message of the gzipped mbox at path.
func eachMbox(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 64<<20)
	var msg bytes.Buffer
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte("From ")) && msg.Len() > 0 {
			if err := fn(msg.Bytes()); err != nil {
				return err
			}
			msg.Reset()
		}
		msg.Write(line)
		msg.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fn(msg.Bytes())
}

// fillCache queries the stemmed terms of userA's segments, spread over
// the dictionary (every tenth first, then the ones after those, and so
// on; a term at a time, as holding them all would weigh on the figure),
// until the cache is full (it has evicted) and its ring has gone round
// the whole arena, as a long-running service's would have.
func fillCache(ix *Index) error {
	u, err := ix.getUser(userA, false)
	if err != nil || u == nil {
		return fmt.Errorf("no index for %s: %v", userA, err)
	}
	full := func() bool {
		ix.cache.mu.Lock()
		defer ix.cache.mu.Unlock()
		return ix.cache.evicted > 0 && ix.cache.wraps > 0
	}
	for k := range 10 {
		for _, p := range u.parts {
			if p.seg == nil {
				continue
			}
			it := p.seg.dictFrom(0, &blockMemo{})
			for n := 0; it.next(); n++ {
				if n%10 != k || strings.HasPrefix(it.e.term, wordMark) {
					continue
				}
				if full() {
					return nil
				}
				if _, err := ix.Search(userA, Request{Query: Term{Field: FieldAny, Text: it.e.term}, Limit: 20}); err != nil {
					return err
				}
			}
			if it.err != nil {
				return it.err
			}
		}
	}
	return fmt.Errorf("the index's terms did not fill the cache: %d bytes held", ix.Stats().CacheBytes)
}
