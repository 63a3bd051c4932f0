package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"testing"
	"time"

	"searchsvc/httpx"
)

func TestLimiterWindow(t *testing.T) {
	l := newLimiter[string](3, time.Minute, 100)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if ok, _ := l.allow(t0.Add(time.Duration(i)*10*time.Second), "a"); !ok {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	// 4th at t0+25s: the first (t0) frees at t0+60s.
	ok, wait := l.allow(t0.Add(25*time.Second), "a")
	if ok || wait != 35*time.Second {
		t.Fatalf("got %v, %v; want false, 35s", ok, wait)
	}
	if ok, _ := l.allow(t0.Add(25*time.Second), "b"); !ok {
		t.Fatal("another key refused")
	}
	// A refused attempt is not counted: at t0+60s one slot is free.
	if ok, _ := l.allow(t0.Add(60*time.Second), "a"); !ok {
		t.Fatal("attempt after the first left the window refused")
	}
	ok, wait = l.allow(t0.Add(61*time.Second), "a")
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
		if ok, _ := l.allow(t0.Add(time.Duration(i)*time.Microsecond*20), addr(i)); !ok {
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
		l.allow(t0.Add(2*time.Second), hot)
	}
	if ok, _ := l.allow(t0.Add(2*time.Second), hot); ok {
		t.Fatal("an address over its limit was let through")
	}
	// Once the window has passed, the flood is swept and new addresses fit.
	later := t0.Add(3 * time.Minute)
	if ok, _ := l.allow(later, addr(999_999)); !ok {
		t.Fatal("new address refused after the flood expired")
	}
	if got := l.tracked(); got != 1 {
		t.Fatalf("tracking %d addresses after the sweep, want 1", got)
	}
}

// TestLimiterEvictionKeepsLimitedKeys: cycling through new addresses must
// not reset the count of an address at its limit (it would make the limit
// easy to beat), and a table full of limited keys still takes newcomers,
// into its overflow ring.
func TestLimiterEvictionKeepsLimitedKeys(t *testing.T) {
	const max = 100
	l := newLimiter[netip.Addr](5, time.Minute, max)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	attacker := netip.MustParseAddr("203.0.113.66")
	for range 5 {
		l.allow(t0, attacker)
	}
	for i := range 10 * max { // one-off addresses churn through the table
		l.allow(t0.Add(time.Second), addr(i))
		if l.tracked() > max {
			t.Fatalf("tracking %d, over the cap", l.tracked())
		}
	}
	if ok, _ := l.allow(t0.Add(2*time.Second), attacker); ok {
		t.Fatal("the limited address was evicted and let through")
	}

	full := newLimiter[netip.Addr](5, time.Minute, max)
	for i := range max {
		for range 5 {
			full.allow(t0, addr(i))
		}
	}
	if ok, _ := full.allow(t0.Add(time.Second), addr(max+1)); !ok {
		t.Errorf("a table full of limited keys refused a newcomer")
	}
}

// TestNoGlobalLockout: 100,000 attacking addresses (IPv4 and IPv6 /64s,
// the IPv6 ones in 100 /48s), each at its limit, then clients never seen
// before, from elsewhere, still get in; the attackers that are limited
// stay limited; memory stays within the table and its ring; and an
// attacker's fresh /64 inside a /48 it used up is refused.
func TestNoGlobalLockout(t *testing.T) {
	const attackers = 100_000
	l := newAddrLimiter(DefaultRateLimit, time.Minute, defaultMaxTracked)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	attacker := func(i int) netip.Addr {
		if i%2 == 0 {
			return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		}
		// 2001:db8:<48 of 100>:<64 within>::1
		var b [16]byte
		b[0], b[1], b[2], b[3] = 0x20, 0x01, 0x0d, 0xb8
		b[4], b[5] = 0, byte(i%100)
		b[6], b[7] = byte(i>>16), byte(i>>8)
		b[15] = 1
		return netip.AddrFrom16(b)
	}
	now := t0
	for i := range attackers {
		now = t0.Add(time.Duration(i) * 200 * time.Microsecond) // 100,000 in 20 s, all in one window
		for range DefaultRateLimit + 1 {
			l.allow(now, httpx.AddrKeys(attacker(i))...)
		}
	}
	if got, most := l.tracked(), 2*defaultMaxTracked; got > most {
		t.Fatalf("tracking %d keys, over the bound %d", got, most)
	}
	for _, fresh := range []string{"192.0.2.10", "198.51.100.7", "2001:db8:ffff:1::1", "2a00:1450:4001:800::200e"} {
		if ok, wait := l.allow(now, httpx.AddrKeys(netip.MustParseAddr(fresh))...); !ok {
			t.Errorf("fresh client %s refused (Retry-After %v) after the attack", fresh, wait)
		}
	}
	// The first attackers filled the table at their limit: they stay limited.
	for i := range 100 {
		if ok, _ := l.allow(now, httpx.AddrKeys(attacker(i))...); ok {
			t.Fatalf("attacker %d (%s), at its limit, let through", i, attacker(i))
		}
	}
	// A /48 buys nothing: after 4 × the limit from its /64s, another /64
	// of the same /48 is refused.
	m := newAddrLimiter(DefaultRateLimit, time.Minute, defaultMaxTracked)
	for i := range 4 * DefaultRateLimit {
		a := netip.MustParseAddr(fmt.Sprintf("2001:db8:7:%x::1", i<<8)) // each in a /56 of its own
		if ok, _ := m.allow(t0, httpx.AddrKeys(a)...); !ok {
			t.Fatalf("/64 %d of one /48 refused before the /48's limit", i)
		}
	}
	if ok, wait := m.allow(t0, httpx.AddrKeys(netip.MustParseAddr("2001:db8:7:ffff::1"))...); ok || wait != time.Minute {
		t.Errorf("a new /64 in a used-up /48: got %v, %v; want refused for 1m0s", ok, wait)
	}
}

// TestAccountFailuresDelayNotLock: failed logins against one account from
// many addresses (each under its own limit) make every further login to
// that account wait accountDelay, the owner's included, but never refuse
// it; a success clears the count. Another account is not slowed.
func TestAccountFailuresDelayNotLock(t *testing.T) {
	e := newEnv(t)
	e.register("victim@example.com", "Victim")
	e.register("other@example.com", "Other")
	var slept []time.Duration
	e.h.sleep = func(ctx context.Context, d time.Duration) error {
		slept = append(slept, d)
		e.clock.Add(d)
		return nil
	}
	wrong := map[string]string{"email": "victim@example.com", "password": "wrong password!"}
	for i := range accountFreeFailures {
		e.send(request{method: "POST", path: "/v1/auth/login", ip: fmt.Sprintf("203.0.113.%d", i+1), body: wrong}).
			wantError(t, http.StatusUnauthorized, "invalid email or password")
	}
	if len(slept) != 0 {
		t.Fatalf("slept %v within the free failures, want none", slept)
	}
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "203.0.113.200", body: wrong}).
		wantError(t, http.StatusUnauthorized, "invalid email or password")
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.1",
		body: map[string]string{"email": "other@example.com", "password": testPassword}}).wantStatus(t, http.StatusOK)
	if want := []time.Duration{accountDelay}; !slices.Equal(slept, want) {
		t.Fatalf("slept %v, want %v (only the attacked account waits)", slept, want)
	}
	// The owner, from an address never seen: delayed, not refused.
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.2",
		body: map[string]string{"email": "victim@example.com", "password": testPassword}}).wantStatus(t, http.StatusOK)
	if want := []time.Duration{accountDelay, accountDelay}; !slices.Equal(slept, want) {
		t.Fatalf("slept %v, want %v", slept, want)
	}
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.2",
		body: map[string]string{"email": "victim@example.com", "password": testPassword}}).wantStatus(t, http.StatusOK)
	if len(slept) != 2 {
		t.Fatalf("slept %v after a success cleared the count, want no third wait", slept)
	}
}
