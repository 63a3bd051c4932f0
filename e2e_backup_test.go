package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

const testFeed = `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>
<item><guid>n1</guid><title>First headline</title><description>first body text</description><pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate></item>
<item><guid>n2</guid><title>Second headline</title><description>second body text</description><pubDate>Tue, 03 Nov 2026 10:00:00 GMT</pubDate></item>
</channel></rss>`

// TestBackupRestoreWhileServing backs up a running server with users,
// sessions and an integration while registrations go on, restores into a
// fresh DATA_DIR and checks everything that was acknowledged before the
// backup started is there.
func TestBackupRestoreWhileServing(t *testing.T) {
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprint(w, testFeed)
	}))
	defer feedSrv.Close()

	env := testEnv(t.TempDir())
	env["STORE_SYNC"] = "fsync"
	env["ALLOW_PRIVATE_TARGETS"] = "true" // the test feed is on 127.0.0.1
	srv := startRun(t, env)
	alice := newClient(t, srv.URL)
	if status, body, _ := alice.do("POST", "/v1/auth/register", map[string]string{"email": "alice@example.org", "password": "a long enough password", "name": "Alice"}); status != 201 {
		t.Fatalf("register: %d %v", status, body)
	}
	status, body, _ := alice.do("POST", "/v1/user-integrations/feed/credentials", map[string]any{"fields": map[string]string{"url": feedSrv.URL + "/rss"}})
	if status != 201 {
		t.Fatalf("connect feed: %d %v", status, body)
	}
	recordID := body["result"].(map[string]any)["id"].(string)
	items := waitItems(t, alice, 2)

	// Registrations keep coming while the backup runs.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := newClient(t, srv.URL)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c.do("POST", "/v1/auth/register", map[string]string{"email": fmt.Sprintf("u%d@example.org", i), "password": "a long enough password", "name": "U"})
		}
	}()
	backupDir := filepath.Join(t.TempDir(), "backup")
	out, err := runCmd(t, env, "backup", backupDir)
	close(stop)
	wg.Wait()
	if err != nil || !strings.Contains(out, "main: ") || !strings.Contains(out, "sessions: ") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if _, err := runCmd(t, env, "backup", backupDir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("backup into a used directory: got %v", err)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}

	fresh := testEnv(t.TempDir())
	fresh["STORE_SYNC"] = "fsync"
	fresh["ALLOW_PRIVATE_TARGETS"] = "true"
	// The same keys as the original: the dev secrets live in DATA_DIR, and
	// are deliberately not part of a backup.
	copyDevSecrets(t, env["DATA_DIR"], fresh["DATA_DIR"])
	if out, err := runCmd(t, fresh, "restore", backupDir); err != nil || !strings.Contains(out, "restored") {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if _, err := runCmd(t, fresh, "restore", backupDir); err == nil || !strings.Contains(err.Error(), "already holds data") {
		t.Errorf("restore over data: got %v", err)
	}
	srv = startRun(t, fresh)
	alice.base = srv.URL
	// Alice's session came back with the session store.
	if status, body, _ := alice.do("GET", "/v1/user/profile", nil); status != 200 || body["result"].(map[string]any)["email"] != "alice@example.org" {
		t.Fatalf("profile after restore: %d %v", status, body)
	}
	status, body, _ = alice.do("GET", "/v1/user-integrations/"+recordID, nil)
	if status != 200 || body["result"].(map[string]any)["status"] != "connected" {
		t.Errorf("integration after restore: %d %v", status, body)
	}
	for _, it := range items {
		id := it.(map[string]any)["id"].(string)
		status, body, _ := alice.do("GET", "/v1/items/"+id, nil)
		if status != 200 || !strings.Contains(jsonString(body["result"]), "body text") {
			t.Errorf("item %s after restore: %d %v", id, status, body)
		}
	}
	c := newClient(t, srv.URL)
	if status, body, _ := c.do("POST", "/v1/auth/login", map[string]string{"email": "alice@example.org", "password": "a long enough password"}); status != 200 {
		t.Errorf("login after restore: %d %v", status, body)
	}
	// A backup does not carry the search index (derived data): the
	// restored server rebuilds it from the items at its first start.
	if _, err := os.Stat(filepath.Join(backupDir, searchDir)); !os.IsNotExist(err) {
		t.Errorf("the backup holds the search index: %v", err)
	}
	waitFor(t, "the restored items found by search", func() bool {
		got, _ := searchIDs(t, alice, "q=headline")
		return len(got) == 2
	})
	if !strings.Contains(srv.Logs.String(), "search index catching up with the store") {
		t.Error("the restored server did not say it rebuilt its index")
	}
}

