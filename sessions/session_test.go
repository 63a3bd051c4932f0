package sessions

import (
	"bytes"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

// clock is a settable clock for the Manager and the store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a Manager on a real store in a temporary directory.
type env struct {
	t     testing.TB
	dir   string
	sync  storage.SyncMode
	cfg   Config
	clk   *clock
	logs  *syncBuffer
	m     *Manager
	store *storage.Store
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newEnv opens a Manager with cfg (its Now and Logger are set here) on a
// store that does not fsync.
// testSecret is the SESSION_SECRET of the tests.
var testSecret = []byte("0123456789abcdef0123456789abcdef")

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	return newEnvSync(t, cfg, storage.SyncNone)
}

func newEnvSync(t testing.TB, cfg Config, mode storage.SyncMode) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), sync: mode, clk: newClock(), logs: new(syncBuffer)}
	cfg.Now = e.clk.Now
	if cfg.Secret == nil {
		cfg.Secret = testSecret
	}
	cfg.Logger = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.cfg = cfg
	e.open()
	return e
}

// open opens the store of e's directory with a new Manager.
func (e *env) open() {
	e.t.Helper()
	st := storage.New(e.dir, storage.Options{Sync: e.sync, Now: e.clk.Now})
	m, err := New(st, e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := st.Open(); err != nil {
		e.t.Fatalf("open store: %v", err)
	}
	e.t.Cleanup(func() { st.Close() })
	m.LoadSeen()
	e.m, e.store = m, st
}

// reopen closes the store, without flushing, and opens it again.
func (e *env) reopen() {
	e.t.Helper()
	if err := e.store.Close(); err != nil {
		e.t.Fatalf("close store: %v", err)
	}
	e.open()
}

var (
	homeIP  = netip.MustParseAddr("203.0.113.10")
	home2IP = netip.MustParseAddr("203.0.113.200") // same /24
	awayIP  = netip.MustParseAddr("198.51.100.7")
)

func (e *env) create(userID string) Session {
	e.t.Helper()
	s, err := e.m.Create(userID, homeIP, "Mozilla/5.0 (X11; Linux aarch64)", LoginPassword)
	if err != nil {
		e.t.Fatalf("Create: %v", err)
	}
	return s
}

// stored returns the record as it is on disk (in the store's durable state),
// not overlaid with the in-memory lastAccessedAt.
func (e *env) stored(id string) (Session, bool) {
	r, ok := e.m.tab.Get(e.m.key(id))
	if !ok {
		return Session{}, false
	}
	s, err := e.m.open(r)
	if err != nil {
		e.t.Fatalf("stored %s does not open: %v", id, err)
	}
	return s, true
}

func TestCreate(t *testing.T) {
	e := newEnv(t, Config{})
	before := e.store.Stats()
	s, err := e.m.Create("user-1", netip.MustParseAddr("::ffff:203.0.113.10"), "agent", LoginOAuth)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	now := e.clk.Now()
	if !uuid.Valid(s.ID) || s.ID[14] != '4' {
		t.Errorf("id %q, want a canonical UUID v4", s.ID)
	}
	want := Session{
		ID: s.ID, UserID: "user-1",
		CreatedAt: now, LastAccessedAt: now, ExpiresAt: now.Add(7 * 24 * time.Hour),
		IPAddress: "203.0.113.10", UserAgent: "agent",
		Metadata: Metadata{LoginMethod: "oauth"},
	}
	if s != want {
		t.Errorf("Create returned\n%+v, want\n%+v", s, want)
	}
	if got, ok := e.stored(s.ID); !ok || got != want {
		t.Errorf("stored %+v %v, want %+v", got, ok, want)
	}
	if got := e.store.Stats().Commits - before.Commits; got != 1 {
		t.Errorf("Create made %d commits, want 1", got)
	}
	if got, ok := e.m.Get(s.ID); !ok || got != want {
		t.Errorf("Get = %+v %v, want %+v", got, ok, want)
	}
	if got := e.m.List("user-1"); len(got) != 1 || got[0] != want {
		t.Errorf("List = %+v, want the new session as active", got)
	}
	if _, renewed, err := e.m.Validate(s.ID, homeIP); err != nil || renewed {
		t.Errorf("Validate = %v, %v; want active, not renewed", renewed, err)
	}

	other := e.create("user-1")
	if other.ID == s.ID {
		t.Errorf("two sessions share id %q", s.ID)
	}
}

func TestCreateIDsDiffer(t *testing.T) {
	e := newEnv(t, Config{})
	seen := make(map[string]bool)
	for range 200 {
		s := e.create("u")
		if seen[s.ID] {
			t.Fatalf("id %q issued twice", s.ID)
		}
		seen[s.ID] = true
	}
}

func TestCreateUserAgent(t *testing.T) {
	e := newEnv(t, Config{})
	tests := []struct {
		name, in, want string
	}{
		{"short", "curl/8.5.0", "curl/8.5.0"},
		{"exactly 512", strings.Repeat("a", 512), strings.Repeat("a", 512)},
		{"long", strings.Repeat("b", 2000), strings.Repeat("b", 512)},
		{"cut inside a rune", strings.Repeat("a", 511) + "é", strings.Repeat("a", 511)},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := e.m.Create("u", homeIP, tt.in, LoginPassword)
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if s.UserAgent != tt.want {
				t.Errorf("userAgent %q (%d bytes), want %q", s.UserAgent, len(s.UserAgent), tt.want)
			}
			if got, _ := e.stored(s.ID); got.UserAgent != s.UserAgent {
				t.Errorf("stored userAgent %q, returned %q", got.UserAgent, s.UserAgent)
			}
		})
	}
}

