package feed

import (
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"Mon, 02 Jan 2006 15:04:05 -0700", time.Date(2006, 1, 2, 22, 4, 5, 0, time.UTC)},
		{"Mon, 2 Jan 2006 15:04:05 GMT", time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)},
		{"02 Jan 2006 15:04:05 +0000", time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)},
		{"02 Jan 06 15:04 +0100", time.Date(2006, 1, 2, 14, 4, 0, 0, time.UTC)},
		{"2006-01-02T15:04:05Z", time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)},
		{"2006-01-02", time.Date(2006, 1, 2, 0, 0, 0, 0, time.UTC)},
		{" 2006-01-02T15:04:05+02:00 ", time.Date(2006, 1, 2, 13, 4, 5, 0, time.UTC)},
		{"yesterday", time.Time{}},
		{"", time.Time{}},
	}
	for _, tt := range tests {
		if got := parseDate(tt.in); !got.Equal(tt.want) {
			t.Errorf("parseDate(%q): got %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestHTMLText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"<p>a</p><p>b</p>", "a b"},
		{"x < y and y > z", "x < y and y > z"},
		{"<style>p{}</style>kept<script type=\"x\">gone()</script> too", "kept too"},
		{"a<!-- hidden -->b", "ab"},
		{"&lt;b&gt; &amp;amp; &eacute;", "<b> &amp; é"},
		{"<a href='x'>unclosed", "unclosed"},
		{"broken <b", "broken"},
	}
	for _, tt := range tests {
		if got := htmlText(tt.in); got != tt.want {
			t.Errorf("htmlText(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
