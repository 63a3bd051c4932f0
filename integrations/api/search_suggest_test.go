package api_test

import (
	"net/url"
	"testing"
	"time"
)

// TestSearchSuggestion: a word the user's index does not hold gets a
// "did you mean" from that user's own words on the first page, and only
// there; a query whose words are all found has none.
func TestSearchSuggestion(t *testing.T) {
	f := newSearchFixture(t)
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.mail.Fill("ann", 3, start)
	f.mail.Fill("bob", 1, start)
	f.connectManual("u1", "ann")
	f.connectManual("u2", "bob")
	f.runOnce()

	for _, tc := range []struct {
		user, q, want string
		count         float64
	}{
		{"u1", "confidental lorem", "confidential lorem", 0},
		{"u1", "Confidental subject:anm", "confidential subject:ann", 0},
		{"u2", "subject:anm", "", 0}, // "ann" is another user's word
		{"u1", "confidential", "", 3},
		{"u1", "confidental~", "", 3}, // a fuzzy word is left as typed, and finds
	} {
		code, body := f.search(tc.user, "q="+url.QueryEscape(tc.q))
		got, has := body["suggestion"].(string)
		if code != 200 || body["count"] != tc.count || got != tc.want || has != (tc.want != "") {
			t.Errorf("%s q=%s: %d count %v suggestion %q (present %v), want %v %q", tc.user, tc.q, code, body["count"], got, has, tc.count, tc.want)
		}
	}

	code, body := f.search("u1", "q="+url.QueryEscape("lorem OR confidental")+"&limit=1")
	next, _ := body["nextCursor"].(string)
	if code != 200 || body["suggestion"] != "lorem OR confidential" || next == "" {
		t.Fatalf("first page: %d %v", code, body)
	}
	code, body = f.search("u1", "q="+url.QueryEscape("lorem OR confidental")+"&limit=1&cursor="+next)
	if _, has := body["suggestion"]; code != 200 || has || body["count"] != 1.0 {
		t.Errorf("second page: %d %v, want a page without suggestion", code, body)
	}
}
