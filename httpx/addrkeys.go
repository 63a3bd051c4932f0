package httpx

import "net/netip"

// AddrKeys are the keys a client address is limited under: the address
// itself for IPv4; for IPv6 its /64, since one IPv6 client usually holds a
// whole /64 and could otherwise walk through it, and also its /56 and /48,
// the blocks a provider delegates to one customer, so that holding a /48
// buys an attacker no more than a household gets (see AddrKeyLimit). The
// login and registration limiters, the body budget and LimitListener all
// count a client by these keys.
func AddrKeys(a netip.Addr) []netip.Prefix {
	a = a.Unmap().WithZone("")
	if !a.Is6() {
		p, _ := a.Prefix(a.BitLen()) // the zero Prefix for the zero Addr
		return []netip.Prefix{p}
	}
	out := make([]netip.Prefix, 0, 3)
	for _, bits := range []int{64, 56, 48} {
		p, _ := a.Prefix(bits)
		out = append(out, p)
	}
	return out
}

// AddrKeyLimit is the limit of an AddrKeys key for a per-address limit
// of limit: limit for an IPv4 address or IPv6 /64, twice that for a /56
// and four times for a /48, room for the several devices of one
// household.
func AddrKeyLimit[N int | int64](p netip.Prefix, limit N) N {
	switch p.Bits() {
	case 56:
		return 2 * limit
	case 48:
		return 4 * limit
	}
	return limit
}
