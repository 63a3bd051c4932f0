package api_test

import (
	"net/url"
	"testing"
	"time"
)

// TestSearchRelaxed: a query of several words that all together find
// fewer than 5 items answers those with most of the words, saying so;
// one that finds no more that way answers as before.
func TestSearchRelaxed(t *testing.T) {
	f := newSearchFixture(t)
	f.mail.Fill("ann", 3, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	f.connectManual("u1", "ann")
	f.runOnce()

	for _, tc := range []struct {
		q       string
		count   float64
		relaxed bool
	}{
		{"confidential lorem zeppelin", 3, true},
		{"confidential lorem ipsum", 3, false},
		{"confidential zeppelin", 0, false}, // two words: both are "most"
	} {
		code, body := f.search("u1", "q="+url.QueryEscape(tc.q))
		got, has := body["relaxed"]
		if code != 200 || body["count"] != tc.count || body["total"] != tc.count || has != tc.relaxed || has && got != true {
			t.Errorf("q=%s: %d count %v total %v relaxed %v, want %v %v", tc.q, code, body["count"], body["total"], got, tc.count, tc.relaxed)
		}
	}
}
