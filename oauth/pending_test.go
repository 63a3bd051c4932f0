package oauth

import (
	"errors"
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
