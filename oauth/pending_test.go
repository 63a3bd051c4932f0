package oauth

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"
)

func newPending(state, session string, binding byte, expires time.Time) *pending {
	return &pending{state: state, sessionID: session, userID: "u", domain: "acme", binding: [32]byte{binding}, expires: expires}
}

func TestPendingSet(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := newPendingSet(5)
	for i := range 3 {
		if err := s.put(newPending("s"+strconv.Itoa(i), "sess", 1, now.Add(StateTTL)), now); err != nil {
			t.Fatal(err)
		}
	}
	if !s.bound("sess", [32]byte{1}, now) || s.bound("other", [32]byte{1}, now) || s.bound("sess", [32]byte{2}, now) {
		t.Error("bound: want true only for the session's own binding")
	}
	if s.bound("sess", [32]byte{1}, now.Add(StateTTL)) {
		t.Error("bound: an expired authorization still binds")
	}
	p, ok := s.take("s1")
	if !ok || p.state != "s1" {
		t.Fatalf("take: got %v, %v", p, ok)
	}
	if _, ok := s.take("s1"); ok {
		t.Error("take: a state was returned twice")
	}
	if !s.inUse([32]byte{1}) {
		t.Error("inUse: want true while s0 and s2 are held")
	}
	s.take("s0")
	s.take("s2")
	if s.inUse([32]byte{1}) || len(s.bySession) != 0 || len(s.bindings) != 0 || s.len() != 0 {
		t.Errorf("after taking all: indexes not empty: %d sessions, %d bindings, %d states", len(s.bySession), len(s.bindings), s.len())
	}

	// Full of live authorizations: refused. Once they expire: swept.
	for i := range 5 {
		if err := s.put(newPending("f"+strconv.Itoa(i), "sess"+strconv.Itoa(i), 3, now.Add(StateTTL)), now); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.put(newPending("x", "sessx", 4, now.Add(StateTTL)), now); !errors.Is(err, errFull) {
		t.Errorf("put into a full set: got %v, want errFull", err)
	}
	later := now.Add(StateTTL)
	if err := s.put(newPending("y", "sessy", 4, later.Add(StateTTL)), later); err != nil {
		t.Errorf("put after expiry: got %v, want room", err)
	}
	if s.len() != 1 || s.inUse([32]byte{3}) {
		t.Errorf("after the sweep: got %d held, binding 3 in use %v; want 1, false", s.len(), s.inUse([32]byte{3}))
	}
}

func TestPendingPerSession(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := newPendingSet(MaxPending)
	for i := range MaxPerSession + 3 {
		s.put(newPending("s"+strconv.Itoa(i), "sess", 1, now.Add(StateTTL)), now)
	}
	if n := len(s.bySession["sess"]); n != MaxPerSession || s.len() != MaxPerSession || s.bindings[[32]byte{1}] != MaxPerSession {
		t.Errorf("got %d in session, %d held, %d bound; want %d each", n, s.len(), s.bindings[[32]byte{1}], MaxPerSession)
	}
	for i := range 3 {
		if _, ok := s.take("s" + strconv.Itoa(i)); ok {
			t.Errorf("s%d: the oldest were not dropped", i)
		}
	}
	if _, ok := s.take("s" + strconv.Itoa(MaxPerSession+2)); !ok {
		t.Error("the newest was dropped")
	}
}

func BenchmarkPendingPutTake(b *testing.B) {
	now := time.Now()
	s := newPendingSet(MaxPending)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		st := strconv.Itoa(i)
		s.put(newPending(st, "sess"+strconv.Itoa(i%100), 1, now.Add(StateTTL)), now)
		s.take(st)
	}
}

// TestPendingPerUserKeepsRoom: one user with 1,000 sessions starting ten
// authorizations each holds at most MaxPerUser, and everyone else still
// gets in; in a full set the user holding the most gives way to one
// holding fewer, and only a set where all hold as many refuses.
func TestPendingPerUserKeepsRoom(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := newPendingSet(MaxPending)
	put := func(state, user, session string) error {
		p := newPending(state, session, 1, now.Add(StateTTL))
		p.userID = user
		return s.put(p, now)
	}
	for sess := range 1000 {
		for i := range 10 {
			if err := put(fmt.Sprintf("a-%d-%d", sess, i), "attacker", fmt.Sprintf("as%d", sess)); err != nil {
				t.Fatalf("the attacker's own authorization refused: %v", err)
			}
		}
	}
	if n := len(s.byUser["attacker"]); n != MaxPerUser || s.len() != MaxPerUser {
		t.Fatalf("attacker holds %d, set holds %d; want %d each", n, s.len(), MaxPerUser)
	}
	for u := range 100 {
		if err := put(fmt.Sprintf("v%d", u), fmt.Sprintf("user%d", u), fmt.Sprintf("vs%d", u)); err != nil {
			t.Fatalf("user %d refused while the attacker held %d: %v", u, MaxPerUser, err)
		}
	}

	small := newPendingSet(5)
	s = small
	for i := range 3 {
		put(fmt.Sprintf("big%d", i), "big", "bs")
	}
	put("one1", "one", "os1")
	put("two1", "two", "os2") // full: big 3, one 1, two 1
	if err := put("new1", "new", "ns"); err != nil {
		t.Fatalf("a full set refused a user holding none while another held 3: %v", err)
	}
	if n := len(s.byUser["big"]); n != 2 {
		t.Errorf("big holds %d, want 2 (its oldest gave way)", n)
	}
	if _, ok := s.take("big0"); ok {
		t.Error("big's oldest is still held")
	}
	s = newPendingSet(3)
	for _, u := range []string{"a", "b", "c"} {
		put(u, u, u)
	}
	if err := put("d", "d", "d"); !errors.Is(err, errFull) {
		t.Errorf("a set full of users holding one each: got %v, want errFull", err)
	}
}
