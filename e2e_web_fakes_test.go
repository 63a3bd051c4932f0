package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// The stand-ins TestBrowser talks to: a feed with a hostile entry, and the
// search answer of the spec for builds without GET /v1/search.

// stubSearch answers GET /v1/search as the spec describes it, for a build
// without the route: "zeppelin" finds the zeppelin entry and, on a second
// page, the hostile one; "quokka" finds the hostile entry with a snippet
// whose fragments are markup.
func stubSearch(q url.Values, items map[string]map[string]any) (int, []byte) {
	result := func(it map[string]any, snippet ...map[string]any) map[string]any {
		return map[string]any{"id": it["id"], "recordId": it["integrationId"], "integration": it["integration"],
			"kind": "entry", "title": it["title"], "from": it["from"], "date": it["date"], "score": 1.5, "snippet": snippet}
	}
	frag := func(text string, match bool) map[string]any {
		if match {
			return map[string]any{"text": text, "match": true}
		}
		return map[string]any{"text": text}
	}
	body := map[string]any{"operation": "item.search", "results": []any{}, "count": 0, "total": 0}
	switch query := strings.ToLower(q.Get("q")); {
	case query == "zeppelin" && q.Get("cursor") == "":
		body["results"] = []any{result(items["zeppelin"], frag("The ", false), frag("zeppelin", true), frag(" crossed the lake at dawn.", false))}
		body["count"], body["total"], body["nextCursor"] = 1, 2, "next"
	case query == "zeppelin" && q.Get("cursor") == "next":
		body["results"] = []any{result(items["quokka"], frag("Quokka ", false), frag("zeppelin", true))}
		body["count"], body["total"] = 1, 2
	case query == "quokka":
		body["results"] = []any{result(items["quokka"], frag("Quokka", true), frag(` <img src=x onerror="window.__pwned=6"> <script>window.__pwned=7</script>`, false))}
		body["count"], body["total"] = 1, 1
	}
	raw, _ := json.Marshal(body)
	return http.StatusOK, raw
}

// The hostile entry's title and text as the feed parser makes them: markup
// that would set window.__pwned if it were ever parsed as HTML.
const (
	hostileTitle = `<script>window.__pwned=1</script>Quokka <img src=x onerror="window.__pwned=2">`
	hostileText  = `Quokka <img src=x onerror="window.__pwned=3"> <script>window.__pwned=4</script> is not HTML.`
)

// fakeFeed is an httptest RSS feed with an ordinary and a hostile entry;
// the hostile one's guid is a javascript: address the app must not link.
type fakeFeed struct {
	*httptest.Server
	hits atomic.Int64
}

func newFakeFeed(t *testing.T) *fakeFeed {
	t.Helper()
	f := &fakeFeed{}
	esc := func(s string) string { // as a feed escapes markup inside a title
		s = strings.ReplaceAll(s, "&", "&amp;")
		s = strings.ReplaceAll(s, "<", "&lt;")
		return strings.ReplaceAll(s, ">", "&gt;")
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/feed.xml" {
			http.NotFound(w, r)
			return
		}
		f.hits.Add(1)
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Test feed</title><link>%[1]s/</link>
<item><title>Zeppelin over the lake</title><link>%[1]s/zeppelin</link><guid>%[1]s/zeppelin</guid>
<author>pilot@example.org (Pilot)</author><pubDate>Mon, 02 Nov 2026 09:00:00 +0000</pubDate>
<description>The zeppelin crossed the lake at dawn.</description></item>
<item><title>%[2]s</title><guid isPermaLink="false">javascript:window.__pwned=5</guid>
<pubDate>Tue, 03 Nov 2026 09:00:00 +0000</pubDate>
<description>%[3]s</description></item>
</channel></rss>`, f.URL, esc(esc(hostileTitle)), esc(esc(hostileText)))
	}))
	t.Cleanup(f.Close)
	return f
}

// searchRouteExists reports whether this build answers GET /v1/search: a
// route that needs a session answers 401 to a request without one.
func searchRouteExists(t *testing.T, base string) bool {
	t.Helper()
	resp, err := http.Get(base + "/v1/search?q=x")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error struct{ Message string } }
	json.NewDecoder(resp.Body).Decode(&body)
	return !(resp.StatusCode == http.StatusNotFound && body.Error.Message == "not found")
}
