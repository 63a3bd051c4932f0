package httpx

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	trusted, err := ParsePrefixes("10.0.0.0/8, 192.168.1.1, ::1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, remote string
		xff          []string
		trusted      bool
		want         string
	}{
		{"no proxies configured ignores the header", "203.0.113.9:1234", []string{"1.2.3.4"}, false, "203.0.113.9"},
		{"untrusted peer ignores the header", "203.0.113.9:1234", []string{"1.2.3.4"}, true, "203.0.113.9"},
		{"trusted peer, one hop", "10.1.2.3:1234", []string{"198.51.100.7"}, true, "198.51.100.7"},
		{"client cannot spoof through a proxy", "10.1.2.3:1234", []string{"6.6.6.6, 198.51.100.7"}, true, "198.51.100.7"},
		{"chain of trusted proxies", "10.1.2.3:1234", []string{"198.51.100.7, 192.168.1.1", "10.9.9.9"}, true, "198.51.100.7"},
		{"garbled hop stops the walk", "10.1.2.3:1234", []string{"198.51.100.7, not-an-ip"}, true, "10.1.2.3"},
		{"all trusted", "10.1.2.3:1234", []string{"10.0.0.1"}, true, "10.0.0.1"},
		{"ipv6 loopback proxy", "[::1]:80", []string{"2001:db8::5"}, true, "2001:db8::5"},
		{"mapped v4 peer", "[::ffff:203.0.113.9]:80", nil, true, "203.0.113.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			var tp []netip.Prefix
			if tt.trusted {
				tp = trusted
			}
			if got := ClientIP(r, tp).String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParsePrefixesRejectsGarbage(t *testing.T) {
	for _, bad := range []string{"10.0.0.0/33", "example.com", "1.2.3"} {
		if _, err := ParsePrefixes(bad); err == nil {
			t.Errorf("ParsePrefixes(%q) succeeded, want an error", bad)
		}
	}
}

func TestSameNetwork(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"203.0.113.9", "203.0.113.200", true},
		{"203.0.113.9", "203.0.114.9", false},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"203.0.113.9", "::ffff:203.0.113.10", true},
		{"203.0.113.9", "2001:db8::1", false},
	}
	for _, tt := range tests {
		if got := SameNetwork(netip.MustParseAddr(tt.a), netip.MustParseAddr(tt.b)); got != tt.want {
			t.Errorf("SameNetwork(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
