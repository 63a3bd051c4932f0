package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/integrations/oauthtest"
)

// searchMessage is gmailtest's message seq with a body of its own: every
// message holds "ledger", and message 3 alone the rare word "zanzibar",
// in its body only.
func searchMessage(seq int) []byte {
	body := fmt.Sprintf("The ledger for week %d is attached.", seq)
	if seq == 3 {
		body += " The shipment from Zanzibar arrives on Friday."
	}
	s := fmt.Sprintf("From: Sender %[1]d <sender%[1]d@example.org>\nTo: Me <me@example.com>\n"+
		"Subject: Weekly note %[1]d\nDate: %[2]s\nMessage-ID: <%[1]d@example.org>\n"+
		"Content-Type: text/plain; charset=utf-8\n\n%[3]s\n",
		seq, gmailtest.Date(seq).Format(time.RFC1123Z), body)
	return []byte(strings.ReplaceAll(s, "\n", "\r\n"))
}

// connectFakeGmail starts a fake Google holding messages mails and a
// server connected to it, signed in as a new user; it returns the server,
// the user's client, the user's and the record's ids, and the server's
// environment (to restart it on the same DATA_DIR and port).
func connectFakeGmail(t *testing.T, dir string, messages int) (*server, *client, map[string]string, map[string]string) {
	t.Helper()
	const clientID, clientSecret = "client-id-search.apps", "client-secret-search"
	google := oauthtest.New(t, oauthtest.Options{
		ClientID: clientID, ClientSecret: clientSecret, Basic: true, Body: true, Scope: gmail.Scope,
		AuthParams: map[string]string{"access_type": "offline", "prompt": "consent"},
	})
	gmailtest.New(t, gmailtest.Options{Messages: messages, Mux: google.Mux, URL: google.URL,
		Authorized: google.Bearer, Message: searchMessage})
	env := testEnv(dir)
	env["GMAIL_OAUTH_CLIENT_ID"] = clientID
	env["GMAIL_OAUTH_CLIENT_SECRET"] = clientSecret
	env["GMAIL_OAUTH_AUTH_URL"] = google.URL + "/authorize"
	env["GMAIL_OAUTH_TOKEN_URL"] = google.URL + "/token"
	env["GMAIL_API_BASE_URL"] = google.URL
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env["LISTEN_ADDR"] = ln.Addr().String()
	ln.Close()
	env["OAUTH_REDIRECT_BASE_URL"] = "http://" + env["LISTEN_ADDR"]
	if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	env["METRICS_ADDR"] = ln.Addr().String()
	ln.Close()
	srv := startRun(t, env)

	c := newClient(t, srv.URL)
	status, body, _ := c.do("POST", "/v1/auth/register", map[string]string{
		"email": "dora@example.org", "password": "a long enough password", "name": "Dora"})
	if status != 201 {
		t.Fatalf("register: %d %v", status, body)
	}
	userID := body["user"].(map[string]any)["id"].(string)
	status, _, resp := c.do("GET", "/v1/user-integration/oauth/gmail/authorize?userId="+userID, nil)
	if status != 302 {
		t.Fatalf("authorize: got %d, want 302", status)
	}
	authURL := resp.Header.Get("Location")
	au, _ := url.Parse(authURL)
	code := google.Authorize(t, authURL)
	status, _, resp = c.do("GET", "/v1/user-integration/oauth/gmail/callback?code="+url.QueryEscape(code)+
		"&state="+url.QueryEscape(au.Query().Get("state")), nil)
	if status != 302 || !strings.Contains(resp.Header.Get("Location"), "status=success") {
		t.Fatalf("callback: got %d %q", status, resp.Header.Get("Location"))
	}
	status, body, _ = c.do("GET", "/v1/user-integrations", nil)
	if status != 200 || body["count"] != 1.0 {
		t.Fatalf("records: got %d %v", status, body)
	}
	rec := body["results"].([]any)[0].(map[string]any)["id"].(string)
	return srv, c, map[string]string{"user": userID, "record": rec}, env
}

