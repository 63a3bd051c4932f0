package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// killFeeds serves feeds /f/0 … /f/n-1, each of entries entries with a
// word of their own, so that a sync stores many items in many batches.
func killFeeds(t *testing.T, entries int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/f/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>Feed %d</title>`, n)
		for i := range entries {
			fmt.Fprintf(w, `<item><guid>f%d-e%d</guid><title>Entry %d of feed %d</title>`+
				`<description>word%dx%d and some text about harbour %d</description>`+
				`<pubDate>%s</pubDate></item>`, n, i, i, n, n, i, i,
				time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n*entries+i)*time.Minute).Format(time.RFC1123Z))
		}
		fmt.Fprint(w, `</channel></rss>`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestKillDuringIndexing kills the real binary with SIGKILL, many times,
// while it syncs feeds into the item store and the search index, and
// while a disconnect removes a record's items. After the last kill the
// index is caught up at start (the checkpoint cannot match after a kill)
// and holds exactly the live items of the store: none missing, none
// removed still there. SEARCH_KILL_CYCLES sets the number of kills.
func TestKillDuringIndexing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cycles := 8
	if v, err := strconv.Atoi(os.Getenv("SEARCH_KILL_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	bin := filepath.Join(t.TempDir(), "searchsvc")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	feeds := killFeeds(t, 60)
	dir := t.TempDir()
	env := testEnv(dir)
	env["ALLOW_PRIVATE_TARGETS"] = "true"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env["LISTEN_ADDR"] = ln.Addr().String()
	ln.Close()
	base := "http://" + env["LISTEN_ADDR"]

	start := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitListening(t, stderr)
		go io.Copy(io.Discard, stderr)
		return cmd
	}
	kill := func(cmd *exec.Cmd) {
		cmd.Process.Kill()
		cmd.Wait()
	}
	connect := func(c *client, first, n int) string {
		t.Helper()
		var urls []string
		for i := first; i < first+n; i++ {
			urls = append(urls, fmt.Sprintf("%s/f/%d", feeds.URL, i))
		}
		status, body, _ := c.do("POST", "/v1/user-integrations/feed/credentials",
			map[string]any{"fields": map[string]string{"url": strings.Join(urls, "\n")}})
		if status != 201 {
			t.Fatalf("connect feeds: %d %v", status, body)
		}
		return body["result"].(map[string]any)["id"].(string)
	}

	cmd := start()
	c := newClient(t, base)
	if status, body, _ := c.do("POST", "/v1/auth/register", map[string]string{
		"email": "kim@example.org", "password": "a long enough password", "name": "Kim"}); status != 201 {
		t.Fatalf("register: %d %v", status, body)
	}
	record := connect(c, 0, 8)
	nextFeed := 8
	for i := range cycles {
		time.Sleep(time.Duration(20+rng.IntN(400)) * time.Millisecond)
		kill(cmd)
		cmd = start()
		switch rng.IntN(3) {
		case 0: // a disconnect, and the next record's sync, under way at the kill
			if status, body, _ := c.do("DELETE", "/v1/user-integrations/"+record, nil); status != 200 {
				t.Fatalf("cycle %d: disconnect: %d %v", i, status, body)
			}
			record = connect(c, nextFeed, 4)
			nextFeed += 4
		default: // the sync goes on where it stopped
			c.do("POST", "/v1/user-integrations/"+record+"/sync", nil)
		}
	}
	// The last kill comes once the record has items again (the last cycle
	// may have disconnected the one that had them), while it syncs on.
	c.do("POST", "/v1/user-integrations/"+record+"/sync", nil)
	waitFor(t, "items stored before the last kill", func() bool {
		_, body, _ := c.do("GET", "/v1/items?limit=1", nil)
		return body["count"] == 1.0
	})
	time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
	kill(cmd)

	// The last start, in this process: the catch-up runs, nothing syncs.
	c2, err := loadConfig(envFunc(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.devSecrets(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	a, err := openApp(c2, envFunc(env), log)
	if err != nil {
		t.Fatalf("open after the last kill: %v", err)
	}
	defer a.close(log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.indexer.Run(ctx, a.mainStore.Position()) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the catch-up after the last kill", a.indexer.CaughtUp)

	users := a.syncer.Items().Users()
	if len(users) != 1 {
		t.Fatalf("users with items: %v, want Kim only", users)
	}
	want := a.syncer.Items().LiveIDs(users[0])
	got, err := a.index.IDs(users[0])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 {
		t.Fatal("no item was stored before the kills")
	}
	if !slices.Equal(got, want) {
		missing, extra := 0, 0
		for _, id := range want {
			if _, ok := slices.BinarySearch(got, id); !ok {
				missing++
			}
		}
		for _, id := range got {
			if _, ok := slices.BinarySearch(want, id); !ok {
				extra++
			}
		}
		t.Errorf("after %d kills: the index holds %d items, the store %d live ones (%d missing, %d extra)",
			cycles, len(got), len(want), missing, extra)
	} else {
		t.Logf("%d kills, %d live items, all in the index", cycles, len(want))
	}
}