func TestCreateAddress(t *testing.T) {
	e := newEnv(t, Config{})
	tests := []struct {
		in   netip.Addr
		want string
	}{
		{netip.MustParseAddr("192.0.2.1"), "192.0.2.1"},
		{netip.MustParseAddr("::ffff:192.0.2.1"), "192.0.2.1"},
		{netip.MustParseAddr("2001:db8::1"), "2001:db8::1"},
		{netip.MustParseAddr("fe80::1%eth0"), "fe80::1"},
		{netip.Addr{}, ""},
	}
	for _, tt := range tests {
		s, err := e.m.Create("u", tt.in, "", LoginPassword)
		if err != nil {
			t.Fatalf("Create(%v): %v", tt.in, err)
		}
		if s.IPAddress != tt.want {
			t.Errorf("Create(%v): ipAddress %q, want %q", tt.in, s.IPAddress, tt.want)
		}
	}
}

func TestCreateErrors(t *testing.T) {
	e := newEnv(t, Config{})
	if _, err := e.m.Create("", homeIP, "", LoginPassword); err == nil {
		t.Error("Create with an empty user id succeeded")
	}
	if _, err := e.m.Create("u", homeIP, "", "magic"); err == nil {
		t.Error("Create with an unknown login method succeeded")
	}
	if n := e.m.tab.Len(); n != 0 {
		t.Errorf("%d sessions stored after failed creates, want 0", n)
	}
	e.store.Close()
	if _, err := e.m.Create("u", homeIP, "", LoginPassword); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Create on a closed store: %v, want storage.ErrClosed", err)
	}
}

