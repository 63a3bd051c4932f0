package netguard

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer connects to a user-supplied host:port only when every address
// the host stands for is public. It reads the host itself, before any
// lookup or connection: an IP literal, or a numeric form the C library
// and some resolvers read as an IPv4 address (127.1, 2130706433,
// 0x7f000001, 0177.0.0.1), is checked and dialled as that address, so
// each form of 127.0.0.1 meets the same refusal as 127.0.0.1; a name is
// resolved and every address it resolves to is checked. Only the checked
// addresses are dialled, never the name, so a second lookup cannot answer
// otherwise. The zero Dialer is ready for use.
type Dialer struct {
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address it is given as ip:port; nil means a
	// net.Dialer with a 10-second timeout whose Control checks each
	// address once more at the socket, as PublicOnly does with Allowed.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// FallbackDelay is how long the addresses of the host's first family
	// (IPv6, say) are tried alone before those of the other start in
	// parallel, as net.Dialer does ("Happy Eyeballs"): a host whose IPv6
	// route silently drops packets is then reached over IPv4 at once.
	// 0 means 300 ms.
	FallbackDelay time.Duration
	// Allowed are networks reached even though they are not public (a
	// household's LAN, PRIVATE_TARGETS): none by default. They never
	// open loopback, link-local or metadata addresses, even when they
	// contain them; IPv6 forms embedding an IPv4 address stay refused
	// unless a prefix names that form.
	Allowed []netip.Prefix
}

// DialContext connects to address (host:port) over network ("tcp",
// "tcp4" or "tcp6"), or returns an error wrapping ErrPrivateAddress,
// without any lookup or connection, when the host is an address (in any
// form) that is not public, or without any connection when a name
// resolves to one.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	addrs, err := d.resolve(ctx, network, host)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	for _, a := range addrs {
		if err := d.check(a); err != nil {
			return nil, err
		}
	}
	dial := d.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, Control: d.control}).DialContext
	}
	primaries, fallbacks := byFamily(addrs)
	return d.dialParallel(ctx, dial, network, port, primaries, fallbacks)
}

type dialFunc = func(ctx context.Context, network, address string) (net.Conn, error)

// byFamily splits addrs into those of the first one's family and the
// others, each in the resolver's order.
func byFamily(addrs []netip.Addr) (primaries, fallbacks []netip.Addr) {
	for _, a := range addrs {
		if a.Is4() == addrs[0].Is4() {
			primaries = append(primaries, a)
		} else {
			fallbacks = append(fallbacks, a)
		}
	}
	return primaries, fallbacks
}

// dialParallel tries primaries one by one and, FallbackDelay later or as
// soon as they all failed, fallbacks one by one beside them; the first
// connection wins, the other attempt is cancelled (a connection it makes
// anyway is closed), and with both failed the primaries' error is
// returned.
func (d *Dialer) dialParallel(ctx context.Context, dial dialFunc, network, port string, primaries, fallbacks []netip.Addr) (net.Conn, error) {
	if len(fallbacks) == 0 {
		return dialSerial(ctx, dial, network, port, primaries)
	}
	type result struct {
		c       net.Conn
		err     error
		primary bool
		done    bool
	}
	returned := make(chan struct{})
	defer close(returned)
	results := make(chan result)
	start := func(ctx context.Context, primary bool) {
		as := fallbacks
		if primary {
			as = primaries
		}
		c, err := dialSerial(ctx, dial, network, port, as)
		select {
		case results <- result{c: c, err: err, primary: primary, done: true}:
		case <-returned:
			if c != nil {
				c.Close()
			}
		}
	}
	primaryCtx, cancelPrimary := context.WithCancel(ctx)
	defer cancelPrimary()
	fallbackCtx, cancelFallback := context.WithCancel(ctx)
	defer cancelFallback()
	go start(primaryCtx, true)
	delay := d.FallbackDelay
	if delay <= 0 {
		delay = 300 * time.Millisecond
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	var primary, fallback result
	for {
		select {
		case <-timer.C:
			go start(fallbackCtx, false)
		case r := <-results:
			if r.err == nil {
				return r.c, nil
			}
			if r.primary {
				primary = r
			} else {
				fallback = r
			}
			if primary.done && fallback.done {
				return nil, primary.err
			}
			if r.primary && timer.Stop() {
				// The primaries failed before their head start ran out:
				// the fallbacks start now.
				timer.Reset(0)
			}
		}
	}
}

// dialSerial tries addrs in turn and returns the first connection, or
// the first error.
func dialSerial(ctx context.Context, dial dialFunc, network, port string, addrs []netip.Addr) (net.Conn, error) {
	var first error
	for _, a := range addrs {
		c, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// resolve returns the addresses host stands for: itself when it is an
// address in any form, else what the resolver answers.
func (d *Dialer) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if a, ok := numericIPv4(host); ok {
		return []netip.Addr{a}, nil
	}
	r := d.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ipNet := "ip"
	switch network {
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	}
	addrs, err := r.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	for i, a := range addrs {
		// A resolver may hand an A record back in its IPv4-mapped form;
		// it is the IPv4 address either way.
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

// Client returns an HTTP client that connects through d, uses no proxy
// from the environment, and gives up after timeout.
func (d *Dialer) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:         d.DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConns:        8,
			IdleConnTimeout:     60 * time.Second,
		},
	}
}

// numericIPv4 reads host as the C library's inet_aton does (and with it
// getaddrinfo, and browsers' URL parsers): one to four parts separated by
// dots, each decimal, octal (a leading 0) or hexadecimal (0x), the last
// filling the bytes the others leave; one final dot is allowed, as in a
// URL. ok is false for anything else, which is then a name.
func numericIPv4(host string) (a netip.Addr, ok bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := numericPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		// The last part fills the 4-i bytes left.
		if n >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// numericPart reads one part of a numeric IPv4 form: decimal, octal with
// a leading 0, or hexadecimal with 0x or 0X (0x alone is 0).
func numericPart(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}
