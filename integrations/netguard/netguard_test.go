package netguard

import (
	"errors"
	"net/netip"
	"testing"
)

func TestPublicOnly(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"93.184.216.34:443", true},
		{"[2606:2800:220:1::1]:443", true},
		{"127.0.0.1:80", false},
		{"127.8.9.10:80", false},
		{"10.1.2.3:993", false},
		{"172.16.0.1:80", false},
		{"172.32.0.1:80", true},
		{"192.168.1.10:993", false},
		{"169.254.169.254:80", false},
		{"100.64.0.1:80", false},
		{"0.0.0.0:80", false},
		{"[::1]:80", false},
		{"[::ffff:127.0.0.1]:80", false},
		{"[fd00::1]:80", false},
		{"[fe80::1]:80", false},
		{"[64:ff9b::a00:1]:80", false},
		{"[64:ff9b:1::a00:1]:80", false},
		{"[2002:a00:1::1]:80", false},
		{"[::a00:1]:80", false},
		{"[::1%lo]:80", false},
		{"[fe80::1%eth0]:80", false},
		{"[2606:2800:220:1::1%1]:443", false},
		{"[::ffff:8.8.8.8]:80", false},       // IPv4-mapped, even of a public address
		{"[::ffff:0:a00:1]:80", false},       // IPv4-translated 10.0.0.1
		{"[::ffff:0:808:808]:80", false},     // IPv4-translated 8.8.8.8
		{"[2001:0:4136:e378::1]:80", false},  // Teredo
		{"[2001:4860:4860::8888]:443", true}, // public, beside Teredo's /32
		{"[fec0::1]:80", false},              // site-local
		{"[feff::1]:80", false},              // the top of site-local
		{"192.0.2.1:80", false},              // documentation
		{"198.51.100.7:80", false},           // documentation
		{"203.0.113.255:80", false},          // documentation
		{"[2001:db8::1]:80", false},          // documentation
		{"[3fff::1]:80", false},              // documentation
		{"[100::1]:80", false},               // discard-only
		{"[2001:2::1]:80", false},            // benchmarking
		{"198.18.0.1:80", false},             // benchmarking
		{"224.0.0.1:80", false},              // multicast
		{"240.0.0.1:80", false},              // reserved
		{"255.255.255.255:80", false},        // broadcast
		{"[::ffff:0:0]:80", false},           // IPv4-mapped 0.0.0.0
		{"[64:ff9b::7f00:1]:80", false},      // NAT64 of 127.0.0.1
		{"192.0.1.255:80", true},             // beside 192.0.2.0/24
		{"198.51.101.0:80", true},            // beside 198.51.100.0/24
		{"203.0.112.255:80", true},           // beside 203.0.113.0/24
		{"[2001:db9::1]:443", true},          // beside 2001:db8::/32
		{"not-an-address", false},
	}
	for _, tt := range tests {
		err := PublicOnly("tcp", tt.addr, nil)
		if (err == nil) != tt.ok {
			t.Errorf("PublicOnly(%s): got %v, want ok=%v", tt.addr, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("PublicOnly(%s): %v is not ErrPrivateAddress", tt.addr, err)
		}
	}
}

// TestAllowedNetworks: a household's prefixes (PRIVATE_TARGETS) open
// their own addresses and no others, and never loopback, link-local or
// metadata addresses, not even through a prefix as wide as every address.
func TestAllowedNetworks(t *testing.T) {
	d := &Dialer{Allowed: []netip.Prefix{
		netip.MustParsePrefix("192.168.1.0/24"),
		netip.MustParsePrefix("fd00::/8"),
		netip.MustParsePrefix("0.0.0.0/0"),
		netip.MustParsePrefix("::/0"),
	}}
	lan := &Dialer{Allowed: []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24"), netip.MustParsePrefix("fd00::/8")}}
	tests := []struct {
		d    *Dialer
		addr string
		ok   bool
	}{
		{lan, "192.168.1.20:993", true},
		{lan, "[fd12:3456::7]:443", true},
		{lan, "192.168.2.20:993", false},
		{lan, "10.0.0.1:993", false},
		{lan, "[::ffff:192.168.1.20]:993", false}, // an embedding form, not the prefix's
		{lan, "93.184.216.34:443", true},
		{d, "10.0.0.1:993", true},
		{d, "100.64.0.1:993", true},
		{d, "127.0.0.1:80", false},
		{d, "127.8.9.10:80", false},
		{d, "0.0.0.0:80", false},
		{d, "169.254.169.254:80", false},
		{d, "169.254.1.1:80", false},
		{d, "100.100.100.200:80", false},
		{d, "[::1]:80", false},
		{d, "[::]:80", false},
		{d, "[fe80::1]:80", false},
		{d, "[fe80::1%eth0]:80", false},
		{d, "[fd00:ec2::254]:80", false},
		{d, "[::ffff:127.0.0.1]:80", false},
		{d, "[::ffff:169.254.169.254]:80", false},
		{d, "[::7f00:1]:80", false}, // IPv4-compatible 127.0.0.1
	}
	for _, tt := range tests {
		err := tt.d.control("tcp", tt.addr, nil)
		if tt.ok && err != nil {
			t.Errorf("%s: got %v, want allowed", tt.addr, err)
		}
		if !tt.ok && !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("%s: got %v, want ErrPrivateAddress", tt.addr, err)
		}
	}
}

// TestServerOnly: a prefix wholly inside loopback, link-local or a
// metadata address is one PRIVATE_TARGETS cannot open; one that only
// contains them can still open the rest.
func TestServerOnly(t *testing.T) {
	for p, want := range map[string]bool{
		"127.0.0.0/8": true, "127.0.0.1/32": true, "169.254.169.254/32": true, "169.254.0.0/16": true,
		"::1/128": true, "fe80::/64": true, "fd00:ec2::254/128": true, "100.100.100.200/32": true,
		"0.0.0.0/0": false, "192.168.1.0/24": false, "fd00::/8": false, "100.64.0.0/10": false, "::/0": false,
	} {
		if got := ServerOnly(netip.MustParsePrefix(p)); got != want {
			t.Errorf("ServerOnly(%s) = %v, want %v", p, got, want)
		}
	}
}