func TestCreateCSRF(t *testing.T) {
	off := newEnv(t, Config{})
	if s := off.create("u"); s.CSRFToken != "" {
		t.Errorf("CSRF off: token %q, want none", s.CSRFToken)
	}

	on := newEnv(t, Config{CSRF: true})
	s := on.create("u")
	raw, err := base64.RawURLEncoding.DecodeString(s.CSRFToken)
	if err != nil || len(raw) != 32 {
		t.Errorf("token %q: %d bytes, %v; want 32 bytes of base64url", s.CSRFToken, len(raw), err)
	}
	if got, _ := on.stored(s.ID); got.CSRFToken != s.CSRFToken {
		t.Errorf("stored token %q, want %q", got.CSRFToken, s.CSRFToken)
	}
	if got, _, err := on.m.Validate(s.ID, homeIP); err != nil || got.CSRFToken != s.CSRFToken {
		t.Errorf("Validate: token %q, %v; want %q", got.CSRFToken, err, s.CSRFToken)
	}
	if other := on.create("u"); other.CSRFToken == s.CSRFToken {
		t.Error("two sessions share a CSRF token")
	}
	for _, l := range on.m.List("u") {
		if l.CSRFToken != "" {
			t.Errorf("List shows CSRF token %q", l.CSRFToken)
		}
	}
}

func TestGet(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.create("u")
	for _, id := range []string{"", "nope", strings.ToUpper(s.ID), uuid.New()} {
		if _, ok := e.m.Get(id); ok {
			t.Errorf("Get(%q) found a session", id)
		}
	}
	e.clk.Add(time.Hour)
	if err := e.m.Touch(s.ID); err != nil {
		t.Fatalf("Touch: %v", err)
	}
	got, ok := e.m.Get(s.ID)
	if !ok || !got.LastAccessedAt.Equal(e.clk.Now()) {
		t.Errorf("Get after Touch: lastAccessedAt %v, want %v", got.LastAccessedAt, e.clk.Now())
	}
	if d, _ := e.stored(s.ID); !d.LastAccessedAt.Equal(s.CreatedAt) {
		t.Errorf("Touch wrote lastAccessedAt %v to disk", d.LastAccessedAt)
	}
	if err := e.m.Touch(uuid.New()); !errors.Is(err, ErrNotFound) {
		t.Errorf("Touch(unknown) = %v, want ErrNotFound", err)
	}
}

func TestDelete(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.create("u")
	keep := e.create("u")
	if err := e.m.Delete(s.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, ok := e.m.Get(s.ID); ok {
		t.Error("deleted session still found")
	}
	if _, _, err := e.m.Validate(s.ID, homeIP); !errors.Is(err, ErrInvalid) {
		t.Errorf("Validate(deleted) = %v, want ErrInvalid", err)
	}
	if _, _, err := e.m.Validate(keep.ID, homeIP); err != nil {
		t.Errorf("other session: Validate = %v, want active", err)
	}
	for _, id := range []string{s.ID, uuid.New(), "", "not-a-uuid"} {
		if err := e.m.Delete(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Delete(%q) = %v, want ErrNotFound", id, err)
		}
	}
	if got := ErrNotFound.Error(); got != "session not found" {
		t.Errorf("ErrNotFound says %q", got)
	}
}

// Many requests ending one session at once (logout on two tabs): exactly
// one deletes it, the others get ErrNotFound, and none gets an error.
func TestDeleteConcurrent(t *testing.T) {
	for range 20 {
		e := newEnv(t, Config{})
		s := e.create("u")
		var deleted, notFound atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				switch err := e.m.Delete(s.ID); {
				case err == nil:
					deleted.Add(1)
				case errors.Is(err, ErrNotFound):
					notFound.Add(1)
				default:
					t.Errorf("Delete: %v", err)
				}
			})
		}
		wg.Wait()
		if deleted.Load() != 1 || notFound.Load() != 7 {
			t.Fatalf("%d deleted, %d not found; want 1 and 7", deleted.Load(), notFound.Load())
		}
	}
}