// searchIDs asks GET /v1/search and returns the result ids and the
// answer.
func searchIDs(t *testing.T, c *client, query string) ([]string, map[string]any) {
	t.Helper()
	status, body, _ := c.do("GET", "/v1/search?"+query, nil)
	if status != 200 {
		t.Fatalf("GET /v1/search?%s: %d %v", query, status, body)
	}
	var ids []string
	for _, r := range body["results"].([]any) {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	return ids, body
}

// TestEndToEndSearch syncs a fake Gmail through run and finds a mail by a
// word of its body once it is stored; then checks the answer's shape,
// that another user finds nothing, that the index on disk holds no word
// of the mail, that a restart still finds it, and that a disconnect
// removes it, also after a restart. How soon a stored item is findable
// is not measured here, on the wall clock: the search package's
// TestQueries finds documents still buffered in memory, and the syncer
// tells the indexer of every batch it commits.
func TestEndToEndSearch(t *testing.T) {
	dir := t.TempDir()
	srv, c, ids, env := connectFakeGmail(t, dir, 6)

	// The first sync runs after the connect; wait until message 3 is
	// stored, then until search finds it.
	var itemID string
	waitFor(t, "message 3 synced", func() bool {
		_, body, _ := c.do("GET", "/v1/items?limit=200", nil)
		for _, r := range body["results"].([]any) {
			if m := r.(map[string]any); m["title"] == "Weekly note 3" {
				itemID = m["id"].(string)
			}
		}
		return itemID != ""
	})
	var got []string
	var body map[string]any
	waitFor(t, "q=zanzibar to find message 3", func() bool {
		got, body = searchIDs(t, c, "q=zanzibar")
		return len(got) > 0
	})
	if len(got) != 1 || got[0] != itemID {
		t.Fatalf("q=zanzibar: got %v, want [%s]", got, itemID)
	}
	r := body["results"].([]any)[0].(map[string]any)
	if r["recordId"] != ids["record"] || r["integration"] != "gmail" || r["kind"] != "email" ||
		r["title"] != "Weekly note 3" || r["from"] != "Sender 3 <sender3@example.org>" ||
		r["date"] != gmailtest.Date(3).Format(time.RFC3339) || body["operation"] != "item.search" ||
		body["total"] != 1.0 || body["count"] != 1.0 || body["totalIsLowerBound"] != false {
		t.Errorf("result: got %v in %v", r, body)
	}
	var marked []string
	for _, f := range r["snippet"].([]any) {
		if f := f.(map[string]any); f["match"] == true {
			marked = append(marked, f["text"].(string))
		}
	}
	if len(marked) != 1 || marked[0] != "Zanzibar" {
		t.Errorf("snippet marks %q, want [Zanzibar]: %v", marked, r["snippet"])
	}

	// Every message holds "ledger": all six, newest first by date.
	waitFor(t, "all six mails synced and found", func() bool {
		got, _ := searchIDs(t, c, "q=ledger&sort=date")
		return len(got) == 6
	})
	// A bad query is a 400 that says what and where.
	status, body, _ := c.do("GET", "/v1/search?q="+url.QueryEscape(`"unclosed`), nil)
	if status != 400 || errMessage(body) != "invalid query" || !strings.Contains(jsonString(body), "unclosed quote at 0") {
		t.Errorf("unclosed quote: got %d %v", status, body)
	}

	// The metrics count the index and its queries (Dora, the first user,
	// is the administrator).
	status, body, _ = c.do("GET", "/v1/admin/metrics", nil)
	if status != 200 {
		t.Fatalf("metrics: %d %v", status, body)
	}
	if m := body["result"].(map[string]any)["search"].(map[string]any); m["documents"] != 6.0 || m["users"] != 1.0 ||
		m["catch_up_users_left"] != 0.0 || m["queries"].(float64) < 2 || m["query_ms_mean"].(float64) <= 0 {
		t.Errorf("search metrics: got %v", m)
	}
	// And so does METRICS_ADDR, in the Prometheus text format, with the
	// integration's items and runs, and nothing of Dora's in a label.
	text := scrapeMetrics(t, env["METRICS_ADDR"])
	for _, line := range []string{`searchsvc_items{integration="gmail"} 6`, `searchsvc_index_documents 6`,
		`searchsvc_sync_runs_total{integration="gmail",outcome="error"} 0`} {
		if !strings.Contains(text, line) {
			t.Errorf("METRICS_ADDR /metrics lacks %q", line)
		}
	}
	if !regexp.MustCompile(`(?m)^searchsvc_sync_runs_total\{integration="gmail",outcome="ok"\} [1-9]`).MatchString(text) ||
		!regexp.MustCompile(`(?m)^searchsvc_sync_tasks_total\{integration="gmail",outcome="ok"\} [1-9]`).MatchString(text) {
		t.Errorf("METRICS_ADDR /metrics: no gmail run or task counted ok")
	}
	for _, personal := range []string{"dora@example.org", "Dora", ids["user"], ids["record"], "ledger", "Zanzibar", "zanzibar", "Weekly"} {
		if strings.Contains(text, personal) {
			t.Errorf("METRICS_ADDR /metrics holds %q", personal)
		}
	}

	// Another user finds nothing of Dora's.
	other := newClient(t, srv.URL)
	if status, body, _ := other.do("POST", "/v1/auth/register", map[string]string{
		"email": "eve@example.org", "password": "another long password", "name": "Eve"}); status != 201 {
		t.Fatalf("register eve: %d %v", status, body)
	}
	if got, _ := searchIDs(t, other, "q=zanzibar"); len(got) != 0 {
		t.Errorf("another user found %v", got)
	}

	// After a clean stop the index is on disk, sealed: no word of the
	// mail in any file under DATA_DIR.
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	assertNoPlaintext(t, dir, "zanzibar", "Zanzibar", "ledger", "sender3@example.org", "Weekly note")
	if _, err := os.Stat(filepath.Join(dir, searchDir)); err != nil {
		t.Fatalf("no search index under DATA_DIR: %v", err)
	}

	// A restart finds it again; a disconnect removes it at once, and it
	// stays removed after another restart.
	srv = startRun(t, env)
	c.base = srv.URL
	if got, _ := searchIDs(t, c, "q=zanzibar"); len(got) != 1 || got[0] != itemID {
		t.Fatalf("after a restart: got %v, want [%s]", got, itemID)
	}
	if status, body, _ := c.do("DELETE", "/v1/user-integrations/"+ids["record"], nil); status != 200 {
		t.Fatalf("disconnect: %d %v", status, body)
	}
	if got, _ := searchIDs(t, c, "q=zanzibar"); len(got) != 0 {
		t.Errorf("after the disconnect: got %v, want none", got)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	srv = startRun(t, env)
	c.base = srv.URL
	if got, _ := searchIDs(t, c, "q=ledger"); len(got) != 0 {
		t.Errorf("after the disconnect and a restart: got %v, want none", got)
	}
}

// assertNoPlaintext fails for every file under dir that holds one of the
// words.
func assertNoPlaintext(t *testing.T, dir string, words ...string) {
	t.Helper()
	files := 0
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		files++
		b, _ := os.ReadFile(path)
		for _, w := range words {
			if bytes.Contains(b, []byte(w)) {
				t.Errorf("%s holds %q in plain text", path, w)
			}
		}
		return nil
	})
	if files == 0 {
		t.Fatalf("no file under %s", dir)
	}
}

