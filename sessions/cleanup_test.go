package sessions

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin and America/New_York on any test machine
)

func TestCleanup(t *testing.T) {
	e := newEnv(t, Config{MaxAge: 3 * time.Hour, IdleTimeout: time.Hour})
	start := e.clk.Now()
	at := func(d time.Duration) { // move the clock to start+d
		t.Helper()
		e.clk.Add(start.Add(d).Sub(e.clk.Now()))
	}
	use := func(s Session) {
		t.Helper()
		if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
			t.Fatalf("Validate at %v: %v", e.clk.Now().Sub(start), err)
		}
	}
	expired := e.create("u") // used often, but past its expiresAt (3:00) at 3:10
	at(50 * time.Minute)
	use(expired)
	at(time.Hour)
	idle := e.create("u") // never used again: idle
	at(90 * time.Minute)
	recent := e.create("v") // idle by its record, active by memory
	at(100 * time.Minute)
	use(expired)
	at(140 * time.Minute)
	use(recent)
	at(150 * time.Minute)
	use(expired)
	at(170 * time.Minute)
	use(expired)
	at(3 * time.Hour)
	fresh := e.create("v")
	at(190 * time.Minute)

	stats := e.store.Stats()
	n, err := e.m.Cleanup()
	if err != nil || n != 2 {
		t.Fatalf("Cleanup = %d, %v; want 2", n, err)
	}
	if got := e.store.Stats().Commits - stats.Commits; got != 1 {
		t.Errorf("Cleanup made %d commits, want 1", got)
	}
	for name, s := range map[string]Session{"expired": expired, "idle": idle} {
		if _, ok := e.m.Get(s.ID); ok {
			t.Errorf("%s session kept", name)
		}
		if e.m.lookup(e.m.key(s.ID)) != nil {
			t.Errorf("%s session: in-memory state kept", name)
		}
	}
	for name, s := range map[string]Session{"recently used": recent, "fresh": fresh} {
		if _, ok := e.m.Get(s.ID); !ok {
			t.Errorf("%s session deleted", name)
		}
	}

	stats = e.store.Stats()
	if n, err := e.m.Cleanup(); err != nil || n != 0 {
		t.Errorf("second Cleanup = %d, %v; want 0", n, err)
	}
	if got := e.store.Stats(); got.Commits != stats.Commits {
		t.Error("Cleanup with nothing to do committed")
	}

	e.reopen()
	if _, ok := e.m.Get(idle.ID); ok {
		t.Error("cleaned-up session back after reopen")
	}
}

// TestDeleteAllRace: a session deleted between Cleanup's look and its
// Commit does not fail the others.
func TestDeleteAllRace(t *testing.T) {
	e := newEnv(t, Config{})
	a, b := e.create("u"), e.create("u")
	if err := e.m.Delete(a.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	n, err := e.m.deleteAll([]string{e.m.key(a.ID), e.m.key(b.ID)})
	if err != nil || n != 1 {
		t.Fatalf("deleteAll = %d, %v; want 1", n, err)
	}
	if _, ok := e.m.Get(b.ID); ok {
		t.Error("session not deleted")
	}
}

// DeleteUser (logout-all, force-logout, a password change) racing with
// single deletes of the same sessions never fails, and between them every
// session is deleted exactly once.
func TestDeleteUserRacesDeletes(t *testing.T) {
	for round := range 20 {
		e := newEnv(t, Config{MaxPerUser: 100}) // many sessions of one user
		var ids []string
		for range 30 {
			ids = append(ids, e.create("u").ID)
		}
		var single atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() {
			for _, id := range ids {
				err := e.m.Delete(id)
				if err == nil {
					single.Add(1)
				} else if !errors.Is(err, ErrNotFound) {
					t.Errorf("Delete: %v", err)
				}
			}
		})
		var all int
		wg.Go(func() {
			n, err := e.m.DeleteUser("u", "")
			if err != nil {
				t.Errorf("round %d: DeleteUser: %v", round, err)
			}
			all = n
		})
		wg.Wait()
		if got := int(single.Load()) + all; got != len(ids) {
			t.Fatalf("round %d: %d deleted one by one + %d by DeleteUser = %d, want %d", round, single.Load(), all, got, len(ids))
		}
		if n := e.m.tab.Len(); n != 0 {
			t.Fatalf("round %d: %d sessions left", round, n)
		}
	}
}