// TestDeleteDurable deletes sessions on a store that fsyncs, and reopens it
// without a clean shutdown of the Manager: what was deleted stays deleted.
func TestDeleteDurable(t *testing.T) {
	e := newEnvSync(t, Config{}, storage.SyncFsync)
	gone := e.create("u")
	kept := e.create("u")
	other := e.create("v")
	before := e.store.Stats()
	if err := e.m.Delete(gone.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if n, err := e.m.DeleteUser("v", ""); err != nil || n != 1 {
		t.Fatalf("DeleteUser = %d, %v; want 1", n, err)
	}
	if got := e.store.Stats().Fsyncs - before.Fsyncs; got != 2 {
		t.Errorf("two deletions made %d fsyncs, want 2", got)
	}
	e.reopen()
	if _, ok := e.m.Get(gone.ID); ok {
		t.Error("deleted session is back after reopen")
	}
	if _, ok := e.m.Get(other.ID); ok {
		t.Error("session deleted by DeleteUser is back after reopen")
	}
	if got, ok := e.m.Get(kept.ID); !ok || got != kept {
		t.Errorf("kept session after reopen: %+v %v, want %+v", got, ok, kept)
	}
}

func TestDeleteUser(t *testing.T) {
	e := newEnv(t, Config{})
	a1, a2, a3 := e.create("alice"), e.create("alice"), e.create("alice")
	b := e.create("bob")
	for _, id := range []string{a1.ID, a2.ID, a3.ID} {
		if _, _, err := e.m.Validate(id, homeIP); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	}

	before := e.store.Stats()
	n, err := e.m.DeleteUser("alice", a2.ID)
	if err != nil || n != 2 {
		t.Fatalf("DeleteUser(alice, keep a2) = %d, %v; want 2", n, err)
	}
	if got := e.store.Stats().Commits - before.Commits; got != 1 {
		t.Errorf("DeleteUser made %d commits, want 1", got)
	}
	for _, id := range []string{a1.ID, a3.ID} {
		if _, ok := e.m.Get(id); ok {
			t.Errorf("session %s survived DeleteUser", Ref(id))
		}
		if e.m.lookup(id) != nil {
			t.Errorf("in-memory state of deleted session %s kept", Ref(id))
		}
	}
	if _, ok := e.m.Get(a2.ID); !ok {
		t.Error("kept session deleted")
	}
	if _, ok := e.m.Get(b.ID); !ok {
		t.Error("another user's session deleted")
	}

	n, err = e.m.DeleteUser("alice", "")
	if err != nil || n != 1 {
		t.Errorf("DeleteUser(alice, keep none) = %d, %v; want 1", n, err)
	}
	n, err = e.m.DeleteUser("alice", "")
	if err != nil || n != 0 {
		t.Errorf("DeleteUser with no sessions = %d, %v; want 0, nil", n, err)
	}
	n, err = e.m.DeleteUser("nobody", "")
	if err != nil || n != 0 {
		t.Errorf("DeleteUser(unknown user) = %d, %v; want 0, nil", n, err)
	}
	if _, ok := e.m.Get(b.ID); !ok {
		t.Error("another user's session deleted")
	}
}

func TestList(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: time.Hour})
	old := e.create("u") // will be idle
	e.clk.Add(10 * time.Minute)
	mid := e.create("u") // will be touched
	e.clk.Add(10 * time.Minute)
	newest := e.create("u")
	e.create("someone else")

	e.clk.Add(50 * time.Minute) // old: idle 70 min; mid: idle 60 min
	if _, _, err := e.m.Validate(mid.ID, homeIP); err != nil {
		t.Fatalf("Validate(mid): %v", err)
	}
	e.clk.Add(5 * time.Minute) // old 75, mid 5, newest 55

	got := e.m.List("u")
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	want := []string{newest.ID, mid.ID}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Fatalf("List ids %v, want newest first %v (old one idle)", ids, want)
	}
	if at := got[1].LastAccessedAt; !at.Equal(mid.CreatedAt.Add(60 * time.Minute)) {
		t.Errorf("List: lastAccessedAt %v, want the in-memory one", at)
	}
	if _, ok := e.m.Get(old.ID); !ok {
		t.Error("List deleted the idle session; deleting is Validate's and Cleanup's job")
	}
	if got := e.m.List("nobody"); len(got) != 0 {
		t.Errorf("List(unknown user) = %v, want none", got)
	}
}

