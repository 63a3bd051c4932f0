package netguard

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeResolver answers from its map and records each lookup; no query
// leaves the process.
type fakeResolver struct {
	hosts   map[string][]string
	lookups []string
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.lookups = append(r.lookups, host)
	var out []netip.Addr
	for _, s := range r.hosts[host] {
		out = append(out, netip.MustParseAddr(s))
	}
	if out == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

// fakeNet is a resolver and a dialer the test controls: Dial records the
// address and refuses, so no packet is ever sent.
type fakeNet struct {
	fakeResolver
	mu    sync.Mutex // the two families are dialled from two goroutines
	dials []string
}

func (n *fakeNet) dialer() *Dialer {
	return &Dialer{Resolver: &n.fakeResolver, Dial: func(_ context.Context, _, address string) (net.Conn, error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.dials = append(n.dials, address)
		return nil, errDialed
	}}
}

var errDialed = errors.New("the test dialer refuses every connection")

// TestDialerRefusesBeforeDialing: every form a host may take of an
// address that is not public (an IP literal, a numeric form the C library
// reads as IPv4, a name resolving to one) gets the same error as the
// plain address, before any connection, and a numeric form is never
// looked up as a name.
func TestDialerRefusesBeforeDialing(t *testing.T) {
	const loopback = "not a public internet address: 127.0.0.1"
	tests := []struct {
		address string
		want    string
		lookup  bool // whether the host is a name the resolver is asked about
	}{
		{"127.0.0.1:993", loopback, false},
		{"127.1:993", loopback, false},
		{"2130706433:993", loopback, false},
		{"0x7f000001:993", loopback, false},
		{"0X7F000001:993", loopback, false},
		{"0177.0.0.1:993", loopback, false},
		{"0x7f.1:993", loopback, false},
		{"127.0.1:993", loopback, false},
		{"017700000001:993", loopback, false},
		{"127.0.0.1.:993", loopback, false},
		{"localhost:993", loopback, true},
		{"mixed.example:993", loopback, true}, // one public and one loopback address
		{"10.1:993", "not a public internet address: 10.0.0.1", false},
		{"0xa9fea9fe:80", "not a public internet address: 169.254.169.254", false},
		{"192.0.2.1:80", "not a public internet address: 192.0.2.1", false},
		{"198.51.100.7:80", "not a public internet address: 198.51.100.7", false},
		{"203.0.113.9:80", "not a public internet address: 203.0.113.9", false},
		{"3405803785:80", "not a public internet address: 203.0.113.9", false},
		{"[2001:db8::1]:80", "not a public internet address: 2001:db8::1", false},
		{"docs.example:80", "not a public internet address: 2001:db8::5", true},
		{"[::ffff:127.0.0.1]:80", "not a public internet address: ::ffff:127.0.0.1", false},
		{"[fe80::1%eth0]:80", "not a public internet address: fe80::1%eth0", false},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			n := &fakeNet{fakeResolver: fakeResolver{hosts: map[string][]string{
				"localhost":     {"127.0.0.1"},
				"mixed.example": {"93.184.216.34", "127.0.0.1"},
				"docs.example":  {"2001:db8::5"},
			}}}
			c, err := n.dialer().DialContext(context.Background(), "tcp", tt.address)
			if c != nil {
				c.Close()
			}
			if !errors.Is(err, ErrPrivateAddress) || err.Error() != tt.want {
				t.Errorf("DialContext(%s): got %v, want %q (ErrPrivateAddress)", tt.address, err, tt.want)
			}
			if len(n.dials) != 0 {
				t.Errorf("DialContext(%s) dialled %v, want no dial", tt.address, n.dials)
			}
			if looked := len(n.lookups) > 0; looked != tt.lookup {
				t.Errorf("DialContext(%s) looked up %v, want a lookup: %v", tt.address, n.lookups, tt.lookup)
			}
		})
	}
}

// TestDialerDialsCheckedAddresses: a public host is dialled at the
// addresses that were checked, never by name (a second lookup could
// answer otherwise); a numeric form is dialled as the address it is.
func TestDialerDialsCheckedAddresses(t *testing.T) {
	tests := []struct {
		address string
		network string
		dials   []string
	}{
		{"93.184.216.34:443", "tcp", []string{"93.184.216.34:443"}},
		{"0x5db8d822:443", "tcp", []string{"93.184.216.34:443"}},
		{"1572395042:443", "tcp", []string{"93.184.216.34:443"}},
		{"[2606:2800:220:1::1]:443", "tcp", []string{"[2606:2800:220:1::1]:443"}},
		{"feeds.example:443", "tcp", []string{"93.184.216.34:443", "[2606:2800:220:1::1]:443"}},
		{"mapped.example:443", "tcp", []string{"93.184.216.34:443"}},
		{"a.b.c.d.e:80", "tcp", []string{"8.8.8.8:80"}}, // five parts: a name, not a number
		{"1.2.3.4.5:80", "tcp", []string{"8.8.4.4:80"}},
		{"256.1:80", "tcp", []string{"8.8.4.4:80"}}, // a part over 255 but the last: a name
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			n := &fakeNet{fakeResolver: fakeResolver{hosts: map[string][]string{
				"feeds.example":  {"93.184.216.34", "2606:2800:220:1::1"},
				"mapped.example": {"::ffff:93.184.216.34"},
				"a.b.c.d.e":      {"8.8.8.8"},
				"1.2.3.4.5":      {"8.8.4.4"},
				"256.1":          {"8.8.4.4"},
			}}}
			_, err := n.dialer().DialContext(context.Background(), tt.network, tt.address)
			if !errors.Is(err, errDialed) {
				t.Errorf("DialContext(%s): got %v, want the test dialer's error", tt.address, err)
			}
			if !slices.Equal(n.dials, tt.dials) {
				t.Errorf("DialContext(%s) dialled %v, want %v", tt.address, n.dials, tt.dials)
			}
		})
	}
}

