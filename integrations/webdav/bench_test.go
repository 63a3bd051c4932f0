package webdav_test

import (
	"fmt"
	"testing"

	"searchsvc/integrations/webdav"
)

// BenchmarkWebDAVSecondSync is the issue's figure "a second sync of
// 1,000 unchanged files makes PROPFIND requests only (no GET)": 1,000
// text files in 10 folders of a fake WebDAV server over TLS, synced once
// before the timer; each iteration is a second sync, counting the
// requests it makes by method. It fails if a second sync downloads.
func BenchmarkWebDAVSecondSync(b *testing.B) {
	r := newRig(b, webdav.Config{})
	const files = 1000
	for i := range files {
		r.dav.put(fmt.Sprintf("folder%d/file%03d.txt", i%10, i), fmt.Sprintf("words of file %d", i))
	}
	first := r.sync()
	if first["GET"] != files {
		b.Fatalf("first sync: %v, want %d GET", first, files)
	}
	var propfind, get int
	b.ResetTimer()
	for range b.N {
		got := r.sync()
		propfind += got["PROPFIND"]
		get += got["GET"]
	}
	b.StopTimer()
	if get != 0 {
		b.Errorf("second syncs made %d GET requests, want 0", get)
	}
	if n := len(r.byPath()); n != files {
		b.Errorf("%d items, want %d", n, files)
	}
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(propfind)/float64(b.N), "PROPFIND/sync")
	b.ReportMetric(float64(get)/float64(b.N), "GET/sync")
	b.ReportMetric(float64(first["GET"]), "GET-first-sync")
}