func TestListExpired(t *testing.T) {
	e := newEnv(t, Config{MaxAge: 2 * time.Hour, IdleTimeout: 24 * time.Hour})
	first := e.create("u")
	e.clk.Add(time.Hour)
	second := e.create("u")
	e.clk.Add(time.Hour) // first is exactly at its expiry: still active
	if got := e.m.List("u"); len(got) != 2 {
		t.Errorf("at expiresAt: List has %d sessions, want 2", len(got))
	}
	e.clk.Add(time.Nanosecond)
	got := e.m.List("u")
	if len(got) != 1 || got[0].ID != second.ID {
		t.Errorf("List = %v, want only the second session (first %s expired)", got, Ref(first.ID))
	}
}

func TestLogValue(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	s := Session{ID: uuid.New(), UserID: "u1", CSRFToken: "secret-token"}
	log.Info("x", "session", s)
	out := buf.String()
	if strings.Contains(out, s.ID) || strings.Contains(out, "secret-token") {
		t.Errorf("logged session shows its id or token: %s", out)
	}
	if !strings.Contains(out, `"user_id":"u1"`) || !strings.Contains(out, Ref(s.ID)) {
		t.Errorf("logged session lacks user_id or session_ref: %s", out)
	}
	if r := Ref(s.ID); len(r) != 12 || r == Ref(uuid.New()) {
		t.Errorf("Ref = %q, want 12 hex digits unique to the id", r)
	}
}

func TestErrorMessages(t *testing.T) {
	for err, want := range map[error]string{
		ErrNoCookie: "no session cookie",
		ErrInvalid:  "invalid session",
		ErrExpired:  "session expired",
		ErrNotFound: "session not found",
	} {
		if err.Error() != want {
			t.Errorf("got %q, want %q", err.Error(), want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		in   Config
		want time.Duration // TouchInterval
	}{
		{Config{}, 15 * time.Minute},
		{Config{IdleTimeout: 20 * time.Minute}, 5 * time.Minute},
		{Config{TouchInterval: time.Minute}, time.Minute},
	}
	for _, tt := range tests {
		c := tt.in.withDefaults()
		if c.TouchInterval != tt.want {
			t.Errorf("%+v: TouchInterval %v, want %v", tt.in, c.TouchInterval, tt.want)
		}
	}
	c := Config{}.withDefaults()
	if c.MaxAge != 7*24*time.Hour || c.IdleTimeout != 24*time.Hour || c.RenewThreshold != 24*time.Hour {
		t.Errorf("defaults %v %v %v, want 7 days, 24 h, 24 h", c.MaxAge, c.IdleTimeout, c.RenewThreshold)
	}
}

// TestMaxPerUser: a user holds at most MaxPerUser sessions; a new one
// ends the oldest in the same write, the count of ended sessions is kept
// (durably) for the session list, and other users are untouched.
func TestMaxPerUser(t *testing.T) {
	e := newEnv(t, Config{MaxPerUser: 3})
	other := e.create("other")
	var ids []string
	for range 5 {
		ids = append(ids, e.create("u").ID)
		e.clk.Add(time.Second)
	}
	var got []string
	for _, s := range e.m.List("u") {
		got = append(got, s.ID)
	}
	if want := []string{ids[4], ids[3], ids[2]}; !slices.Equal(got, want) {
		t.Fatalf("sessions of u: got %v, want the newest 3 %v", got, want)
	}
	for _, id := range ids[:2] {
		if _, _, err := e.m.Validate(id, homeIP); err == nil {
			t.Errorf("ended session %s still valid", id)
		}
	}
	ended, ok := e.m.EndedByLimit("u")
	if !ok || ended.Count != 2 || ended.UserID != "u" {
		t.Fatalf("EndedByLimit: got %+v, %v; want 2 for u", ended, ok)
	}
	if _, ok := e.m.EndedByLimit("other"); ok {
		t.Error("other user told of ended sessions")
	}
	if _, ok := e.m.Get(other.ID); !ok {
		t.Error("another user's session was ended")
	}
}
