package storage

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Pack sees the records the replay keeps, expired ones left out, and the
// table then holds what Pack left: here every id moved into one block.
func TestPackAtOpen(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Options{})
	mustCommit(t, db.s,
		db.sessions.Insert(session{ID: "s1", UserID: "u", ExpiresAt: epoch.Add(time.Hour)}),
		db.sessions.Insert(session{ID: "s2", UserID: "u", ExpiresAt: epoch.Add(time.Hour)}),
		db.sessions.Insert(session{ID: "old", UserID: "u", ExpiresAt: epoch.Add(time.Minute)}))
	db.s.Close()

	s := New(dir, Options{Now: func() time.Time { return epoch.Add(2 * time.Minute) }})
	var seen []string
	block := ""
	tab := Register(s, "sessions", TableConfig[session]{
		ID:      func(x *session) string { return x.ID },
		Expired: func(x *session, now time.Time) bool { return !x.ExpiresAt.After(now) },
		Index:   map[string]func(*session) string{"user": func(x *session) string { return x.UserID }},
		Pack: func(xs []session) {
			var b strings.Builder
			for _, x := range xs {
				seen = append(seen, x.ID)
				b.WriteString(x.ID)
			}
			block = b.String()
			off := 0
			for i := range xs {
				xs[i].ID, off = block[off:off+len(xs[i].ID)], off+len(xs[i].ID)
			}
		},
	})
	if err := s.Open(); err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"s1", "s2"}) {
		t.Fatalf("Pack saw %q, want [s1 s2]", seen)
	}
	for _, id := range []string{"s1", "s2"} {
		x, ok := tab.Get(id)
		if !ok || x.ID != id || !strings.Contains(block, x.ID) {
			t.Fatalf("Get(%q): got %+v %v, want the record, its id in the block", id, x, ok)
		}
	}
	if got := len(tab.Find("user", "u")); got != 2 {
		t.Errorf("index: got %d records of u, want 2", got)
	}
}