func TestNextCleanup(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	india := time.FixedZone("IST", 5*3600+1800)
	tests := []struct {
		name string
		now  time.Time
		want time.Time
	}{
		{"UTC, midnight", time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 3, 30, 0, 0, time.UTC)},
		{"UTC, just before", time.Date(2026, 3, 10, 3, 29, 59, 999999999, time.UTC), time.Date(2026, 3, 10, 3, 30, 0, 0, time.UTC)},
		{"UTC, exactly at", time.Date(2026, 3, 10, 3, 30, 0, 0, time.UTC), time.Date(2026, 3, 11, 3, 30, 0, 0, time.UTC)},
		{"UTC, just after", time.Date(2026, 3, 10, 3, 30, 0, 1, time.UTC), time.Date(2026, 3, 11, 3, 30, 0, 0, time.UTC)},
		{"UTC, evening", time.Date(2026, 3, 10, 22, 0, 0, 0, time.UTC), time.Date(2026, 3, 11, 3, 30, 0, 0, time.UTC)},
		{"UTC, end of year", time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 3, 30, 0, 0, time.UTC)},
		{"UTC, end of February", time.Date(2028, 2, 28, 4, 0, 0, 0, time.UTC), time.Date(2028, 2, 29, 3, 30, 0, 0, time.UTC)},
		{"fixed zone, before", time.Date(2026, 3, 10, 1, 0, 0, 0, india), time.Date(2026, 3, 10, 3, 30, 0, 0, india)},
		{"fixed zone, after", time.Date(2026, 3, 10, 9, 0, 0, 0, india), time.Date(2026, 3, 11, 3, 30, 0, 0, india)},
		// 03:30 in Berlin is 02:30 UTC in summer: a UTC clock would be wrong.
		{"Berlin, summer", time.Date(2026, 7, 1, 3, 0, 0, 0, berlin), time.Date(2026, 7, 1, 1, 30, 0, 0, time.UTC)},
		// 29 March 2026: 02:00 CET becomes 03:00 CEST; 03:30 CEST is 01:30 UTC.
		{"Berlin, spring forward", time.Date(2026, 3, 28, 4, 0, 0, 0, berlin), time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)},
		{"Berlin, during the gap", time.Date(2026, 3, 29, 1, 59, 0, 0, berlin), time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)},
		// 25 October 2026: 03:00 CEST becomes 02:00 CET; 03:30 CET is 02:30 UTC.
		{"Berlin, fall back", time.Date(2026, 10, 24, 4, 0, 0, 0, berlin), time.Date(2026, 10, 25, 2, 30, 0, 0, time.UTC)},
		{"New York, spring forward", time.Date(2026, 3, 7, 12, 0, 0, 0, newYork), time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NextCleanup(tt.now)
			if !got.Equal(tt.want) {
				t.Errorf("NextCleanup(%v) = %v, want %v", tt.now, got, tt.want)
			}
			if got.Location() != tt.now.Location() {
				t.Errorf("NextCleanup(%v) in %v, want %v", tt.now, got.Location(), tt.now.Location())
			}
			if h, m, _ := got.Clock(); h != 3 || m != 30 {
				t.Errorf("NextCleanup(%v) = %v, not 03:30 local", tt.now, got)
			}
			if !got.After(tt.now) || got.Sub(tt.now) > 25*time.Hour {
				t.Errorf("NextCleanup(%v) = %v, want within the next day", tt.now, got)
			}
		})
	}
}