// waitFor polls cond every 20 ms until it holds. The 30 s only bound a
// failing test; nothing is asserted about how long it took.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReindexAndDamage: `searchsvc reindex` rebuilds the index from the
// items (server stopped), and a flipped byte in a segment is found at
// start and rebuilt in the background while queries keep answering.
func TestReindexAndDamage(t *testing.T) {
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, testFeed)
	}))
	defer feedSrv.Close()
	dir := t.TempDir()
	env := testEnv(dir)
	env["ALLOW_PRIVATE_TARGETS"] = "true"
	srv := startRun(t, env)
	c := newClient(t, srv.URL)
	c.do("POST", "/v1/auth/register", map[string]string{"email": "a@example.org", "password": "a long enough password", "name": "A"})
	if status, body, _ := c.do("POST", "/v1/user-integrations/feed/credentials", map[string]any{"fields": map[string]string{"url": feedSrv.URL}}); status != 201 {
		t.Fatalf("connect feed: %d %v", status, body)
	}
	waitItems(t, c, 2)
	waitFor(t, "the entries found", func() bool { got, _ := searchIDs(t, c, "q=headline"); return len(got) == 2 })
	if _, err := runCmd(t, env, "reindex"); err == nil || !strings.Contains(err.Error(), "stop the server first") {
		t.Errorf("reindex beside a running server: got %v", err)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, searchDir))
	out, err := runCmd(t, env, "reindex")
	if err != nil || !strings.Contains(out, "indexed 2 items of 1 user into "+filepath.Join(dir, searchDir)+" (") {
		t.Fatalf("reindex: %v %q", err, out)
	}
	// The size it says is the index's on disk, written when it closed.
	onDisk, err := dirSize(filepath.Join(dir, searchDir))
	if want := fmt.Sprintf("(%d bytes)\n", onDisk); err != nil || onDisk < 100 || !strings.HasSuffix(out, want) {
		t.Errorf("reindex said %q; the index holds %d bytes (%v)", out, onDisk, err)
	}
	srv = startRun(t, env)
	c.base = srv.URL
	if got, _ := searchIDs(t, c, "q=second"); len(got) != 1 {
		t.Errorf("after reindex: %v, want 1 result", got)
	}
	if strings.Contains(srv.Logs.String(), "catching up") {
		t.Error("the reindexed index was caught up again at start")
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}

	// A flipped byte in the middle of the largest file of the user's index.
	var largest string
	var size int64
	filepath.Walk(filepath.Join(dir, searchDir), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && info.Size() > size {
			largest, size = path, info.Size()
		}
		return nil
	})
	b, err := os.ReadFile(largest)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(largest, b, 0o600); err != nil {
		t.Fatal(err)
	}
	srv = startRun(t, env)
	c.base = srv.URL
	waitFor(t, "the damaged index rebuilt", func() bool { got, _ := searchIDs(t, c, "q=headline"); return len(got) == 2 })
	if logs := srv.Logs.String(); !strings.Contains(logs, "search index caught up") {
		t.Errorf("no rebuild logged after the damage:\n%s", logs)
	}
}
