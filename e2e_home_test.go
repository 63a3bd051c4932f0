package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPrivateTargetsRefusal: a feed or IMAP host on the server's own
// loopback is refused with the sentence naming ALLOW_PRIVATE_TARGETS,
// under the field, even with PRIVATE_TARGETS listing networks as wide as
// every IPv4 address; nothing is stored and the server is never reached.
func TestPrivateTargetsRefusal(t *testing.T) {
	hits := 0
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		fmt.Fprint(w, testFeed)
	}))
	defer internal.Close()
	env := testEnv(t.TempDir())
	env["PRIVATE_TARGETS"] = "192.168.1.0/24, 0.0.0.0/0"
	srv := startRun(t, env)
	c := newClient(t, srv.URL)
	c.do("POST", "/v1/auth/register", map[string]string{"email": "m@example.org", "password": "a long enough password", "name": "M"})
	const advice = "; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true"
	tests := []struct {
		domain, field, want string
		fields              map[string]any
	}{
		{"feed", "url", "this address is not on the public internet" + advice, map[string]any{"url": internal.URL + "/feed"}},
		{"feed", "url", "this address is not on the public internet" + advice, map[string]any{"url": "http://169.254.169.254/latest/meta-data"}},
		{"imap", "host", "this host is not on the public internet" + advice, map[string]any{"host": "127.0.0.1", "port": 993, "username": "u", "password": "p"}},
	}
	for _, tt := range tests {
		status, body, _ := c.do("POST", "/v1/user-integrations/"+tt.domain+"/credentials", map[string]any{"fields": tt.fields})
		want := `[{"field":"fields.` + tt.field + `","message":"` + tt.want + `"}]`
		if e, _ := body["error"].(map[string]any); status != 400 || jsonString(e["details"]) != want {
			t.Errorf("%s %v: got %d %v, want 400 with %s", tt.domain, tt.fields, status, body, want)
		}
	}
	if status, body, _ := c.do("GET", "/v1/user-integrations", nil); status != 200 || body["count"] != 0.0 {
		t.Errorf("records: got %d %v, want none stored", status, body)
	}
	if hits != 0 {
		t.Errorf("the internal server was reached %d times", hits)
	}
}

// TestPrivateTargetsConfig: PRIVATE_TARGETS is read as the CIDRs it
// lists (an address alone is its own network), and is empty by default.
func TestPrivateTargetsConfig(t *testing.T) {
	for v, want := range map[string]string{
		"":                                   "[]",
		"192.168.1.0/24, fd00::/8":           "[192.168.1.0/24 fd00::/8]",
		"10.0.0.7,192.168.1.77/24,0.0.0.0/0": "[10.0.0.7/32 192.168.1.0/24 0.0.0.0/0]",
	} {
		env := testEnv(t.TempDir())
		env["PRIVATE_TARGETS"] = v
		c, err := loadConfig(envFunc(env))
		if err != nil || fmt.Sprint(c.PrivateTargets) != want {
			t.Errorf("PRIVATE_TARGETS=%q: got %v (%v), want %s", v, c.PrivateTargets, err, want)
		}
	}
}

// TestSearchResultSource: a feed entry found by search names its feed
// by the feed's own title (source), not only its integration, and the
// feed record says that title and its last status.
func TestSearchResultSource(t *testing.T) {
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, testFeed)
	}))
	defer feedSrv.Close()
	env := testEnv(t.TempDir())
	env["ALLOW_PRIVATE_TARGETS"] = "true"
	srv := startRun(t, env)
	c := newClient(t, srv.URL)
	c.do("POST", "/v1/auth/register", map[string]string{"email": "a@example.org", "password": "a long enough password", "name": "A"})
	status, body, _ := c.do("POST", "/v1/user-integrations/feed/credentials", map[string]any{"fields": map[string]string{"url": feedSrv.URL}})
	if status != 201 {
		t.Fatalf("connect feed: %d %v", status, body)
	}
	id := body["result"].(map[string]any)["id"].(string)
	waitItems(t, c, 2)
	waitFor(t, "the entries found", func() bool { got, _ := searchIDs(t, c, "q=headline"); return len(got) == 2 })
	status, body, _ = c.do("GET", "/v1/search?q=second", nil)
	results, _ := body["results"].([]any)
	if status != 200 || len(results) != 1 {
		t.Fatalf("search: got %d %v, want one result", status, body)
	}
	if r := results[0].(map[string]any); r["source"] != "News" || r["integration"] != "feed" || r["recordId"] != id {
		t.Errorf("result: got %v, want source News of feed record %s", r, id)
	}
	status, body, _ = c.do("GET", "/v1/user-integrations/"+id, nil)
	want := `[{"source":"` + feedSrv.URL + `","status":"ok","title":"News"}]`
	if got := jsonString(body["result"].(map[string]any)["sourceDetails"]); status != 200 || got != want {
		t.Errorf("record: got %d sourceDetails %s, want %s", status, got, want)
	}
}
