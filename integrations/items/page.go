package items

import (
	"container/heap"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"searchsvc/httpx"
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
	Filter  httpx.Filter // inIds / ninIds on the item id
	Limit   int          // 1..MaxLimit
	After   *Cursor      // the last item of the previous page
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
	if !ok || !httpx.IsUUID(id) {
		return Cursor{}, ErrBadCursor
	}
	t, err := time.Parse(time.RFC3339Nano, date)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	return Cursor{Date: t.UTC(), ID: id}, nil
}

// newer orders items newest first: by Date, then by id, descending.
func newer(a, b *ItemRecord) bool {
	if !a.Date.Equal(b.Date) {
		return a.Date.After(b.Date)
	}
	return a.ID > b.ID
}

// pageHeap keeps the best n items seen so far, the worst at the root, so
// that a listing never copies or sorts every item of the user.
type pageHeap []ItemRecord

func (h pageHeap) Len() int           { return len(h) }
func (h pageHeap) Less(i, j int) bool { return newer(&h[j], &h[i]) }
func (h pageHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *pageHeap) Push(x any)        { *h = append(*h, x.(ItemRecord)) }
func (h *pageHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Page returns a page of the user's live items of the records q.Records
// names, and whether more follow it. It reads the user's items through
// the index by user, holding the store's read lock for one pass over
// them, and copies only the page: another user's items cost nothing.
func (s *Store) Page(q Query) (page []ItemRecord, more bool) {
	return s.page(q, s.pageSource)
}

// scanUser calls fn for every item of the user, through the index by user.
func (s *Store) scanUser(userID string, fn func(ItemRecord) bool) {
	s.t.ScanIndex(indexUser, userID, fn)
}

// page is Page over the items scan gives.
func (s *Store) page(q Query, scan func(userID string, fn func(ItemRecord) bool)) (page []ItemRecord, more bool) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	if len(q.Records) == 0 {
		return nil, false
	}
	h := make(pageHeap, 0, limit+1)
	scan(q.UserID, func(it ItemRecord) bool {
		if it.DeletedAt != nil || it.UserID != q.UserID || !q.Records[it.RecordID] || !q.Filter.Match(it.ID) {
			return true
		}
		if q.After != nil && !q.After.before(&it) {
			return true
		}
		if len(h) <= limit {
			heap.Push(&h, it)
		} else if newer(&it, &h[0]) {
			h[0] = it
			heap.Fix(&h, 0)
		}
		return true
	})
	more = len(h) > limit
	page = make([]ItemRecord, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		page[i] = heap.Pop(&h).(ItemRecord)
	}
	if more {
		page = page[:limit]
	}
	return page, more
}
