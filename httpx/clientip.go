package httpx

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP returns the address of the client that sent r. The TCP peer is
// the client unless it is one of the trusted proxies; then X-Forwarded-For
// is read from the right, skipping trusted proxies, and the first address
// that is not one is the client. A header from an untrusted peer is
// ignored, so a client cannot choose its own address (and so escape the
// login rate limit).
func ClientIP(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	var addr netip.Addr
	if err == nil {
		addr = peer.Addr().Unmap()
	} else if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		addr = a.Unmap()
	} else {
		return netip.Addr{}
	}
	if !isTrusted(addr, trusted) {
		return addr
	}
	values := r.Header.Values("X-Forwarded-For")
	for i := len(values) - 1; i >= 0; i-- {
		hops := strings.Split(values[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[j]))
			if err != nil {
				return addr // a garbled hop: trust nothing further left
			}
			addr = hop.Unmap()
			if !isTrusted(addr, trusted) {
				return addr
			}
		}
	}
	return addr
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParsePrefixes parses a comma-separated list of CIDRs or single
// addresses (TRUSTED_PROXIES).
func ParsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if strings.Contains(part, "/") {
			p, err := netip.ParsePrefix(part)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR", part)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or CIDR", part)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// SameNetwork reports whether a and b are in the same /24 (IPv4) or /64
// (IPv6): the lenient comparison used for a session's address check, since
// mobile clients move between addresses of one provider.
func SameNetwork(a, b netip.Addr) bool {
	a, b = a.Unmap(), b.Unmap()
	if a.Is4() != b.Is4() {
		return false
	}
	bits := 64
	if a.Is4() {
		bits = 24
	}
	pa, err1 := a.Prefix(bits)
	pb, err2 := b.Prefix(bits)
	return err1 == nil && err2 == nil && pa == pb
}
