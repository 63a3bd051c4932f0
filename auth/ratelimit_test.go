package auth

import (
	"net/netip"
	"testing"
	"time"
)

func TestLimiterWindow(t *testing.T) {
	l := newLimiter[string](3, time.Minute, 100)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if ok, _ := l.allow("a", t0.Add(time.Duration(i)*10*time.Second)); !ok {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	// 4th at t0+25s: the first (t0) frees at t0+60s.
	ok, wait := l.allow("a", t0.Add(25*time.Second))
	if ok || wait != 35*time.Second {
		t.Fatalf("got %v, %v; want false, 35s", ok, wait)
	}
	if ok, _ := l.allow("b", t0.Add(25*time.Second)); !ok {
		t.Fatal("another key refused")
	}
	// A refused attempt is not counted: at t0+60s one slot is free.
	if ok, _ := l.allow("a", t0.Add(60*time.Second)); !ok {
		t.Fatal("attempt after the first left the window refused")
	}
	ok, wait = l.allow("a", t0.Add(61*time.Second))
	if ok || wait != 9*time.Second { // t0+10s leaves at t0+70s
		t.Fatalf("got %v, %v; want false, 9s", ok, wait)
	}
}

func TestLimiterSweepsAndCaps(t *testing.T) {
	const max = defaultMaxTracked
	l := newLimiter[netip.Addr](5, time.Minute, max)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	// A flood of 50,000 addresses within one second: memory stays at the
	// cap, and every new address still gets its attempt (none is locked out).
	for i := range 50_000 {
		if ok, _ := l.allow(addr(i), t0.Add(time.Duration(i)*time.Microsecond*20)); !ok {
			t.Fatalf("address %d refused its first attempt while the table was full", i)
		}
		if got := l.tracked(); got > max {
			t.Fatalf("tracking %d addresses, over the cap %d", got, max)
		}
	}
	if got := l.tracked(); got != max {
		t.Fatalf("tracking %d addresses, want the cap %d", got, max)
	}
	// An address over its limit stays refused while the table is full:
	// eviction only takes keys under their limit.
	hot := addr(49_999)
	for range 4 {
		l.allow(hot, t0.Add(2*time.Second))
	}
	if ok, _ := l.allow(hot, t0.Add(2*time.Second)); ok {
		t.Fatal("an address over its limit was let through")
	}
	// Once the window has passed, the flood is swept and new addresses fit.
	later := t0.Add(3 * time.Minute)
	if ok, _ := l.allow(addr(999_999), later); !ok {
		t.Fatal("new address refused after the flood expired")
	}
	if got := l.tracked(); got != 1 {
		t.Fatalf("tracking %d addresses after the sweep, want 1", got)
	}
}

func TestAddrKey(t *testing.T) {
	a := netip.MustParseAddr("2001:db8:1:2:aaaa::1")
	b := netip.MustParseAddr("2001:db8:1:2:bbbb::2")
	c := netip.MustParseAddr("2001:db8:1:3::1")
	if addrKey(a) != addrKey(b) || addrKey(a) == addrKey(c) {
		t.Fatal("IPv6 addresses are not keyed by /64")
	}
	v4 := netip.MustParseAddr("192.0.2.1")
	if addrKey(netip.MustParseAddr("::ffff:192.0.2.1")) != v4 || addrKey(v4) == addrKey(netip.MustParseAddr("192.0.2.2")) {
		t.Fatal("IPv4 addresses are not keyed by address")
	}
}

// TestLimiterEvictionKeepsLimitedKeys: cycling through new addresses must
// not reset the count of an address at its limit (it would make the limit
// easy to beat), and a table full of limited keys refuses newcomers.
func TestLimiterEvictionKeepsLimitedKeys(t *testing.T) {
	const max = 100
	l := newLimiter[netip.Addr](5, time.Minute, max)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	attacker := netip.MustParseAddr("203.0.113.66")
	for range 5 {
		l.allow(attacker, t0)
	}
	for i := range 10 * max { // one-off addresses churn through the table
		l.allow(addr(i), t0.Add(time.Second))
		if l.tracked() > max {
			t.Fatalf("tracking %d, over the cap", l.tracked())
		}
	}
	if ok, _ := l.allow(attacker, t0.Add(2*time.Second)); ok {
		t.Fatal("the limited address was evicted and let through")
	}

	full := newLimiter[netip.Addr](5, time.Minute, max)
	for i := range max {
		for range 5 {
			full.allow(addr(i), t0)
		}
	}
	if ok, wait := full.allow(addr(max+1), t0.Add(time.Second)); ok || wait <= 0 {
		t.Errorf("a table full of limited keys: got %v, %v; want a refusal with Retry-After", ok, wait)
	}
}
