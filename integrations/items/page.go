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

// Page returns a page of the user's live items of the records q.Records
// names, and whether more follow it. It seeks, in the user's live items in
// page order, to the first item after q.After and reads from there until
// limit+1 items passed the filters: a page costs its own items and those
// the filters skip, however many items the user or others hold, and reads
// back from the log only the items it returns. With InIDs it looks those
// ids up instead: the HTTP layer allows at most 100 of them. An error is a
// record that did not read back (damage).
func (s *Store) Page(q Query) (page []ItemRecord, more bool, err error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	if len(q.Records) == 0 {
		return nil, false, nil
	}
	ids := newIDFilter(q.InIDs, q.NinIDs)
	page, err = s.read(func(d *dense) []uint32 {
		u, ok := d.userIdx[q.UserID]
		if !ok {
			return nil
		}
		keeps := func(e *entry) bool { return q.keeps(d, e, u, ids) }
		if ids.in != nil {
			return pageOf(d, ids, keeps, limit)
		}
		var from func(*entry) bool
		if q.After != nil {
			from = q.After.before
		}
		slots := make([]uint32, 0, limit+1)
		s.pageSource(d, u, from, func(sl uint32) bool {
			if keeps(d.ents.at(sl)) {
				slots = append(slots, sl)
			}
			return len(slots) <= limit
		})
		return slots
	})
	if err != nil {
		return nil, false, err
	}
	if len(page) > limit {
		return page[:limit], true, nil
	}
	return page, false, nil
}

// idFilter is a Query's InIDs and NinIDs as sets: nil in lets every id
// through. An id that is not a UUID names no item.
type idFilter struct {
	in, nin map[[16]byte]struct{}
}

func newIDFilter(in, nin []string) idFilter {
	var f idFilter
	if len(in) > 0 {
		f.in = make(map[[16]byte]struct{}, len(in))
		for _, id := range in {
			if b, ok := parseID(id); ok {
				f.in[b] = struct{}{}
			}
		}
	}
	if len(nin) > 0 {
		f.nin = make(map[[16]byte]struct{}, len(nin))
		for _, id := range nin {
			if b, ok := parseID(id); ok {
				f.nin[b] = struct{}{}
			}
		}
	}
	return f
}

// match reports whether id is in the in set, when there is one, and not
// in the nin set.
func (f idFilter) match(id [16]byte) bool {
	if f.in != nil {
		if _, ok := f.in[id]; !ok {
			return false
		}
	}
	_, excluded := f.nin[id]
	return !excluded
}

// keeps reports whether e, an entry of d, belongs in a page of q, wherever
// it comes from; u is q's user, ids holds q's InIDs and NinIDs.
func (q *Query) keeps(d *dense, e *entry, u uint16, ids idFilter) bool {
	return e.live() && d.user(e) == u && q.Records[d.records[e.record()]] && ids.match(e.id) &&
		(q.After == nil || q.After.before(e))
}

// before reports whether e comes after c in the newest-first order.
func (c *Cursor) before(e *entry) bool {
	if at := c.Date.UnixNano(); e.date() != at {
		return e.date() < at
	}
	b := idText(e.id)
	return string(b[:]) < c.ID
}

// pageOf is the page among the items whose ids ids.in holds, limit+1 at
// most.
func pageOf(d *dense, ids idFilter, keeps func(*entry) bool, limit int) []uint32 {
	var slots []uint32
	for id := range ids.in {
		if sl, ok := d.findID(id); ok && keeps(d.ents.at(sl)) {
			slots = append(slots, sl)
		}
	}
	slices.SortFunc(slots, func(a, b uint32) int {
		if newerEntry(d.ents.at(a), d.ents.at(b)) {
			return -1
		}
		return 1
	})
	return slots[:min(len(slots), limit+1)]
}

// ascendUser calls fn for the slots of the user's live items in page
// order, from the first for which from reports true (nil: the newest): a
// binary search, as from is false then true along the order.
func ascendUser(d *dense, u uint16, from func(*entry) bool, fn func(uint32) bool) {
	order := d.pages[u]
	i := 0
	if from != nil {
		i, _ = slices.BinarySearchFunc(order, true, func(sl uint32, _ bool) int {
			if from(d.ents.at(sl)) {
				return 1
			}
			return -1
		})
	}
	for _, sl := range order[i:] {
		if !fn(sl) {
			return
		}
	}
}

// LiveIDs returns the ids of the user's live items, newest first: what
// an index of the user's items must hold.
func (s *Store) LiveIDs(userID string) []string {
	var out []string
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) {
		u, ok := d.userIdx[userID]
		if !ok {
			return
		}
		out = make([]string, 0, len(d.pages[u]))
		for _, sl := range d.pages[u] {
			out = append(out, formatID(d.ents.at(sl).id))
		}
	})
	return out
}

// Users returns the ids of the users that have live items, in no order.
func (s *Store) Users() []string {
	var out []string
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) {
		for u, order := range d.pages {
			if len(order) > 0 {
				out = append(out, d.users[u])
			}
		}
	})
	return out
}
