package dropbox_test

import (
	"testing"
	"time"

	"searchsvc/integrations/dropbox"
	"searchsvc/integrations/dropbox/dropboxtest"
)

// BenchmarkSyncerDropbox1000Files syncs a Dropbox of 1,000 files of
// eleven types, every fifth over the cap (benchFiles), through the real
// Syncer into a real store: the first sync lists, downloads and extracts
// every file it can read (ms/first-sync), the second, with nothing
// changed, must cost one list_folder/continue and no download.
func BenchmarkSyncerDropbox1000Files(b *testing.B) {
	files := benchFiles(b, 1000)
	b.ReportAllocs()
	var first, secondLists, secondDownloads, downloads, items float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := newSyncRig(b, dropboxtest.Options{Files: files}, dropbox.Config{MaxFileSize: benchCap})
		b.StartTimer()
		t0 := time.Now()
		r.fx.Sync(r.rec)
		first += float64(time.Since(t0).Microseconds()) / 1e3
		c1 := r.fake.Counts()
		if n := r.fx.Count(r.rec); n != 1000 {
			b.Fatalf("first sync: got %d items, want 1,000", n)
		}
		r.fx.Clock.Advance(time.Hour)
		r.fx.Sync(r.rec)
		c2 := r.fake.Counts()
		secondLists += float64(c2.Lists + c2.Continues - c1.Lists - c1.Continues)
		secondDownloads += float64(c2.Downloads - c1.Downloads)
		downloads += float64(c1.Downloads)
		items = 1000
	}
	n := float64(b.N)
	b.ReportMetric(first/n, "ms/first-sync")
	b.ReportMetric(downloads/n, "downloads/first-sync")
	b.ReportMetric(secondLists/n, "lists/second-sync")
	b.ReportMetric(secondDownloads/n, "downloads/second-sync")
	b.ReportMetric(items, "items")
}
