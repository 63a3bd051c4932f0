package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/auth"
	"searchsvc/integrations"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/index"
	"searchsvc/integrations/items"
	mailparse "searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
	"searchsvc/integrations/records"
	"searchsvc/storage"
)

// Sizes of the data directory BenchmarkMillion builds: ten people's
// mailboxes of 100,000 mails each.
const (
	millionItems = 1_000_000
	millionUsers = 10
	millionBatch = 1000 // items a commit stores, as a sync batch would
	// millionFlushEvery is how many batches a user stores before waiting
	// for the indexer to catch up: what its queues hold (about 30 MB of
	// text a user, within millionQueueBytes) is most of the build's
	// memory, which passed 1 GB at 50 batches.
	millionFlushEvery = 10
	millionQueueBytes = 64 << 20
	// millionVersion names the cached data directory: change it when what
	// buildMillion writes changes, so that no run reuses a directory of
	// another build. The data format (format.go) is part of the name too.
	millionVersion = "2" // 2: item texts in packs
)

// millionBuilt is what buildMillion measured, kept beside the cached
// directory.
type millionBuilt struct {
	Sessions     []string `json:"sessions"` // one session id per user
	Seconds      float64  `json:"seconds"`  // to build it
	IndexBytes   int64    `json:"indexBytes"`
	IndexWritten int64    `json:"indexWritten"` // bytes the index wrote, merges included
	Segments     int      `json:"segments"`
	// The build's CPU time and the building process's peak RSS (VmHWM,
	// reset as the build starts); absent from a directory cached before
	// they were recorded.
	CPUSeconds float64 `json:"cpuSeconds,omitempty"`
	PeakRSS    int64   `json:"peakRSS,omitempty"`
}

