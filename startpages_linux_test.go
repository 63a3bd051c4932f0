package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rssFileKB reads RssFile of /proc/self/status, in KiB.
func rssFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// startPagesCanary is written before the release and read after: the
// data segments keep what the program wrote.
var startPagesCanary = []string{"before"}

// TestReleaseStartPages: the binary's read-only pages that start-up
// mapped leave the resident set, and the program goes on: its code runs
// and its data (written, so in a writable mapping) is intact.
func TestReleaseStartPages(t *testing.T) {
	startPagesCanary[0] = "written"
	before := rssFileKB(t)
	releaseStartPages()
	after := rssFileKB(t)
	if after*2 > before {
		t.Errorf("RssFile %d KiB after the release, %d before: want at most half", after, before)
	}
	if startPagesCanary[0] != "written" {
		t.Errorf("data after the release: %q, want %q", startPagesCanary[0], "written")
	}
	if c, err := loadConfig(envFunc(map[string]string{"SESSION_SECURE": "false"})); err != nil || c.MemoryLimit != 48<<20 {
		t.Errorf("code after the release: %v %v", c, err)
	}
}

// TestReleaseAfterStart: the start's pages are released once more when
// the start has settled, and not at all when the service stops first.
func TestReleaseAfterStart(t *testing.T) {
	settled := make(chan time.Time, 1)
	n := 0
	settled <- time.Time{}
	releaseAfterStart(context.Background(), settled, func() { n++ })
	if n != 1 {
		t.Errorf("settled: released %d times, want 1", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	releaseAfterStart(ctx, make(chan time.Time), func() { n++ })
	if n != 1 {
		t.Errorf("stopped first: released %d times in all, want 1", n)
	}
}
