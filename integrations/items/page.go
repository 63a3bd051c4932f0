package items

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"time"

	"searchsvc/storage/uuid"
)

// Page sizes of GET /v1/items.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// Query selects a page of a user's items, newest first (by Date, then by
// id, both descending).
type Query struct {
	UserID string
	// Records keeps only items of these records, which the caller has
	// checked are the user's and live; empty: no item.
	Records map[string]bool
	InIDs   []string // only items with these ids; empty: any (inIds)
	NinIDs  []string // no item with these ids (ninIds)
	Limit   int      // 1..MaxLimit
	After   *Cursor  // the last item of the previous page
}

// Cursor is a position in the newest-first order: the date and id of the
// last item of a page.
type Cursor struct {
	Date time.Time
	ID   string
}

// before reports whether it comes after c in the newest-first order.
func (c *Cursor) before(it *ItemRecord) bool {
	if !it.Date.Equal(c.Date) {
		return it.Date.Before(c.Date)
	}
	return it.ID < c.ID
}

// maxCursor bounds an encoded cursor: a date and a UUID fit in 100 bytes.
const maxCursor = 200

// ErrBadCursor is returned by ParseCursor for a value it did not make.
var ErrBadCursor = errors.New("invalid cursor")

// String encodes c as the opaque nextCursor value.
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.Date.UTC().Format(time.RFC3339Nano) + "|" + c.ID))
}

// ParseCursor decodes a cursor made by Cursor.String.
func ParseCursor(s string) (Cursor, error) {
	if len(s) > maxCursor {
		return Cursor{}, ErrBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	date, id, ok := strings.Cut(string(b), "|")
	if !ok || !uuid.Valid(id) {
		return Cursor{}, ErrBadCursor
	}
	t, err := time.Parse(time.RFC3339Nano, date)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	return Cursor{Date: t.UTC(), ID: id}, nil
}

// newer orders items newest first: by Date, then by id, descending. It is
// the order of the index by user (indexPage), a strict total order as ids
// are unique.
func newer(a, b *ItemRecord) bool {
	if !a.Date.Equal(b.Date) {
		return a.Date.After(b.Date)
	}
	return a.ID > b.ID
}

// Page returns a page of the user's live items of the records q.Records
// names, and whether more follow it. It seeks, in the index of the user's
// live items in page order, to the first item after q.After and reads
// from there until limit+1 items passed the filters: a page costs its own
// items and those the filters skip, however many items the user or others
// hold. With InIDs it looks those ids up instead: the HTTP layer allows
// at most 100 of them.
func (s *Store) Page(q Query) (page []ItemRecord, more bool) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	if len(q.Records) == 0 {
		return nil, false
	}
	ids := newIDFilter(q.InIDs, q.NinIDs)
	if ids.in != nil {
		return s.pageOf(q, ids, limit)
	}
	var from func(*ItemRecord) bool
	if q.After != nil {
		from = q.After.before
	}
	page = make([]ItemRecord, 0, limit+1)
	s.pageSource(q.UserID, from, func(it ItemRecord) bool {
		if q.keeps(&it, ids) {
			page = append(page, it)
		}
		return len(page) <= limit
	})
	return cut(page, limit)
}

// idFilter is a Query's InIDs and NinIDs as sets: nil in lets every id
// through.
type idFilter struct {
	in, nin map[string]struct{}
}

func newIDFilter(in, nin []string) idFilter {
	var f idFilter
	if len(in) > 0 {
		f.in = make(map[string]struct{}, len(in))
		for _, id := range in {
			f.in[id] = struct{}{}
		}
	}
	if len(nin) > 0 {
		f.nin = make(map[string]struct{}, len(nin))
		for _, id := range nin {
			f.nin[id] = struct{}{}
		}
	}
	return f
}

// match reports whether id is in the in set, when there is one, and not
// in the nin set.
func (f idFilter) match(id string) bool {
	if f.in != nil {
		if _, ok := f.in[id]; !ok {
			return false
		}
	}
	_, excluded := f.nin[id]
	return !excluded
}

// keeps reports whether it belongs in a page of q, wherever it comes from;
// ids holds q's InIDs and NinIDs.
func (q *Query) keeps(it *ItemRecord, ids idFilter) bool {
	return it.Live() && it.UserID == q.UserID && q.Records[it.RecordID] && ids.match(it.ID) &&
		(q.After == nil || q.After.before(it))
}

// pageOf is the page of q among the items whose ids ids.in holds.
func (s *Store) pageOf(q Query, ids idFilter, limit int) ([]ItemRecord, bool) {
	var page []ItemRecord
	for id := range ids.in {
		if it, ok := s.t.Get(id); ok && q.keeps(&it, ids) {
			page = append(page, it)
		}
	}
	slices.SortFunc(page, func(a, b ItemRecord) int {
		if newer(&a, &b) {
			return -1
		}
		return 1
	})
	return cut(page, limit)
}

// cut returns the first limit items of page, and whether there were more.
func cut(page []ItemRecord, limit int) ([]ItemRecord, bool) {
	if len(page) > limit {
		return page[:limit], true
	}
	return page, false
}

// ascendUser calls fn for the user's live items in page order, from the
// first for which from reports true (nil: the newest).
func (s *Store) ascendUser(userID string, from func(*ItemRecord) bool, fn func(ItemRecord) bool) {
	s.t.Ascend(indexPage, userID, from, fn)
}

// LiveIDs returns the ids of the user's live items, newest first: what
// an index of the user's items must hold.
func (s *Store) LiveIDs(userID string) []string {
	var out []string
	s.ascendUser(userID, nil, func(it ItemRecord) bool {
		out = append(out, it.ID)
		return true
	})
	return out
}

// Users returns the ids of the users that have live items, in no order.
func (s *Store) Users() []string {
	seen := make(map[string]struct{})
	s.t.Scan(func(it ItemRecord) bool {
		if it.Live() {
			seen[it.UserID] = struct{}{}
		}
		return true
	})
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	return out
}