// TestDialerFallsBack: a host whose first family stalls (an IPv6 route
// that drops packets) is reached over the other once FallbackDelay has
// passed, and the stalled attempt is cancelled; a family that fails at
// once hands over without waiting for the delay.
func TestDialerFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stall bool          // the IPv6 attempt hangs until cancelled; else it fails at once
		delay time.Duration // FallbackDelay
	}{
		{"IPv6 stalls", true, time.Millisecond},
		{"IPv6 fails at once, long head start", false, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v6Done := make(chan error, 1)
			d := &Dialer{
				Resolver:      &fakeResolver{hosts: map[string][]string{"dual.example": {"2606:2800:220:1::1", "93.184.216.34"}}},
				FallbackDelay: tc.delay,
				Dial: func(ctx context.Context, _, address string) (net.Conn, error) {
					if strings.HasPrefix(address, "[") {
						if !tc.stall {
							v6Done <- errDialed
							return nil, errDialed
						}
						<-ctx.Done()
						v6Done <- ctx.Err()
						return nil, ctx.Err()
					}
					c, peer := net.Pipe()
					t.Cleanup(func() { peer.Close() })
					return c, nil
				},
			}
			c, err := d.DialContext(context.Background(), "tcp", "dual.example:993")
			if err != nil {
				t.Fatalf("got %v, want the IPv4 connection", err)
			}
			c.Close()
			if err := <-v6Done; tc.stall && !errors.Is(err, context.Canceled) {
				t.Errorf("the stalled IPv6 attempt ended with %v, want it cancelled", err)
			}
		})
	}
}

// TestDialerUnknownName: a name the resolver does not know is a
// *net.DNSError inside a dial error, as from a net.Dialer, and nothing is
// dialled.
func TestDialerUnknownName(t *testing.T) {
	n := &fakeNet{}
	_, err := n.dialer().DialContext(context.Background(), "tcp", "nowhere.example:993")
	var dnsErr *net.DNSError
	var opErr *net.OpError
	if !errors.As(err, &dnsErr) || !errors.As(err, &opErr) || opErr.Op != "dial" {
		t.Errorf("got %v, want a dial *net.OpError holding a *net.DNSError", err)
	}
	if len(n.dials) != 0 {
		t.Errorf("dialled %v, want no dial", n.dials)
	}
}

// TestClientRefusesRedirects: the HTTP client of a Dialer refuses a
// private host named in the URL and one reached by a redirect; the public
// host's answer comes over an in-process pipe, so no packet is sent, and
// the private host is never dialled.
func TestClientRefusesRedirects(t *testing.T) {
	n := &fakeNet{fakeResolver: fakeResolver{hosts: map[string][]string{"feeds.example": {"93.184.216.34"}}}}
	d := &Dialer{Resolver: &n.fakeResolver, Dial: func(_ context.Context, _, address string) (net.Conn, error) {
		n.dials = append(n.dials, address)
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			if _, err := http.ReadRequest(bufio.NewReader(server)); err != nil {
				return
			}
			io.WriteString(server, "HTTP/1.1 302 Found\r\nLocation: http://0x7f000001:8080/admin\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		}()
		return client, nil
	}}
	c := d.Client(5 * time.Second)
	for _, u := range []string{"http://127.1/", "http://2130706433:8080/", "http://[::1%25lo]/", "http://feeds.example/feed"} {
		n.dials = nil
		req, _ := http.NewRequestWithContext(context.Background(), "GET", u, nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("GET %s: got %v, want ErrPrivateAddress", u, err)
		}
		want := []string(nil)
		if u == "http://feeds.example/feed" {
			want = []string{"93.184.216.34:80"}
		}
		if !slices.Equal(n.dials, want) {
			t.Errorf("GET %s dialled %v, want %v", u, n.dials, want)
		}
	}
}

// TestDialerAllowedNetwork: a name resolving into an Allowed prefix is
// dialled at the checked address; one that also resolves to loopback is
// refused before any connection, Allowed prefix or not.
func TestDialerAllowedNetwork(t *testing.T) {
	n := &fakeNet{fakeResolver: fakeResolver{hosts: map[string][]string{
		"nas.home":   {"192.168.1.5"},
		"mixed.home": {"192.168.1.5", "127.0.0.1"},
	}}}
	d := n.dialer()
	d.Allowed = []netip.Prefix{netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("127.0.0.0/8")}
	if _, err := d.DialContext(context.Background(), "tcp", "nas.home:993"); !errors.Is(err, errDialed) {
		t.Fatalf("nas.home: got %v, want the test dialer's refusal", err)
	}
	const loopback = "not a public internet address: 127.0.0.1"
	if _, err := d.DialContext(context.Background(), "tcp", "mixed.home:993"); err == nil || err.Error() != loopback {
		t.Fatalf("mixed.home: got %v, want %q", err, loopback)
	}
	if want := []string{"192.168.1.5:993"}; !slices.Equal(n.dials, want) {
		t.Errorf("dials: got %v, want %v", n.dials, want)
	}
}
