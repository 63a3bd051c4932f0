package sessions

import (
	"errors"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

// TestValidateTouchesInMemory is the row "authenticated request, session
// valid": lastAccessedAt moves in memory and nothing is written.
func TestValidateTouchesInMemory(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.create("u")
	before := e.store.Stats()
	e.clk.Add(3 * time.Minute)
	got, renewed, err := e.m.Validate(s.ID, homeIP)
	if err != nil || renewed {
		t.Fatalf("Validate = %v, %v; want ok, not renewed", renewed, err)
	}
	now := e.clk.Now()
	if !got.LastAccessedAt.Equal(now) || got.ID != s.ID || got.UserID != "u" || !got.ExpiresAt.Equal(s.ExpiresAt) {
		t.Errorf("Validate returned %+v, want the session with lastAccessedAt %v", got, now)
	}
	if g, _ := e.m.Get(s.ID); !g.LastAccessedAt.Equal(now) {
		t.Errorf("Get: lastAccessedAt %v, want %v", g.LastAccessedAt, now)
	}
	if d, _ := e.stored(s.ID); !d.LastAccessedAt.Equal(s.CreatedAt) {
		t.Errorf("disk lastAccessedAt %v, want still %v", d.LastAccessedAt, s.CreatedAt)
	}
	if after := e.store.Stats(); after != before {
		t.Errorf("Validate wrote to the store: stats %+v, were %+v", after, before)
	}

	// A request that read the clock earlier cannot move lastAccessedAt back.
	e.m.entry(e.m.key(s.ID)).touch(now.Add(-time.Minute))
	if g, _ := e.m.Get(s.ID); !g.LastAccessedAt.Equal(now) {
		t.Errorf("an older touch moved lastAccessedAt to %v", g.LastAccessedAt)
	}
}

// TestValidateNoWrites validates one session 1000 times: not one byte is
// written and nothing is fsynced.
func TestValidateNoWrites(t *testing.T) {
	e := newEnvSync(t, Config{}, storage.SyncFsync)
	s := e.create("u")
	before := e.store.Stats()
	for range 1000 {
		e.clk.Add(time.Second)
		if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	}
	after := e.store.Stats()
	if after.BytesWritten != before.BytesWritten || after.Fsyncs != before.Fsyncs || after.Commits != before.Commits {
		t.Errorf("1000 validations: %d bytes, %d fsyncs, %d commits; want none",
			after.BytesWritten-before.BytesWritten, after.Fsyncs-before.Fsyncs, after.Commits-before.Commits)
	}
}

func TestValidateUnknown(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.create("u")
	for _, id := range []string{
		"", "x", uuid.New(), strings.ToUpper(s.ID), " " + s.ID, s.ID + " ", "{" + s.ID + "}",
		s.ID[:35], strings.ReplaceAll(s.ID, "-", ""),
	} {
		if _, _, err := e.m.Validate(id, homeIP); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%q) = %v, want ErrInvalid", id, err)
		}
	}
}

// TestValidateExpired is the row "now is past expiresAt": ErrExpired, and
// the session is deleted durably.
func TestValidateExpired(t *testing.T) {
	e := newEnv(t, Config{MaxAge: time.Hour, IdleTimeout: 2 * time.Hour})
	s := e.create("u")
	e.clk.Add(time.Hour) // at expiresAt exactly: not yet past it
	if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
		t.Fatalf("at expiresAt: Validate = %v, want ok", err)
	}
	e.clk.Add(time.Nanosecond)
	if _, _, err := e.m.Validate(s.ID, homeIP); !errors.Is(err, ErrExpired) {
		t.Fatalf("past expiresAt: Validate = %v, want ErrExpired", err)
	}
	if _, ok := e.m.Get(s.ID); ok {
		t.Error("expired session not deleted")
	}
	if e.m.lookup(e.m.key(s.ID)) != nil {
		t.Error("in-memory state of expired session kept")
	}
	if _, _, err := e.m.Validate(s.ID, homeIP); !errors.Is(err, ErrInvalid) {
		t.Errorf("Validate again = %v, want ErrInvalid", err)
	}
	e.reopen()
	if _, ok := e.m.Get(s.ID); ok {
		t.Error("expired session back after reopen")
	}
	if !strings.Contains(e.logs.String(), "reason=expired") {
		t.Errorf("expiry not logged:\n%s", e.logs)
	}
}

