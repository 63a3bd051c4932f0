package api_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSuggestRoute: GET /v1/search/suggest completes the last word from
// the caller's own items only: senders first, then words; a query with
// nothing being typed has none, and one over the size limit is 400.
func TestSuggestRoute(t *testing.T) {
	f := newSearchFixture(t)
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.mail.Fill("ann", 3, start)
	f.mail.Fill("bob", 1, start)
	f.connectManual("u1", "ann")
	f.connectManual("u2", "bob")
	f.runOnce()

	get := func(user, q string) (int, map[string]any) {
		t.Helper()
		r := httptest.NewRequest("GET", "/v1/search/suggest?q="+url.QueryEscape(q), nil)
		r.Header.Set("X-Test-User", user)
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		var out map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatalf("q=%s: %d, not JSON: %s", q, w.Code, w.Body)
		}
		return w.Code, out
	}
	list := func(body map[string]any) string {
		var b strings.Builder
		cs, _ := body["completions"].([]any)
		for _, c := range cs {
			m := c.(map[string]any)
			fmt.Fprintf(&b, "%s|%s|%s;", m["kind"], m["text"], m["query"])
		}
		return b.String()
	}
	for _, tc := range []struct {
		user, q, want string
	}{
		{"u1", "lorem Conf", "word|confidential|lorem confidential;"},
		{"u1", "sen", "from|sender2@private.example|from:sender2@private.example;from|sender1@private.example|from:sender1@private.example;" +
			"from|sender0@private.example|from:sender0@private.example;word|sender0|sender0;word|sender1|sender1;word|sender2|sender2;"},
		{"u1", "subj", "title|Subject ann number 2|subject:\"Subject ann number 2\";title|Subject ann number 1|subject:\"Subject ann number 1\";" +
			"title|Subject ann number 0|subject:\"Subject ann number 0\";word|subject|subject;"},
		{"u2", "an", ""}, // "ann" is another user's word
		{"u1", "conf ", ""},
		{"u1", "", ""},
	} {
		code, body := get(tc.user, tc.q)
		if got := list(body); code != 200 || body["operation"] != "item.suggest" || got != tc.want || body["count"] != float64(strings.Count(tc.want, ";")) {
			t.Errorf("%s q=%q: %d %v\n got %s\nwant %s", tc.user, tc.q, code, body["operation"], got, tc.want)
		}
	}
	code, body := get("u1", strings.Repeat("a", 1001))
	if e, _ := body["error"].(map[string]any); code != 400 || e["code"] != "invalid_query" {
		t.Errorf("a long query: %d %v, want 400 invalid_query", code, body)
	}
}