func copyDevSecrets(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(from, "dev-secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, "dev-secrets.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRotateKey(t *testing.T) {
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, testFeed)
	}))
	defer feedSrv.Close()
	oldKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	newKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	env := testEnv(t.TempDir())
	env["CREDENTIALS_KEY"] = oldKey
	env["ALLOW_PRIVATE_TARGETS"] = "true"
	srv := startRun(t, env)
	c := newClient(t, srv.URL)
	c.do("POST", "/v1/auth/register", map[string]string{"email": "a@example.org", "password": "a long enough password", "name": "A"})
	if status, body, _ := c.do("POST", "/v1/user-integrations/feed/credentials", map[string]any{"fields": map[string]string{"url": feedSrv.URL}}); status != 201 {
		t.Fatalf("connect feed: %d %v", status, body)
	}
	waitItems(t, c, 2)
	if _, err := runCmd(t, env, "rotate-key"); err == nil || !strings.Contains(err.Error(), "CREDENTIALS_KEY_PREVIOUS") {
		t.Errorf("rotate-key without a previous key: got %v", err)
	}
	env["CREDENTIALS_KEY"], env["CREDENTIALS_KEY_PREVIOUS"] = newKey, oldKey
	if _, err := runCmd(t, env, "rotate-key"); err == nil || !strings.Contains(err.Error(), "stop the server first") {
		t.Errorf("rotate-key beside a running server: got %v", err)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(t, env, "rotate-key")
	if err != nil || !strings.Contains(out, "re-sealed 1 integration credentials, 2 items, 1 task or sync state, 1 user and the search index (2 documents) under key") {
		t.Fatalf("rotate-key: %v %q", err, out)
	}
	if out, _ := runCmd(t, env, "rotate-key"); !strings.Contains(out, "re-sealed 0") {
		t.Errorf("second rotate-key: %q, want nothing left", out)
	}

	// The new key alone now opens the items' content and the search
	// index, which needs no rebuild…
	delete(env, "CREDENTIALS_KEY_PREVIOUS")
	srv = startRun(t, env)
	c.base = srv.URL
	if status, body, _ := c.do("POST", "/v1/auth/login", map[string]string{"email": "a@example.org", "password": "a long enough password"}); status != 200 {
		t.Fatalf("login under the new key alone: %d %v", status, body)
	}
	if got, _ := searchIDs(t, c, "q=headline"); len(got) != 2 {
		t.Errorf("search under the new key alone: %v, want 2 results", got)
	}
	if logs := srv.Logs.String(); strings.Contains(logs, "catching up") || strings.Contains(logs, "damaged") {
		t.Errorf("the re-sealed index was rebuilt at start:\n%s", logs)
	}
	for _, it := range waitItems(t, c, 2) {
		id := it.(map[string]any)["id"].(string)
		if status, body, _ := c.do("GET", "/v1/items/"+id, nil); status != 200 || !strings.Contains(jsonString(body), "body text") {
			t.Errorf("item %s under the new key alone: %d %v", id, status, body)
		}
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	// …and the credentials.
	key, _ := base64.StdEncoding.DecodeString(newKey)
	v, err := vault.New(key)
	if err != nil {
		t.Fatal(err)
	}
	st := storage.New(filepath.Join(env["DATA_DIR"], mainStoreDir), storage.Options{Sync: storage.SyncNone})
	recs := records.New(st, v, nil)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	recs.All(func(r records.Record) bool {
		creds, err := recs.Credentials(r)
		if err != nil || creds.Fields["url"] != feedSrv.URL {
			t.Errorf("record %s under the new key alone: %v, %v", r.ID, creds, err)
		}
		n++
		return true
	})
	if n != 1 {
		t.Errorf("records: got %d, want 1", n)
	}
}

// waitItems polls GET /v1/items until the background sync has stored n
// items (bounded), and returns them.
func waitItems(t *testing.T, c *client, n int) []any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body, _ := c.do("GET", "/v1/items", nil)
		if status != 200 {
			t.Fatalf("items: %d %v", status, body)
		}
		if got := body["results"].([]any); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("items: got %v after 30 s, want %d", body["results"], n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestManualTargetsMustBePublic: a user cannot point a feed or an IMAP
// login at the server's own network unless ALLOW_PRIVATE_TARGETS is set;
// nothing is stored and the internal server is never reached.
func TestManualTargetsMustBePublic(t *testing.T) {
	hits := 0
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		fmt.Fprint(w, testFeed)
	}))
	defer internal.Close()
	srv := startRun(t, testEnv(t.TempDir()))
	c := newClient(t, srv.URL)
	c.do("POST", "/v1/auth/register", map[string]string{"email": "m@example.org", "password": "a long enough password", "name": "M"})
	for _, form := range []map[string]any{
		{"url": internal.URL + "/feed"},
		{"url": "http://localhost:" + internal.URL[strings.LastIndex(internal.URL, ":")+1:] + "/feed"},
		// Numeric forms the C library reads as 127.0.0.1, refused before
		// any lookup.
		{"url": "http://127.1:" + internal.URL[strings.LastIndex(internal.URL, ":")+1:] + "/feed"},
		{"url": "http://2130706433:" + internal.URL[strings.LastIndex(internal.URL, ":")+1:] + "/feed"},
		{"url": "http://203.0.113.9/feed"}, // documentation
	} {
		status, body, _ := c.do("POST", "/v1/user-integrations/feed/credentials", map[string]any{"fields": form})
		if status != 400 || !strings.Contains(jsonString(body), "this address is not on the public internet") {
			t.Errorf("feed %v: got %d %v", form, status, body)
		}
	}
	for _, host := range []string{"127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "192.0.2.1", "2001:db8::1"} {
		status, body, _ := c.do("POST", "/v1/user-integrations/imap/credentials", map[string]any{"fields": map[string]any{
			"host": host, "port": 993, "username": "u", "password": "p"}})
		if status != 400 || !strings.Contains(jsonString(body), "this host is not on the public internet") {
			t.Errorf("imap on %s: got %d %v", host, status, body)
		}
	}
	if status, body, _ := c.do("GET", "/v1/user-integrations", nil); status != 200 || body["count"] != 0.0 {
		t.Errorf("records: got %d %v, want none stored", status, body)
	}
	if hits != 0 {
		t.Errorf("the internal server was reached %d times", hits)
	}
}
