package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unsafe"

	"searchsvc/storage"
)

// diskHolds reports which of secrets appear in any file under dir.
func diskHolds(t *testing.T, dir string, secrets ...string) []string {
	t.Helper()
	var found []string
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				found = append(found, filepath.Base(path)+": "+s)
			}
		}
		return nil
	})
	return found
}

// TestNothingInClearOnDisk: a session's id (the cookie), its CSRF token,
// address and user agent never reach the session store's files, while
// everything works from them: validation, the list (which shows the id),
// deletion, and a restart.
func TestNothingInClearOnDisk(t *testing.T) {
	e := newEnv(t, Config{CSRF: true})
	s, err := e.m.Create("user-1", homeIP, "Mozilla/5.0 (Secret Browser)", LoginPassword)
	if err != nil {
		t.Fatal(err)
	}
	other := e.create("user-1")
	e.m.Flush()
	secrets := []string{s.ID, s.CSRFToken, s.IPAddress, "Secret Browser", other.ID}
	if found := diskHolds(t, e.dir, secrets...); len(found) > 0 {
		t.Fatalf("in clear on disk: %v", found)
	}
	e.reopen()
	got, _, err := e.m.Validate(s.ID, homeIP)
	if err != nil || got.CSRFToken != s.CSRFToken || got.UserAgent != s.UserAgent || got.IPAddress != s.IPAddress {
		t.Fatalf("after reopen: got %+v, %v; want the session with its token, agent and address", got, err)
	}
	list := e.m.List("user-1")
	if len(list) != 2 || (list[0].ID != s.ID && list[1].ID != s.ID) {
		t.Fatalf("List: got %+v, want both sessions with their ids", list)
	}
	if err := e.m.Delete(other.ID); err != nil {
		t.Fatalf("Delete by id: %v", err)
	}
	// Another SESSION_SECRET finds nothing.
	e.store.Close()
	e.cfg.Secret = []byte("another secret, 32 bytes or more...")
	e.open()
	if _, _, err := e.m.Validate(s.ID, homeIP); err != ErrInvalid {
		t.Errorf("Validate under another secret: got %v, want ErrInvalid", err)
	}
}