// TestValidateIdle is the row "idle time exceeds the idle timeout", checked
// against the in-memory lastAccessedAt.
func TestValidateIdle(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: time.Hour})
	s := e.create("u")
	e.clk.Add(50 * time.Minute)
	if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
		t.Fatalf("after 50 min: Validate = %v", err)
	}
	// 100 minutes since creation but 50 since the last (in-memory) access.
	e.clk.Add(50 * time.Minute)
	if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
		t.Fatalf("idle 50 min by memory: Validate = %v, want ok", err)
	}
	e.clk.Add(time.Hour) // idle exactly the timeout: still valid
	if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
		t.Fatalf("idle exactly 1 h: Validate = %v, want ok", err)
	}
	e.clk.Add(time.Hour + time.Nanosecond)
	if _, _, err := e.m.Validate(s.ID, homeIP); !errors.Is(err, ErrExpired) {
		t.Fatalf("idle past 1 h: Validate = %v, want ErrExpired", err)
	}
	if _, ok := e.m.Get(s.ID); ok {
		t.Error("idle session not deleted")
	}
	e.reopen()
	if _, ok := e.m.Get(s.ID); ok {
		t.Error("idle session back after reopen")
	}
}

func TestValidateSliding(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name    string
		sliding bool
		age     time.Duration // since creation, with MaxAge 7 days and threshold 1 day
		renew   bool
	}{
		{"sliding, well before threshold", true, 5 * day, false},
		{"sliding, exactly threshold left", true, 6 * day, false},
		{"sliding, below threshold", true, 6*day + time.Second, true},
		{"sliding, last second", true, 7 * day, true},
		{"not sliding, below threshold", false, 6*day + time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Config{Sliding: tt.sliding, RenewThreshold: day, IdleTimeout: 30 * day})
			s := e.create("u")
			e.clk.Add(tt.age)
			before := e.store.Stats()
			got, renewed, err := e.m.Validate(s.ID, homeIP)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			now := e.clk.Now()
			wantExp := s.ExpiresAt
			if tt.renew {
				wantExp = now.Add(7 * day)
			}
			if renewed != tt.renew || !got.ExpiresAt.Equal(wantExp) {
				t.Errorf("renewed %v, expiresAt %v; want %v, %v", renewed, got.ExpiresAt, tt.renew, wantExp)
			}
			d, _ := e.stored(s.ID)
			if !d.ExpiresAt.Equal(wantExp) {
				t.Errorf("stored expiresAt %v, want %v", d.ExpiresAt, wantExp)
			}
			commits := e.store.Stats().Commits - before.Commits
			if tt.renew {
				if commits != 1 || !d.LastAccessedAt.Equal(now) {
					t.Errorf("renewal: %d commits, stored lastAccessedAt %v; want 1 and %v", commits, d.LastAccessedAt, now)
				}
				e.reopen()
				if r, ok := e.m.Get(s.ID); !ok || !r.ExpiresAt.Equal(wantExp) {
					t.Errorf("after reopen: expiresAt %v, want %v", r.ExpiresAt, wantExp)
				}
			} else if commits != 0 {
				t.Errorf("no renewal, but %d commits", commits)
			}
		})
	}
}

// TestValidateSlidingThresholdAboveMaxAge: a threshold at or above the max
// age would renew on every request; renewals come at most once per
// TouchInterval instead.
func TestValidateSlidingThresholdAboveMaxAge(t *testing.T) {
	e := newEnv(t, Config{Sliding: true, MaxAge: time.Hour, RenewThreshold: 2 * time.Hour, TouchInterval: 10 * time.Minute})
	s := e.create("u")
	renewals := 0
	for range 60 {
		e.clk.Add(time.Minute)
		got, renewed, err := e.m.Validate(s.ID, homeIP)
		if err != nil {
			t.Fatalf("Validate: %v", err)
		}
		if renewed {
			renewals++
			if want := e.clk.Now().Add(time.Hour); !got.ExpiresAt.Equal(want) {
				t.Errorf("renewed to %v, want %v", got.ExpiresAt, want)
			}
		}
	}
	if renewals != 6 {
		t.Errorf("%d renewals in 60 one-minute steps, want 6 (one per 10 min)", renewals)
	}
}

