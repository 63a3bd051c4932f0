package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/feed"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// defaultPollInterval is POLL_INTERVAL's default (docs/configuration.md).
const defaultPollInterval = 900 * time.Second

// BenchmarkIdlePollWrites measures what a poll that finds nothing new
// writes to the disk, at the block level (/proc/self/io write_bytes, on
// the file system of the temporary directory, with fsync as in
// production): one user with a Gmail connection (the fake Gmail API, 200
// mails) and a feed connection of 3 feeds, synced once, then polled again
// and again with nothing new, the clock a poll interval further each
// time. bytes/idle-poll is one poll of the 4 sources (commits/idle-poll
// the log lines it appends, each fsynced); MB/day that times
// the polls of a day at the default schedule (every 900 s). The bound is
// 1 MB a day; it is said, not failed on.
func BenchmarkIdlePollWrites(b *testing.B) {
	if _, err := os.Stat("/proc/self/io"); err != nil {
		b.Skip("needs /proc/self/io")
	}
	gm := gmailtest.New(b, gmailtest.Options{Messages: 200})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/atom+xml")
		io.WriteString(w, strings.ReplaceAll(feedAtom, "urn:note:", "urn:"+strings.Trim(r.URL.Path, "/")+":"))
	}))
	b.Cleanup(site.Close)
	urls := []string{site.URL + "/a.xml", site.URL + "/b.xml", site.URL + "/c.xml"}

	dir := b.TempDir()
	clock := &syncClock{t: time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)}
	v, err := vault.New(bytes.Repeat([]byte{7}, vault.KeySize))
	if err != nil {
		b.Fatal(err)
	}
	reg, err := integrations.NewRegistry(gmail.Definition(), feed.Definition())
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]string{
		"GMAIL_OAUTH_CLIENT_ID":     "gmailtest-client",
		"GMAIL_OAUTH_CLIENT_SECRET": "gmailtest-secret",
		"GMAIL_API_BASE_URL":        gm.URL,
	}
	st := storage.New(filepath.Join(dir, "main"), storage.Options{Sync: storage.SyncFsync, Now: clock.Now})
	recs := records.New(st, v, clock.Now)
	sy, err := syncer.New(syncer.Config{Records: recs, Items: items.New(st, v, filepath.Join(dir, "items")),
		Tasks: syncer.NewTasks(st, v), Registry: reg, Client: gm.Client(), Getenv: func(k string) string { return vars[k] },
		PollInterval: defaultPollInterval, Now: clock.Now, Rand: func(int64) int64 { return 0 }})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Open(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if _, err := recs.Connect("u1", gmail.Domain, gm.Credentials()); err != nil {
		b.Fatal(err)
	}
	if _, err := recs.Connect("u1", feed.Domain, integrations.Credentials{Fields: map[string]string{"url": strings.Join(urls, "\n")}}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := sy.RunOnce(ctx); err != nil {
		b.Fatal(err)
	}
	before := gm.Counts()
	written, commits := int64(0), uint64(0)
	b.ResetTimer()
	for range b.N {
		clock.Advance(defaultPollInterval)
		w0, p0 := writeBytes(b), st.Position()
		if err := sy.RunOnce(ctx); err != nil {
			b.Fatal(err)
		}
		written += writeBytes(b) - w0
		if p := st.Position(); p.Gen == p0.Gen {
			commits += p.Seq - p0.Seq
		}
	}
	b.StopTimer()
	if c := gm.Counts(); c.Gets != before.Gets {
		b.Fatalf("the idle polls downloaded %d mails, want none", c.Gets-before.Gets)
	}
	perPoll := float64(written) / float64(b.N)
	perDay := perPoll * float64(24*time.Hour/defaultPollInterval)
	b.ReportMetric(perPoll, "bytes/idle-poll")
	b.ReportMetric(float64(commits)/float64(b.N), "commits/idle-poll")
	b.ReportMetric(perDay/1e6, "MB/day")
	if perDay > 1e6 {
		b.Logf("NOT MET: idle polls of 4 sources write %.2f MB a day at the default schedule, over 1 MB", perDay/1e6)
	}
}

// writeBytes reads write_bytes of /proc/self/io: the bytes this process
// caused to be written to a block device.
func writeBytes(b *testing.B) int64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal(fmt.Errorf("no write_bytes in /proc/self/io"))
	return 0
}
