package folder_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/folder"
	"searchsvc/integrations/index"
	"searchsvc/integrations/items"
	"searchsvc/integrations/mail/mailtest"
	"searchsvc/integrations/records"
	"searchsvc/integrations/search"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// indexedRig is a connected folder synced by the real Syncer into a real
// store, with the real search index told of every change, counting the
// files the sync opens.
type indexedRig struct {
	b     *testing.B
	st    *storage.Store
	recs  *records.Records
	sync  *syncer.Syncer
	ix    *index.Indexer
	rec   records.Record
	opens atomic.Int64
}

func newIndexedRig(b *testing.B, dir string) *indexedRig {
	b.Helper()
	data := b.TempDir()
	v, err := vault.New(bytes.Repeat([]byte{7}, vault.KeySize))
	if err != nil {
		b.Fatal(err)
	}
	r := &indexedRig{b: b}
	def := folder.Definition(folder.Config{Roots: []string{filepath.Dir(dir)}, Open: countingOpen(&r.opens)})
	reg, err := integrations.NewRegistry(def)
	if err != nil {
		b.Fatal(err)
	}
	r.st = storage.New(filepath.Join(data, "main"), storage.Options{Sync: storage.SyncNone})
	r.recs = records.New(r.st, v, time.Now)
	store := items.New(r.st, v, filepath.Join(data, "items"))
	r.ix, err = index.Open(index.Config{Search: search.Config{Dir: filepath.Join(data, "search"), Vault: v}, Items: store,
		Registry: reg, MaxQueueBytes: 256 << 20})
	if err != nil {
		b.Fatal(err)
	}
	r.sync, err = syncer.New(syncer.Config{Records: r.recs, Items: store, Tasks: syncer.NewTasks(r.st, v), Registry: reg,
		Workers: 2, Rand: func(int64) int64 { return 0 }, Indexer: r.ix})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.st.Open(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		r.ix.Close(storage.Position{})
		r.st.Close()
	})
	r.rec, err = r.recs.Connect("u1", folder.Domain, integrations.Credentials{Fields: map[string]string{folder.FieldPath: dir}})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// synced is the record's "Items synced".
func (r *indexedRig) synced() int64 {
	r.b.Helper()
	rec, err := r.recs.Get(r.rec.UserID, r.rec.ID)
	if err != nil {
		r.b.Fatal(err)
	}
	return rec.ItemsSynced
}

// run syncs the folder and waits for the index to hold what it stored.
func (r *indexedRig) run() {
	r.b.Helper()
	if err := r.sync.SyncNow(r.rec.UserID, r.rec.ID); err != nil {
		r.b.Fatal(err)
	}
	if err := r.sync.RunOnce(r.b.Context()); err != nil {
		r.b.Fatal(err)
	}
	r.ix.Flush()
}

// cpu returns the process's user and system CPU time.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFolderRescan10000Unchanged measures the figure "a rescan of
// 10,000 unchanged files opens no file and takes ≤ 1 s": a folder of
// 10,000 small text files in 100 sub-folders is synced once (not
// timed), then each iteration syncs it again with nothing changed.
// files-opened/rescan must be 0 (counted through Config.Open, not from
// the clock); s/rescan is the figure (wall clock), cpu-s/rescan the CPU
// time it took.
func BenchmarkFolderRescan10000Unchanged(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "files")
	for i := range 10_000 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("note-%05d.txt", i))
		if i < 100 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "note %d of the benchmark folder", i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r := newIndexedRig(b, dir)
	r.run()
	if n := r.synced(); n != 10_000 {
		b.Fatalf("first scan: %d items, want 10,000", n)
	}
	opens0 := r.opens.Load()
	b.ReportAllocs()
	var wall, used time.Duration
	n := 0
	for b.Loop() {
		t0, c0 := time.Now(), cpu()
		r.run()
		wall += time.Since(t0)
		used += cpu() - c0
		n++
	}
	opened := r.opens.Load() - opens0
	if opened != 0 {
		b.Errorf("rescans opened %d files, want 0", opened)
	}
	if got := r.synced(); got != 10_000 {
		b.Errorf("after the rescans: %d items, want 10,000", got)
	}
	b.ReportMetric(float64(opened)/float64(n), "files-opened/rescan")
	b.ReportMetric(wall.Seconds()/float64(n), "s/rescan")
	b.ReportMetric(used.Seconds()/float64(n), "cpu-s/rescan")
}

// BenchmarkFolderFirstScanCorpus measures the figure "a first scan of the
// shared corpus written out as 6,046 .eml files indexes ≥ 1,000
// files/s": the corpus (../shared/corpora/spamassassin.mbox.gz, read
// where it is) is written as one .eml file per message into a temporary
// folder, outside the timing; each iteration connects it anew and syncs
// it until the search index holds every file. files/s is the figure
// (wall clock), cpu-files/s the same over the CPU time it took.
func BenchmarkFolderFirstScanCorpus(b *testing.B) {
	msgs := mailtest.Corpus(b)
	dir := filepath.Join(b.TempDir(), "mail")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i, raw := range msgs {
		if bytes.HasPrefix(raw, []byte("From ")) {
			if j := bytes.IndexByte(raw, '\n'); j >= 0 {
				raw = raw[j+1:]
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%05d.eml", i)), raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	var wall, used time.Duration
	files := 0
	for b.Loop() {
		b.StopTimer()
		r := newIndexedRig(b, dir)
		b.StartTimer()
		t0, c0 := time.Now(), cpu()
		r.run()
		wall += time.Since(t0)
		used += cpu() - c0
		if got := r.synced(); got != int64(len(msgs)) {
			b.Fatalf("first scan: %d items, want %d", got, len(msgs))
		}
		if r.opens.Load() != int64(len(msgs)) {
			b.Fatalf("first scan opened %d files, want %d", r.opens.Load(), len(msgs))
		}
		files += len(msgs)
	}
	b.ReportMetric(float64(len(msgs)), "files")
	b.ReportMetric(float64(files)/wall.Seconds(), "files/s")
	b.ReportMetric(float64(files)/used.Seconds(), "cpu-files/s")
}