// TestValidateSlidingShortMaxAge: with SESSION_MAX_AGE=6 s and
// SESSION_RENEW_THRESHOLD=5 s, a session used every 2 s is renewed and
// lives on, however long the default touch interval; without the
// renewal it would die at 6 s.
func TestValidateSlidingShortMaxAge(t *testing.T) {
	e := newEnv(t, Config{Sliding: true, MaxAge: 6 * time.Second, RenewThreshold: 5 * time.Second})
	s := e.create("u")
	for i := range 15 {
		e.clk.Add(2 * time.Second)
		got, renewed, err := e.m.Validate(s.ID, homeIP)
		if err != nil {
			t.Fatalf("request %d, %v after login: Validate = %v, want the session renewed", i+1, e.clk.Now().Sub(s.CreatedAt), err)
		}
		if want := e.clk.Now().Add(6 * time.Second); !renewed || !got.ExpiresAt.Equal(want) {
			t.Fatalf("request %d: renewed %v to %v, want renewed to %v", i+1, renewed, got.ExpiresAt, want)
		}
		if st, _ := e.stored(s.ID); !st.ExpiresAt.Equal(got.ExpiresAt) {
			t.Fatalf("request %d: stored expiry %v, want the renewal %v written", i+1, st.ExpiresAt, got.ExpiresAt)
		}
	}
}

// TestValidateSlidingKeepsAlive uses a session every 12 hours for a month
// with sliding renewal: it never expires, and without renewal it would.
func TestValidateSlidingKeepsAlive(t *testing.T) {
	e := newEnv(t, Config{Sliding: true})
	s := e.create("u")
	renewals := 0
	for range 60 {
		e.clk.Add(12 * time.Hour)
		_, renewed, err := e.m.Validate(s.ID, homeIP)
		if err != nil {
			t.Fatalf("day %v: Validate = %v", e.clk.Now().Sub(s.CreatedAt), err)
		}
		if renewed {
			renewals++
		}
	}
	if renewals < 4 || renewals > 6 {
		t.Errorf("%d renewals in 30 days, want about one every 6 days", renewals)
	}
}

func TestValidateAddress(t *testing.T) {
	v6 := netip.MustParseAddr("2001:db8:1:2::10")
	tests := []struct {
		name    string
		created netip.Addr
		from    netip.Addr
		bind    bool
		wantErr error
		warn    bool
	}{
		{"same address", homeIP, homeIP, true, nil, false},
		{"same /24, bound", homeIP, home2IP, true, nil, false},
		{"same /24 mapped, bound", homeIP, netip.MustParseAddr("::ffff:203.0.113.99"), true, nil, false},
		{"same /64, bound", v6, netip.MustParseAddr("2001:db8:1:2:abcd::1"), true, nil, false},
		{"other network, not bound", homeIP, awayIP, false, nil, true},
		{"other network, bound", homeIP, awayIP, true, ErrInvalid, true},
		{"next /24, bound", homeIP, netip.MustParseAddr("203.0.114.10"), true, ErrInvalid, true},
		{"other /64, bound", v6, netip.MustParseAddr("2001:db8:1:3::10"), true, ErrInvalid, true},
		{"v4 to v6, not bound", homeIP, v6, false, nil, true},
		{"unknown address, bound", homeIP, netip.Addr{}, true, ErrInvalid, true},
		{"both unknown, bound", netip.Addr{}, netip.Addr{}, true, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Config{BindIP: tt.bind})
			s, err := e.m.Create("user-7", tt.created, "", LoginPassword)
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			_, _, err = e.m.Validate(s.ID, tt.from)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Validate from %v = %v, want %v", tt.from, err, tt.wantErr)
			}
			_, exists := e.m.Get(s.ID)
			if exists != (tt.wantErr == nil) {
				t.Errorf("session exists %v after Validate = %v", exists, err)
			}
			logs := e.logs.String()
			if warned := strings.Contains(logs, `msg="suspicious session address"`); warned != tt.warn {
				t.Errorf("warned %v, want %v:\n%s", warned, tt.warn, logs)
			}
			if tt.warn && (!strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "user_id=user-7")) {
				t.Errorf("warning without level WARN or user_id:\n%s", logs)
			}
			if strings.Contains(logs, s.ID) {
				t.Errorf("a log line shows the session id:\n%s", logs)
			}
		})
	}
}

// TestValidateAddressWarnsOnce: a client that moved is reported once per
// foreign network, not on every request.
func TestValidateAddressWarnsOnce(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.create("u")
	for _, ip := range []netip.Addr{awayIP, awayIP, netip.MustParseAddr("198.51.100.8"), home2IP, netip.MustParseAddr("192.0.2.1"), awayIP} {
		if _, _, err := e.m.Validate(s.ID, ip); err != nil {
			t.Fatalf("Validate from %v: %v", ip, err)
		}
	}
	if n := strings.Count(e.logs.String(), "suspicious session address"); n != 3 {
		t.Errorf("%d warnings, want 3 (198.51.100/24, 192.0.2/24, 198.51.100/24 again):\n%s", n, e.logs)
	}
}

