package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test schema: users with a unique email among live users, their
// credentials, and sessions that expire.
type user struct {
	ID      string `json:"id"`
	Email   string `json:"email"`
	Name    string `json:"name,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

type credential struct {
	ID     string `json:"id"`
	UserID string `json:"userId"`
	Secret string `json:"secret"`
}

// session is a record of a cold table: Meta is kept only in the log.
type session struct {
	ID        string            `json:"id"`
	UserID    string            `json:"userId"`
	ExpiresAt time.Time         `json:"expiresAt"`
	Meta      map[string]string `json:"meta,omitempty"`
	Cold      ColdRef           `json:"-"`
}

// epoch is the tests' fixed "now".
var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

type testDB struct {
	s        *Store
	users    *Table[user]
	creds    *Table[credential]
	sessions *Table[session]
}

func newDB(dir string, opts Options) *testDB {
	if opts.Now == nil {
		opts.Now = func() time.Time { return epoch }
	}
	s := New(dir, opts)
	return &testDB{
		s: s,
		users: Register(s, "users", TableConfig[user]{
			ID:     func(u *user) string { return u.ID },
			Live:   func(u *user) bool { return !u.Deleted },
			Unique: map[string]func(*user) string{"email": func(u *user) string { return u.Email }},
		}),
		creds: Register(s, "credentials", TableConfig[credential]{
			ID:    func(c *credential) string { return c.ID },
			Index: map[string]func(*credential) string{"user": func(c *credential) string { return c.UserID }},
		}),
		sessions: Register(s, "sessions", TableConfig[session]{
			ID:      func(x *session) string { return x.ID },
			Expired: func(x *session, now time.Time) bool { return !x.ExpiresAt.After(now) },
			Index:   map[string]func(*session) string{"user": func(x *session) string { return x.UserID }},
			Cold: &Cold[session]{
				Strip: func(x *session) { x.Meta = nil },
				Ref:   func(x *session) *ColdRef { return &x.Cold },
			},
		}),
	}
}

// openDB opens a test store in dir, closed at the end of the test.
func openDB(t testing.TB, dir string, opts Options) *testDB {
	t.Helper()
	db := newDB(dir, opts)
	if err := db.s.Open(); err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.s.Close() })
	return db
}

func mustCommit(t testing.TB, s *Store, ops ...Op) {
	t.Helper()
	if err := s.Commit(ops...); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

func TestCommitAndReopen(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{})
	mustCommit(t, db.s, db.users.Insert(user{ID: "u1", Email: "a@x", Name: "Ann"}))
	mustCommit(t, db.s,
		db.users.Insert(user{ID: "u2", Email: "b@x"}),
		db.creds.Insert(credential{ID: "c1", UserID: "u2", Secret: "s"}),
		db.creds.Insert(credential{ID: "c2", UserID: "u2", Secret: "t"}),
	)
	mustCommit(t, db.s, db.users.Update("u1", func(u *user) error { u.Name = "Anne"; return nil }))
	mustCommit(t, db.s, db.creds.Delete("c1"))
	if err := db.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	db = openDB(t, dir, Options{})
	if got, ok := db.users.Get("u1"); !ok || got.Name != "Anne" {
		t.Errorf("Get(u1) = %+v, %v; want Name Anne", got, ok)
	}
	if got, ok := db.users.Lookup("email", "b@x"); !ok || got.ID != "u2" {
		t.Errorf("Lookup(email, b@x) = %+v, %v; want u2", got, ok)
	}
	if got := db.creds.Find("user", "u2"); len(got) != 1 || got[0].ID != "c2" {
		t.Errorf("Find(user, u2) = %+v, want [c2]", got)
	}
	if got, want := db.users.Len(), 2; got != want {
		t.Errorf("users.Len() = %d, want %d", got, want)
	}
}

func TestOpErrors(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	mustCommit(t, db.s, db.users.Insert(user{ID: "u1", Email: "a@x"}))
	mustCommit(t, db.s, db.users.Insert(user{ID: "u2", Email: "gone@x", Deleted: true}))
	errBoom := errors.New("boom")
	tests := []struct {
		name string
		ops  []Op
		want error
	}{
		{"insert existing", []Op{db.users.Insert(user{ID: "u1", Email: "z@x"})}, ErrExists},
		{"update missing", []Op{db.users.Update("nope", func(*user) error { return nil })}, ErrNotFound},
		{"delete missing", []Op{db.users.Delete("nope")}, ErrNotFound},
		{"email taken", []Op{db.users.Insert(user{ID: "u3", Email: "a@x"})}, ErrUnique},
		{"email taken within commit", []Op{
			db.users.Insert(user{ID: "u3", Email: "n@x"}),
			db.users.Insert(user{ID: "u4", Email: "n@x"}),
		}, ErrUnique},
		{"update func error", []Op{db.users.Update("u1", func(*user) error { return errBoom })}, errBoom},
		{"update func panics", []Op{db.users.Update("u1", func(*user) error { panic("oops") })}, ErrInvalid},
		{"update changes id", []Op{db.users.Update("u1", func(u *user) error { u.ID = "u9"; return nil })}, ErrInvalid},
		{"empty id", []Op{db.users.Put(user{Email: "e@x"})}, ErrInvalid},
		{"id not UTF-8", []Op{db.users.Put(user{ID: "\xff", Email: "e@x"})}, ErrInvalid},
		{"zero op", []Op{{}}, ErrInvalid},
		{"second op fails", []Op{
			db.users.Insert(user{ID: "u5", Email: "five@x"}),
			db.creds.Delete("nope"),
		}, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.s.Commit(tt.ops...)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Commit: got %v, want %v", err, tt.want)
			}
		})
	}
	// Nothing of a failed commit is visible, and the store still works.
	for _, id := range []string{"u3", "u4", "u5", "u9"} {
		if _, ok := db.users.Get(id); ok {
			t.Errorf("Get(%s) found a record of a failed commit", id)
		}
	}
	if _, ok := db.users.Lookup("email", "five@x"); ok {
		t.Errorf("Lookup(five@x) found a key of a failed commit")
	}
	if db.s.Err() != nil {
		t.Errorf("Err() = %v after op errors, want nil", db.s.Err())
	}
	var ue *UniqueError
	err := db.s.Commit(db.users.Insert(user{ID: "u6", Email: "a@x"}))
	if !errors.As(err, &ue) || ue.Table != "users" || ue.Index != "email" || ue.Key != "a@x" {
		t.Errorf("unique error: got %#v, want users.email a@x", err)
	}
}

// UpdateIfExists and DeleteIfExists leave a missing record alone: a
// Commit of only such ops writes nothing, and one that mixes them with a
// real change writes just that change. found tells which deletes found
// their record, and survives a reopen's check of what was written.
func TestIfExistsOps(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{})
	mustCommit(t, db.s, db.users.Insert(user{ID: "u1", Email: "a@x"}), db.users.Insert(user{ID: "u2", Email: "b@x"}))
	before := db.s.Stats()
	var found bool
	mustCommit(t, db.s,
		db.users.UpdateIfExists("nope", func(u *user) error { u.Name = "x"; return nil }),
		db.users.DeleteIfExists("nope", &found))
	if found {
		t.Error("found is true for a missing record")
	}
	if st := db.s.Stats(); st.Batches != before.Batches || st.Fsyncs != before.Fsyncs || st.FileBytes != before.FileBytes {
		t.Errorf("a Commit of no-ops wrote: batches %d→%d, fsyncs %d→%d, bytes %d→%d",
			before.Batches, st.Batches, before.Fsyncs, st.Fsyncs, before.FileBytes, st.FileBytes)
	}

	var f1, f2, fNope bool
	mustCommit(t, db.s,
		db.users.UpdateIfExists("u1", func(u *user) error { u.Name = "Ada"; return nil }),
		db.users.UpdateIfExists("nope", func(u *user) error { u.Name = "x"; return nil }),
		db.users.DeleteIfExists("u2", &f1),
		db.users.DeleteIfExists("u2", &f2), // deleted by the op before it
		db.users.DeleteIfExists("nope", &fNope))
	if !f1 || f2 || fNope {
		t.Errorf("found: u2 %v then %v, nope %v; want true, false, false", f1, f2, fNope)
	}
	if u, _ := db.users.Get("u1"); u.Name != "Ada" {
		t.Errorf("u1 not updated: %+v", u)
	}
	if _, ok := db.users.Get("u2"); ok {
		t.Error("u2 not deleted")
	}

	// A later op failing the Commit undoes the found of an earlier one.
	mustCommit(t, db.s, db.users.Insert(user{ID: "u3", Email: "c@x"}))
	var f3 bool
	err := db.s.Commit(db.users.DeleteIfExists("u3", &f3), db.users.Delete("nope"))
	if !errors.Is(err, ErrNotFound) || f3 {
		t.Errorf("failed Commit: %v, found %v; want ErrNotFound and false", err, f3)
	}
	if _, ok := db.users.Get("u3"); !ok {
		t.Error("u3 deleted by a failed Commit")
	}

	db.s.Close()
	db = openDB(t, dir, Options{})
	if u, ok := db.users.Get("u1"); !ok || u.Name != "Ada" {
		t.Errorf("after reopen u1: %+v %v", u, ok)
	}
	if _, ok := db.users.Get("u2"); ok {
		t.Error("after reopen u2 is back")
	}
}

// Deletions racing with a Commit of UpdateIfExists ops never fail it, and
// nothing deleted comes back.
func TestUpdateIfExistsRacesDeletes(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	var ids []string
	for i := range 50 {
		id := fmt.Sprintf("s%d", i)
		ids = append(ids, id)
		mustCommit(t, db.s, db.sessions.Insert(session{ID: id, UserID: "u", ExpiresAt: epoch.Add(time.Hour)}))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, id := range ids {
			if err := db.s.Commit(db.sessions.Delete(id)); err != nil {
				t.Errorf("Delete: %v", err)
			}
		}
	})
	for range 4 {
		wg.Go(func() {
			for range 20 {
				ops := make([]Op, 0, len(ids))
				for _, id := range ids {
					ops = append(ops, db.sessions.UpdateIfExists(id, func(s *session) error {
						s.Meta = map[string]string{"touched": "yes"}
						return nil
					}))
				}
				if err := db.s.Commit(ops...); err != nil {
					t.Errorf("Commit of UpdateIfExists: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if n := db.sessions.Len(); n != 0 {
		t.Errorf("%d deleted sessions are back", n)
	}
}

func TestSoftDeleteFreesUniqueKey(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{Sync: SyncNone})
	mustCommit(t, db.s, db.users.Insert(user{ID: "u1", Email: "a@x"}))
	// Soft-delete u1 and give its email to u2 in the same commit.
	mustCommit(t, db.s,
		db.users.Update("u1", func(u *user) error { u.Deleted = true; return nil }),
		db.users.Insert(user{ID: "u2", Email: "a@x"}),
	)
	check := func(db *testDB) {
		t.Helper()
		if got, ok := db.users.Lookup("email", "a@x"); !ok || got.ID != "u2" {
			t.Errorf("Lookup(a@x) = %+v, %v; want u2", got, ok)
		}
		if got, ok := db.users.Get("u1"); !ok || !got.Deleted {
			t.Errorf("Get(u1) = %+v, %v; want the soft-deleted record", got, ok)
		}
	}
	check(db)
	// Reviving u1 would take a@x twice.
	err := db.s.Commit(db.users.Update("u1", func(u *user) error { u.Deleted = false; return nil }))
	if !errors.Is(err, ErrUnique) {
		t.Errorf("revive u1: got %v, want ErrUnique", err)
	}
	db.s.Close()
	check(openDB(t, dir, Options{Sync: SyncNone}))
}

// A key released and taken within one batch ends up with its new owner,
// whatever order the batch's changes are applied in.
func TestKeyMovesWithinBatch(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	for i := range 50 {
		id := string(rune('a' + i%26))
		mustCommit(t, db.s, db.users.Put(user{ID: id, Email: id + "@x"}))
		mustCommit(t, db.s,
			db.users.Update(id, func(u *user) error { u.Email = id + "@y"; return nil }),
			db.users.Put(user{ID: id + "2", Email: id + "@x"}),
		)
		if got, ok := db.users.Lookup("email", id+"@x"); !ok || got.ID != id+"2" {
			t.Fatalf("round %d: Lookup(%s@x) = %+v, %v; want %s2", i, id, got, ok, id)
		}
		mustCommit(t, db.s, db.users.Delete(id+"2"), db.users.Delete(id))
	}
}

func TestConcurrentInsertsOfOneEmail(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	const n = 32
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs <- db.s.Commit(db.users.Insert(user{ID: string(rune('A' + i)), Email: "same@x"}))
		})
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrUnique):
			t.Errorf("Commit: got %v, want nil or ErrUnique", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d inserts of one email succeeded, want 1", ok)
	}
}

// Values in memory are what a replay would produce, and not shared with
// what the caller passed in.
func TestStoredValueIsDecoupled(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	meta := map[string]string{"k": "v"}
	mustCommit(t, db.s, db.sessions.Put(session{ID: "s1", UserID: "u1", ExpiresAt: epoch.Add(time.Hour), Meta: meta}))
	meta["k"] = "changed"
	got, _ := db.sessions.Load("s1")
	if got.Meta["k"] != "v" {
		t.Errorf("stored Meta[k] = %q after the caller changed its map, want v", got.Meta["k"])
	}
}

func TestLifecycleErrors(t *testing.T) {
	db := newDB(t.TempDir(), Options{Sync: SyncNone})
	if err := db.s.Commit(db.users.Put(user{ID: "u1"})); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit before Open: got %v, want ErrClosed", err)
	}
	if err := db.s.Open(); err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := db.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.s.Close(); err != nil {
		t.Errorf("second Close: got %v, want nil", err)
	}
	if err := db.s.Commit(db.users.Put(user{ID: "u1"})); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit after Close: got %v, want ErrClosed", err)
	}
	if err := db.s.Compact(); !errors.Is(err, ErrClosed) {
		t.Errorf("Compact after Close: got %v, want ErrClosed", err)
	}
	if err := db.s.Open(); !errors.Is(err, ErrClosed) {
		t.Errorf("Open after Close: got %v, want ErrClosed", err)
	}
}

func TestRegisterPanics(t *testing.T) {
	tests := []struct {
		name string
		fn   func(s *Store)
	}{
		{"duplicate", func(s *Store) {
			Register(s, "users", TableConfig[user]{ID: func(u *user) string { return u.ID }})
		}},
		{"no ID", func(s *Store) { Register(s, "other", TableConfig[user]{}) }},
		{"empty name", func(s *Store) {
			Register(s, "", TableConfig[user]{ID: func(u *user) string { return u.ID }})
		}},
		{"after Open", func(s *Store) {
			if err := s.Open(); err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			Register(s, "late", TableConfig[user]{ID: func(u *user) string { return u.ID }})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newDB(t.TempDir(), Options{Sync: SyncNone})
			defer func() {
				if recover() == nil {
					t.Errorf("Register did not panic")
				}
			}()
			tt.fn(db.s)
		})
	}
}

func TestParseSyncMode(t *testing.T) {
	tests := []struct {
		in      string
		want    SyncMode
		wantErr bool
	}{
		{"fsync", SyncFsync, false},
		{"none", SyncNone, false},
		{"", 0, true},
		{"FSYNC", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSyncMode(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseSyncMode(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), `"`+tt.in+`"`) {
			t.Errorf("ParseSyncMode(%q) error %q does not name the value", tt.in, err)
		}
	}
}

func TestPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "main")
	db := openDB(t, dir, Options{CompactMinBytes: 1})
	mustCommit(t, db.s, db.users.Put(user{ID: "u1", Email: "a@x"}))
	if err := db.s.Compact(); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Errorf("%s: mode %o, want 700", d, got)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("dir holds %d entries, want 2 (LOCK and one log)", len(entries))
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s: mode %o, want 600", e.Name(), got)
		}
	}
}

// The hot read paths allocate nothing.
func TestReadsDoNotAllocate(t *testing.T) {
	db := openDB(t, t.TempDir(), Options{Sync: SyncNone})
	mustCommit(t, db.s, db.users.Put(user{ID: "u1", Email: "a@x"}))
	tests := []struct {
		name string
		fn   func() bool
	}{
		{"Get", func() bool { _, ok := db.users.Get("u1"); return ok }},
		{"Get missing", func() bool { _, ok := db.users.Get("nope"); return !ok }},
		{"Lookup", func() bool { _, ok := db.users.Lookup("email", "a@x"); return ok }},
		{"Lookup missing", func() bool { _, ok := db.users.Lookup("email", "nope"); return !ok }},
		{"Len", func() bool { return db.users.Len() == 1 }},
	}
	for _, tt := range tests {
		ok := true
		allocs := testing.AllocsPerRun(100, func() { ok = ok && tt.fn() })
		if !ok {
			t.Errorf("%s: wrong result", tt.name)
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations per call, want 0", tt.name, allocs)
		}
	}
}

// TestFailureErrorsReportUnavailable: the failed and closed states carry
// Unavailable() through any wrapping, so the HTTP layer maps them to 503
// in its one place.
func TestFailureErrorsReportUnavailable(t *testing.T) {
	for _, err := range []error{ErrFailed, ErrClosed, fmt.Errorf("%w: fsync: input/output error", ErrFailed)} {
		var u interface{ Unavailable() bool }
		if !errors.As(err, &u) || !u.Unavailable() {
			t.Errorf("%v does not report Unavailable", err)
		}
	}
	var u interface{ Unavailable() bool }
	if errors.As(ErrNotFound, &u) {
		t.Error("ErrNotFound reports Unavailable")
	}
}
