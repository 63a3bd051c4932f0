package httpx

import (
	"net/netip"
	"slices"
	"testing"
)

func TestAddrKeys(t *testing.T) {
	p := func(s string) netip.Prefix { return netip.MustParsePrefix(s) }
	tests := []struct {
		addr string
		want []netip.Prefix
	}{
		{"192.0.2.1", []netip.Prefix{p("192.0.2.1/32")}},
		{"::ffff:192.0.2.1", []netip.Prefix{p("192.0.2.1/32")}},
		{"2001:db8:1:2:aaaa::1", []netip.Prefix{p("2001:db8:1:2::/64"), p("2001:db8:1::/56"), p("2001:db8:1::/48")}},
		{"2001:db8:1:ff:bbbb::2", []netip.Prefix{p("2001:db8:1:ff::/64"), p("2001:db8:1::/56"), p("2001:db8:1::/48")}},
		{"2001:db8:1:100::1", []netip.Prefix{p("2001:db8:1:100::/64"), p("2001:db8:1:100::/56"), p("2001:db8:1::/48")}},
	}
	for _, tt := range tests {
		got := AddrKeys(netip.MustParseAddr(tt.addr))
		if !slices.Equal(got, tt.want) {
			t.Errorf("AddrKeys(%s): got %v, want %v", tt.addr, got, tt.want)
		}
	}
}