// millionCount is how many items BenchmarkMillion builds: millionItems,
// or BENCH_MILLION_ITEMS (a multiple of millionBatch × millionUsers) for
// a quicker look at a smaller store.
func millionCount(b *testing.B) int {
	b.Helper()
	v := os.Getenv("BENCH_MILLION_ITEMS")
	if v == "" {
		return millionItems
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n%(millionBatch*millionUsers) != 0 {
		b.Fatalf("BENCH_MILLION_ITEMS=%q: want a positive multiple of %d", v, millionBatch*millionUsers)
	}
	return n
}

// millionDir returns the cached data directory of BenchmarkMillion's n
// items under os.TempDir, building it first if no complete one is there.
func millionDir(b *testing.B, n int) (string, millionBuilt) {
	b.Helper()
	return cachedBuild(b, fmt.Sprintf("searchsvc-bench-million-%s-%d", millionVersion, n), func(tmp string) millionBuilt {
		// The build's peak is the process's from here on: earlier benchmarks
		// of the same process (make bench) may have had higher ones.
		resetHWM := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
		start, cpu0 := time.Now(), procCPU(b, os.Getpid())
		built := buildMillion(b, tmp, n)
		built.Seconds = time.Since(start).Seconds()
		built.CPUSeconds = (procCPU(b, os.Getpid()) - cpu0).Seconds()
		if hwm, _ := procMemory(b, os.Getpid()); resetHWM {
			built.PeakRSS = hwm
		}
		return built
	})
}

// cachedBuild returns the data directory name (with the data format of
// format.go appended) under os.TempDir and what its build measured, kept
// beside it in a .json file; when no complete one is there, it builds one
// first, with build into a directory of its own renamed when done, so
// that an interrupted build is never taken for a complete one.
func cachedBuild(b *testing.B, name string, build func(dir string) millionBuilt) (string, millionBuilt) {
	b.Helper()
	dir := filepath.Join(os.TempDir(), name+"-"+strings.ReplaceAll(strings.TrimSpace(dataFormat), " ", "-"))
	var built millionBuilt
	if raw, err := os.ReadFile(dir + ".json"); err == nil && json.Unmarshal(raw, &built) == nil {
		if _, err := os.Stat(dir); err == nil {
			return dir, built
		}
	}
	tmp := dir + ".building"
	os.RemoveAll(tmp)
	os.RemoveAll(dir)
	built = build(tmp)
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(built)
	if err := os.WriteFile(dir+".json", raw, 0o600); err != nil {
		b.Fatal(err)
	}
	return dir, built
}

// corpusItem is a corpus mail as a provider gives it, without its raw
// original.
type corpusItem struct {
	title, from, text string
	to                []string
}

func parsedCorpus(b *testing.B) []corpusItem {
	b.Helper()
	var out []corpusItem
	for _, m := range mailtest.Corpus(b) {
		p, err := mailparse.Parse(m)
		if err != nil {
			continue
		}
		out = append(out, corpusItem{title: p.Subject, from: p.From, to: p.To, text: p.Text})
	}
	return out
}

// buildMillion writes n items of millionUsers users into dir
// through the packages, as a sync stores them (sealed metadata, sealed
// content files, the record's progress, the search index through its
// indexer), the users and one session each; the corpus's mails repeated
// with fresh ids, a minute apart.
func buildMillion(b *testing.B, dir string, n int) millionBuilt {
	b.Helper()
	b.Logf("building %d items of %d users in %s (once; later runs reuse it)", n, millionUsers, dir)
	corpus := parsedCorpus(b)
	env := piEnv(dir)
	getenv := func(k string) string { return env[k] }
	c, err := loadConfig(getenv)
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
		Registry: reg, MaxQueueBytes: millionQueueBytes, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	var built millionBuilt
	users, recs := millionAccounts(b, s, &built)
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Now().UTC()
	// One writer a user, as each user's sync would be: on a shared
	// machine they also get more of its cores.
	errs := make([]error, millionUsers)
	var wg sync.WaitGroup
	for u := range millionUsers {
		wg.Go(func() {
			owner := items.Owner{UserID: users[u], RecordID: recs[u], Integration: gmail.Domain}
			for batch := 0; batch*millionBatch*millionUsers < n; batch++ {
				if errs[u] = corpusBatch(s, x, owner, corpus, batch*millionBatch*millionUsers+u, millionUsers, epoch, now); errs[u] != nil {
					return
				}
				if batch%millionFlushEvery == millionFlushEvery-1 {
					x.Flush() // the queues stay within their bound
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	var ops []storage.Op
	for _, r := range recs {
		ops = append(ops, s.records.ProgressOp(r, records.Progress{Succeeded: true, Finished: true}, now))
	}
	if err := s.main.Commit(ops...); err != nil {
		b.Fatal(err)
	}
	x.Flush()
	settleMerges(b, x)
	st := x.Search().Stats()
	built.IndexBytes, built.IndexWritten, built.Segments = st.BytesOnDisk, st.BytesWritten, st.Segments
	if err := x.Close(s.main.Position()); err != nil {
		b.Fatal(err)
	}
	if err := s.closeStores(); err != nil {
		b.Fatal(err)
	}
	return built
}

// corpusBatch stores and indexes a batch of millionBatch items of owner,
// as a sync stores them: the k-th is corpus mail n = first + k×stride,
// dated n minutes after epoch (BenchmarkMillion's users take every
// millionUsers-th mail, BenchmarkAnswers' one user every mail).
func corpusBatch(s *stores, x *index.Indexer, owner items.Owner, corpus []corpusItem, first, stride int, epoch, now time.Time) error {
	ops := make([]storage.Op, 0, millionBatch+1)
	files := make([]items.Staged, 0, millionBatch)
	docs := make([]index.Item, 0, millionBatch)
	for k := range millionBatch {
		n := first + k*stride
		m := corpus[n%len(corpus)]
		pid := fmt.Sprintf("%016x", n)
		out := integrations.Item{ProviderID: pid, Title: m.title, From: m.from, To: m.to,
			Date: epoch.Add(time.Duration(n) * time.Minute), Size: int64(len(m.text)), Text: m.text, Link: gmail.WebURL + pid}
		it, err := s.items.NewItem(owner, &out, now)
		if err != nil {
			return err
		}
		f, err := s.items.Stage(&it, m.text)
		if err != nil {
			return err
		}
		files = append(files, f)
		ops = append(ops, s.items.InsertOp(it))
		docs = append(docs, index.Item{ID: it.ID, RecordID: it.RecordID, Integration: it.Integration,
			Title: m.title, From: m.from, To: m.to, Date: it.Date, Text: m.text})
	}
	if err := s.items.Publish(files); err != nil {
		return err
	}
	ops = append(ops, s.records.ProgressOp(owner.RecordID, records.Progress{Succeeded: true, Items: millionBatch}, now))
	if err := s.main.Commit(ops...); err != nil {
		return err
	}
	x.Index(owner.UserID, docs)
	return nil
}

// millionAccounts makes the users (one precomputed hash), a session and
// a Gmail record each, as synced to the end.
func millionAccounts(b *testing.B, s *stores, built *millionBuilt) (users, recs []string) {
	b.Helper()
	h, err := auth.NewHasher(auth.DefaultParams(), 1)
	if err != nil {
		b.Fatal(err)
	}
	hash, err := h.Hash(context.Background(), piPassword)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	for u := range millionUsers {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", u)
		if err := s.main.Commit(s.users.InsertOp(auth.User{ID: id, Email: fmt.Sprintf("reader%d@example.org", u),
			Name: fmt.Sprintf("Reader %d", u), Role: auth.RoleUser, PasswordHash: hash, CreatedAt: now, UpdatedAt: now})); err != nil {
			b.Fatal(err)
		}
		sess, err := s.sessions.Create(id, netip.AddrFrom4([4]byte{127, 0, 0, 1}), "Mozilla/5.0 (X11; Linux aarch64) Firefox/140.0", "password")
		if err != nil {
			b.Fatal(err)
		}
		rec, err := s.records.Connect(id, gmail.Domain, integrations.Credentials{AccessToken: "unused", TokenType: "Bearer", Scope: gmail.Scope})
		if err != nil {
			b.Fatal(err)
		}
		users, recs = append(users, id), append(recs, rec.ID)
		built.Sessions = append(built.Sessions, sess.ID)
	}
	return users, recs
}

// settleMerges waits until the index has merged what a quiet index merges
// (no merge for 30 s), so the binary starts on an index at rest.
func settleMerges(b *testing.B, x *index.Indexer) {
	b.Helper()
	last, since := x.Search().Stats().Merges, time.Now()
	for time.Since(since) < 30*time.Second {
		time.Sleep(2 * time.Second)
		if m := x.Search().Stats().Merges; m != last {
			last, since = m, time.Now()
		}
	}
}
