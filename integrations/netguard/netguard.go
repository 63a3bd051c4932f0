// Package netguard keeps connections to user-supplied hosts (a feed URL,
// an IMAP server) on the public internet: without it, anyone who can
// register could make the server probe its own network. An
// administrator who allows private targets makes main leave it out.
package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// ErrPrivateAddress refuses a connection to an address that is not on the
// public internet.
var ErrPrivateAddress = errors.New("not a public internet address")

// Advice is what a refusal tells the user the administrator can set: the
// one setting that allows every address (docs/configuration.md). It
// names neither PRIVATE_TARGETS nor the address a name resolved to, so a
// user learns nothing of the server's network from it.
const Advice = "the administrator can allow it with ALLOW_PRIVATE_TARGETS=true"

// serverOnly are the addresses no Allowed prefix opens, however wide:
// this host itself (loopback, and the unspecified and IPv4-compatible
// forms that reach it), link-local networks, and the cloud providers'
// metadata services, which hand out the machine's credentials. Only
// ALLOW_PRIVATE_TARGETS=true, which leaves the guard out, reaches them.
var serverOnly = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),     // link-local, metadata at 169.254.169.254
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud's metadata service
	netip.MustParsePrefix("::/96"),              // unspecified, loopback, IPv4-compatible
	netip.MustParsePrefix("fe80::/10"),          // link-local
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS's IPv6 metadata service
}

// ServerOnly reports whether every address of p is one no Allowed
// prefix opens (loopback, link-local, metadata): config refuses such a
// PRIVATE_TARGETS entry rather than let it look as if it did something.
func ServerOnly(p netip.Prefix) bool {
	p = p.Masked()
	for _, s := range serverOnly {
		if s.Bits() <= p.Bits() && s.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// nonPublic are the ranges a user-supplied host (a feed URL, an IMAP
// server) may not reach unless the administrator allows it: without this,
// anyone who can register could make the server probe its own network.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"), // link-local, cloud metadata
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"), // documentation (TEST-NET-1)
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("224.0.0.0/3"),     // multicast and reserved
	netip.MustParsePrefix("::/96"),           // unspecified, loopback, IPv4-compatible
	netip.MustParsePrefix("::ffff:0:0/96"),   // IPv4-mapped: a dual-stack socket reaches the IPv4 inside
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT) embeds any IPv4 address
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 can reach private IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/32"),       // Teredo tunnels to an address it embeds
	netip.MustParsePrefix("2001:2::/48"),     // benchmarking
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4 embeds any IPv4 address
	netip.MustParsePrefix("3fff::/20"),       // documentation
	netip.MustParsePrefix("fc00::/7"),        // unique local
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("fec0::/10"),       // site-local: deprecated, still routed inside some sites
	netip.MustParsePrefix("ff00::/8"),        // multicast
}

// PublicOnly is a net.Dialer Control function that refuses any address in
// the ranges above. It runs after name resolution, for every connection a
// client makes (redirects included), so neither a DNS name that resolves
// to 127.0.0.1 nor a redirect to an internal host gets through.
func PublicOnly(network, address string, c syscall.RawConn) error {
	return (&Dialer{}).control(network, address, c)
}

// control is PublicOnly with d's Allowed prefixes.
func (d *Dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrPrivateAddress, address)
	}
	return d.check(ap.Addr())
}

// check refuses a that is not a public internet address, unless one of
// d.Allowed holds it and it is not one of serverOnly.
func (d *Dialer) check(a netip.Addr) error {
	if a.Zone() != "" {
		// A zoned address ([::1%lo]) is link- or interface-scoped, never a
		// public host, and Prefix.Contains would not match it.
		return fmt.Errorf("%w: %s", ErrPrivateAddress, a)
	}
	// Checked as given, then unmapped: a mapped address is refused as such,
	// and what it maps is checked as the IPv4 address it reaches.
	for _, b := range []netip.Addr{a, a.Unmap()} {
		if in(nonPublic, b) && !d.allows(a, b) {
			return fmt.Errorf("%w: %s", ErrPrivateAddress, a)
		}
	}
	return nil
}

// allows reports whether b, a form of a, is in one of d.Allowed and
// neither b nor a is serverOnly.
func (d *Dialer) allows(a, b netip.Addr) bool {
	return in(d.Allowed, b) && !in(serverOnly, a) && !in(serverOnly, b)
}

// in reports whether one of ps contains a.
func in(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