// TestConvertLegacy: sessions an older version stored in clear are sealed
// at start, keep working (their cookie, CSRF token and address), and no
// file of the store holds them in clear afterwards.
func TestConvertLegacy(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	old := Session{ID: "7d1f2c3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f", UserID: "user-1", CreatedAt: now, LastAccessedAt: now,
		ExpiresAt: now.Add(DefaultMaxAge), IPAddress: "203.0.113.10", UserAgent: "Legacy Agent/1.0",
		CSRFToken: "legacy-csrf-token-value", Metadata: Metadata{LoginMethod: LoginPassword}}
	st := storage.New(dir, storage.Options{Sync: storage.SyncNone})
	tab := storage.Register(st, legacyTable, storage.TableConfig[Session]{ID: func(s *Session) string { return s.ID }})
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(tab.Put(old)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if found := diskHolds(t, dir, old.ID); len(found) == 0 {
		t.Fatal("the legacy log should hold the id in clear")
	}

	st = storage.New(dir, storage.Options{Sync: storage.SyncNone, Now: func() time.Time { return now }})
	m, err := New(st, Config{Secret: testSecret, CSRF: true, Now: func() time.Time { return now.Add(time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := m.ConvertLegacy()
	if err != nil || n != 1 {
		t.Fatalf("ConvertLegacy = %d, %v; want 1", n, err)
	}
	if found := diskHolds(t, dir, old.ID, old.CSRFToken, old.UserAgent, old.IPAddress); len(found) > 0 {
		t.Fatalf("in clear on disk after conversion: %v", found)
	}
	got, _, err := m.Validate(old.ID, homeIP)
	if err != nil || got.CSRFToken != old.CSRFToken || got.UserAgent != old.UserAgent {
		t.Fatalf("converted session: got %+v, %v", got, err)
	}
	if n, err := m.ConvertLegacy(); err != nil || n != 0 {
		t.Errorf("second ConvertLegacy = %d, %v; want 0", n, err)
	}
}

// TestSealedPartsStayInTheLog: after a restart the session table holds
// every record stripped of its sealed part, which is read back from the
// log when needed; a touch flush, a renewal and a compaction, which
// rewrite whole records, keep it; and a stripped record refuses to be
// encoded, so none can be written without it.
func TestSealedPartsStayInTheLog(t *testing.T) {
	e := newEnv(t, Config{CSRF: true, Sliding: true, MaxAge: time.Hour, RenewThreshold: 50 * time.Minute, IdleTimeout: time.Hour})
	s, err := e.m.Create("user-1", homeIP, "Mozilla/5.0 (Kept Browser)", LoginPassword)
	if err != nil {
		t.Fatal(err)
	}
	other := e.create("user-2")
	check := func(stage string) {
		t.Helper()
		stripped := 0
		e.m.tab.Scan(func(r record) bool {
			if r.Cold.Stripped() && r.Sealed == "" {
				stripped++
			}
			return true
		})
		if stripped != 2 {
			t.Errorf("%s: %d of 2 records held stripped", stage, stripped)
		}
		got, _, err := e.m.Validate(s.ID, homeIP)
		if err != nil || got.CSRFToken != s.CSRFToken || got.UserAgent != s.UserAgent || got.IPAddress != s.IPAddress {
			t.Errorf("%s: Validate = %+v, %v; want the session with its token, agent and address", stage, got, err)
		}
		if list := e.m.List("user-2"); len(list) != 1 || list[0].ID != other.ID || list[0].UserAgent != other.UserAgent {
			t.Errorf("%s: List(user-2) = %+v, want %s", stage, list, other.ID)
		}
	}
	e.reopen()
	check("after reopen")
	e.clk.Add(20 * time.Minute) // a touch is due, and the renewal threshold is passed
	if _, renewed, err := e.m.Validate(s.ID, homeIP); err != nil || !renewed {
		t.Fatalf("Validate 20 min later: renewed %v, %v; want a renewal", renewed, err)
	}
	if _, _, err := e.m.Validate(other.ID, homeIP); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Flush(); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	check("after a renewal and a flush")
	if err := e.store.Compact(); err != nil {
		t.Fatal(err)
	}
	check("after compaction")
	e.reopen()
	check("after compaction and reopen")
	var r record
	e.m.tab.Scan(func(x record) bool { r = x; return false })
	if _, err := json.Marshal(r); !errors.Is(err, errStripped) {
		t.Errorf("encoding a stripped record: %v, want errStripped", err)
	}
}

// TestPack: packing keeps every record equal, and gives the records of
// one user one copy of its id.
func TestPack(t *testing.T) {
	tests := []struct {
		name string
		rs   []record
	}{
		{"none", nil},
		{"one", []record{{ID: "k1", UserID: "u1", Sealed: "s1", Created: 1}}},
		{"shared users, stripped and whole", []record{
			{ID: "k1", UserID: "u1", Sealed: "sealed-1"},
			{ID: "k2", UserID: "u2"},
			{ID: "k3", UserID: "u1", Sealed: "sealed-3"},
			{ID: "k4", UserID: "user-22"},
			{ID: "k5", UserID: "u2", Sealed: "x"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := slices.Clone(tt.rs)
			got := slices.Clone(tt.rs)
			pack(got)
			if !slices.Equal(got, want) {
				t.Fatalf("packed %+v, want %+v", got, want)
			}
			first := map[string]string{}
			for _, r := range got {
				if f, ok := first[r.UserID]; ok && unsafe.StringData(f) != unsafe.StringData(r.UserID) {
					t.Errorf("user %s has more than one copy", r.UserID)
				}
				first[r.UserID] = r.UserID
			}
		})
	}
}

// TestSecs: a record keeps its times to the second, the zero time as 0,
// and times outside what 32 bits of Unix seconds hold at their bounds.
func TestSecs(t *testing.T) {
	tests := []struct {
		in   time.Time
		want uint32
		back time.Time
	}{
		{time.Time{}, 0, time.Time{}},
		{time.Date(2026, 3, 10, 12, 0, 0, 999_999_999, time.UTC), 1773144000, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)},
		{time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), 1, time.Unix(1, 0).UTC()},
		{time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxUint32, time.Unix(math.MaxUint32, 0).UTC()},
	}
	for _, tt := range tests {
		if got := secs(tt.in); got != tt.want {
			t.Errorf("secs(%v) = %d, want %d", tt.in, got, tt.want)
		}
		if got := toSecond(tt.in); !got.Equal(tt.back) {
			t.Errorf("toSecond(%v) = %v, want %v", tt.in, got, tt.back)
		}
	}
}

// TestCreateKeepsSeconds: the session Create returns has the times its
// record keeps, so what a client is told is what a restart gives back.
func TestCreateKeepsSeconds(t *testing.T) {
	e := newEnv(t, Config{})
	e.clk.Add(1500 * time.Millisecond)
	s := e.create("u")
	e.reopen()
	got, ok := e.stored(s.ID)
	if !ok {
		t.Fatal("session not stored")
	}
	if !got.CreatedAt.Equal(s.CreatedAt) || !got.ExpiresAt.Equal(s.ExpiresAt) || !got.LastAccessedAt.Equal(s.LastAccessedAt) {
		t.Errorf("stored times %v %v %v, want those Create returned: %v %v %v",
			got.CreatedAt, got.LastAccessedAt, got.ExpiresAt, s.CreatedAt, s.LastAccessedAt, s.ExpiresAt)
	}
	if s.CreatedAt.Nanosecond() != 0 {
		t.Errorf("CreatedAt %v has a fraction of a second", s.CreatedAt)
	}
}
