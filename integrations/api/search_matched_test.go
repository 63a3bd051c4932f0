package api_test

import (
	"net/url"
	"slices"
	"testing"
	"time"
)

// TestSearchMatched: each result names the words of its text the query
// matched, as written there, for the item page to mark; a query whose
// words match only elsewhere (a title) names none.
func TestSearchMatched(t *testing.T) {
	f := newSearchFixture(t)
	f.mail.Fill("ann", 2, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	f.connectManual("u1", "ann")
	f.runOnce()

	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"confidential lorem", []string{"Confidential", "lorem"}},
		{`"dolor sit"`, []string{"dolor", "sit"}},
		{"subject:ann", []string{}},
	} {
		code, body := f.search("u1", "q="+url.QueryEscape(tc.q)+"&sort=date")
		rs, _ := body["results"].([]any)
		if code != 200 || len(rs) != 2 {
			t.Fatalf("q=%s: %d %v", tc.q, code, body)
		}
		for _, r := range rs {
			ws, ok := r.(map[string]any)["matched"].([]any)
			if !ok {
				t.Fatalf("q=%s: a result without matched: %v", tc.q, r)
			}
			got := []string{}
			for _, w := range ws {
				got = append(got, w.(string))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("q=%s: matched %q, want %q", tc.q, got, tc.want)
			}
		}
	}
}
