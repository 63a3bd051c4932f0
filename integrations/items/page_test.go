package items

import (
	"errors"
	"strings"
	"testing"
	"time"

	"searchsvc/storage/uuid"
)

func FuzzParseCursor(f *testing.F) {
	f.Add(Cursor{Date: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), ID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"}.String())
	f.Add(Cursor{Date: time.Unix(0, 0).UTC(), ID: "00000000-0000-4000-8000-000000000000"}.String())
	f.Add("")
	f.Add("fA")
	f.Add(strings.Repeat("A", 300))
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil {
			if !errors.Is(err, ErrBadCursor) {
				t.Fatalf("error %v is not ErrBadCursor", err)
			}
			return
		}
		if !uuid.Valid(c.ID) {
			t.Fatalf("cursor id %q is not a UUID", c.ID)
		}
		again, err := ParseCursor(c.String())
		if err != nil || !again.Date.Equal(c.Date) || again.ID != c.ID {
			t.Fatalf("round trip of %q: got %+v, %v; want %+v", s, again, err, c)
		}
	})
}

// mustPage is s.Page for tests: an error fails t.
func mustPage(t testing.TB, s *Store, q Query) ([]ItemRecord, bool) {
	t.Helper()
	page, more, err := s.Page(q)
	if err != nil {
		t.Fatalf("page: %v", err)
	}
	return page, more
}