// TestValidateDeleteRace validates and deletes sessions concurrently, then
// flushes: no deleted session comes back, and no in-memory state is left of
// any of them.
func TestValidateDeleteRace(t *testing.T) {
	e := newEnv(t, Config{MaxPerUser: 100}) // many sessions of one user
	var ids []string
	for range 50 {
		ids = append(ids, e.create("u").ID)
	}
	e.clk.Add(time.Minute)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				for _, id := range ids {
					e.m.Validate(id, homeIP)
				}
			}
		})
	}
	wg.Go(func() {
		for _, id := range ids {
			if err := e.m.Delete(id); err != nil {
				t.Errorf("Delete: %v", err)
			}
		}
	})
	wg.Go(func() {
		for range 20 {
			if err := e.m.Flush(); err != nil {
				t.Errorf("Flush: %v", err)
			}
		}
	})
	wg.Wait()
	if err := e.m.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if n := e.m.tab.Len(); n != 0 {
		t.Errorf("%d deleted sessions are back", n)
	}
	e.m.mu.RLock()
	left := len(e.m.entries)
	e.m.mu.RUnlock()
	if left != 0 {
		t.Errorf("%d in-memory entries left for deleted sessions", left)
	}
	e.reopen()
	if n := e.m.tab.Len(); n != 0 {
		t.Errorf("after reopen: %d deleted sessions are back", n)
	}
}

// benchEnv makes n sessions and returns some of their ids.
func benchEnv(b *testing.B, n int) (*env, []string) {
	b.Helper()
	e := newEnv(b, Config{})
	ids := make([]string, 0, n)
	const chunk = 1000
	for len(ids) < n {
		ops := make([]storage.Op, 0, chunk)
		now := e.clk.Now()
		for range chunk {
			s := Session{
				ID: uuid.New(), UserID: uuid.New(), CreatedAt: now, LastAccessedAt: now,
				ExpiresAt: now.Add(DefaultMaxAge), IPAddress: homeIP.String(), UserAgent: "Mozilla/5.0",
				Metadata: Metadata{LoginMethod: LoginPassword},
			}
			ops = append(ops, e.m.tab.Insert(e.m.seal(s)))
			ids = append(ids, s.ID)
		}
		if err := e.store.Commit(ops...); err != nil {
			b.Fatalf("Commit: %v", err)
		}
	}
	return e, ids
}

func BenchmarkValidate(b *testing.B) {
	e, ids := benchEnv(b, 100_000)
	ids = ids[:1024]
	for _, id := range ids { // make the in-memory entries, as a running server has
		if _, _, err := e.m.Validate(id, home2IP); err != nil {
			b.Fatal(err)
		}
	}
	before := e.store.Stats()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, _, err := e.m.Validate(ids[i&1023], home2IP); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.StopTimer()
	if after := e.store.Stats(); after.BytesWritten != before.BytesWritten {
		b.Fatalf("validation wrote %d bytes", after.BytesWritten-before.BytesWritten)
	}
}

func BenchmarkValidateParallel(b *testing.B) {
	e, ids := benchEnv(b, 100_000)
	ids = ids[:1024]
	for _, id := range ids {
		if _, _, err := e.m.Validate(id, home2IP); err != nil {
			b.Fatal(err)
		}
	}
	var worker atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(worker.Add(1)) * 131 // each worker on its own sessions, as requests are
		for pb.Next() {
			if _, _, err := e.m.Validate(ids[i&1023], home2IP); err != nil {
				b.Error(err)
				return
			}
			i += 7
		}
	})
}

// The HMAC of a session id is cached once the session is met, and only
// then: ids of no session never enter the cache, and a deleted session's
// id leaves it, so a request with its cookie finds nothing.
func TestValidateKeyCache(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.create("u")
	for range 3 {
		if _, _, err := e.m.Validate(uuid.New(), homeIP); !errors.Is(err, ErrInvalid) {
			t.Fatalf("unknown id: got %v, want ErrInvalid", err)
		}
	}
	if n := len(e.m.keyOf); n != 0 {
		t.Fatalf("unknown ids cached: got %d entries, want 0", n)
	}
	for range 2 {
		if _, _, err := e.m.Validate(s.ID, homeIP); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	}
	if k, ok := e.m.cachedKey(s.ID); !ok || k != e.m.key(s.ID) {
		t.Fatalf("cached key: got %q %v, want %q", k, ok, e.m.key(s.ID))
	}
	if err := e.m.Delete(s.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, ok := e.m.cachedKey(s.ID); ok {
		t.Fatal("a deleted session's id is still cached")
	}
	if _, _, err := e.m.Validate(s.ID, homeIP); !errors.Is(err, ErrInvalid) {
		t.Fatalf("deleted session: got %v, want ErrInvalid", err)
	}
}
