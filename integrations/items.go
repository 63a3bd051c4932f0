package integrations

import (
	"container/heap"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unique"

	"searchsvc/httpx"
	"searchsvc/storage"
)

// ItemRecord is the metadata of one synced item (an email, a feed entry),
// owned by a user and the integration record that fetched it, kept in the
// main store's "items" table. What is personal in it (provider id, title,
// sender, recipients) is sealed in Meta, like the content, which is in a
// sealed file of its own (content.go): the store's log is plain JSON on
// the SD card, and nothing personal sits there in plain text. Date, size
// and the ids stay plain, enough to select and order a page, so a listing
// opens only the page's Meta. Memory grows with the number of items, not
// their size: every field here is held for every item.
type ItemRecord struct {
	ID          string `json:"id"`
	UserID      string `json:"userId"`
	RecordID    string `json:"recordId"`
	Integration string `json:"integration"`
	// Key identifies the item at the provider without naming it: a hash
	// of the record id and the provider's id for the item. Among live
	// items it is unique, so an item is stored once.
	Key       string    `json:"key,omitempty"`
	Meta      string    `json:"meta,omitempty"` // sealed ItemMeta
	Date      time.Time `json:"date"`
	Size      int64     `json:"size"` // bytes of the original
	CreatedAt time.Time `json:"createdAt"`
	// DeletedAt is set when the record was disconnected: the item is
	// soft-deleted, its Key, Meta and content file are gone, and the
	// tombstone is dropped tombstoneTTL later.
	DeletedAt *time.Time `json:"deletedAt,omitempty"`
}

// ItemMeta is the personal part of an item's metadata, sealed in
// ItemRecord.Meta.
type ItemMeta struct {
	ProviderID string   `json:"p"`
	Title      string   `json:"t,omitempty"`
	From       string   `json:"f,omitempty"`
	To         []string `json:"to,omitempty"`
}

// UnmarshalJSON decodes an item, sharing one copy of the strings that
// every item of a record repeats (user, record, integration) instead of
// keeping one per item.
func (it *ItemRecord) UnmarshalJSON(b []byte) error {
	type plain ItemRecord
	if err := json.Unmarshal(b, (*plain)(it)); err != nil {
		return err
	}
	it.UserID = intern(it.UserID)
	it.RecordID = intern(it.RecordID)
	it.Integration = intern(it.Integration)
	return nil
}

func intern(s string) string { return unique.Make(s).Value() }

// Live reports whether the item has not been deleted.
func (it *ItemRecord) Live() bool { return it.DeletedAt == nil }

// Limits on item metadata, in bytes or entries. What is cut is still in
// the content file.
const (
	maxTitle      = 512
	maxAddress    = 320
	maxRecipients = 20
	maxProviderID = 2048
)

// tombstoneTTL is how long a soft-deleted item's tombstone is kept before
// compaction (or the next start) drops it.
const tombstoneTTL = 30 * 24 * time.Hour

// Index names of the items table.
const (
	itemIndexRecord = "record" // every item of a record
	itemIndexKey    = "key"    // live items by Key
)

func registerItems(st *storage.Store) *storage.Table[ItemRecord] {
	return storage.Register(st, "items", storage.TableConfig[ItemRecord]{
		ID:   func(it *ItemRecord) string { return it.ID },
		Live: (*ItemRecord).Live,
		Expired: func(it *ItemRecord, now time.Time) bool {
			return it.DeletedAt != nil && now.Sub(*it.DeletedAt) > tombstoneTTL
		},
		Unique: map[string]func(*ItemRecord) string{
			itemIndexKey: func(it *ItemRecord) string { return it.Key },
		},
		Index: map[string]func(*ItemRecord) string{
			itemIndexRecord: func(it *ItemRecord) string { return it.RecordID },
		},
	})
}

// itemKey is ItemRecord.Key: 128 bits of SHA-256 over the record id and
// the provider's id, in base64url. It keeps a provider id (a feed entry's
// URL, say) out of the log, and is short in memory.
func itemKey(recordID, providerID string) string {
	h := sha256.New()
	h.Write([]byte(recordID))
	h.Write([]byte{0})
	h.Write([]byte(providerID))
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16])
}

func metaAAD(it *ItemRecord) AAD {
	return AAD{UserID: it.UserID, Domain: it.Integration, RecordID: "item-meta:" + it.ID}
}

// newItem turns what a provider returned into the metadata to store, its
// personal part clipped to the limits above and sealed, times in UTC.
func newItem(v *Vault, rec *Record, out *Item, now time.Time) (ItemRecord, error) {
	it := ItemRecord{
		ID:          httpx.NewUUID(),
		UserID:      intern(rec.UserID),
		RecordID:    intern(rec.ID),
		Integration: intern(rec.Integration),
		Key:         itemKey(rec.ID, out.ProviderID),
		Date:        out.Date.UTC(),
		Size:        out.Size,
		CreatedAt:   now.UTC(),
	}
	if it.Size <= 0 {
		it.Size = int64(len(out.Raw))
	}
	if it.Date.IsZero() {
		it.Date = it.CreatedAt
	}
	m := ItemMeta{ProviderID: out.ProviderID, Title: clip(out.Title, maxTitle), From: clip(out.From, maxAddress)}
	for _, to := range out.To {
		if len(m.To) == maxRecipients {
			break
		}
		m.To = append(m.To, clip(to, maxAddress))
	}
	b, err := json.Marshal(m)
	if err != nil {
		return ItemRecord{}, err
	}
	if it.Meta, err = v.Seal(metaAAD(&it), b); err != nil {
		return ItemRecord{}, fmt.Errorf("seal item metadata: %w", err)
	}
	return it, nil
}

// openMeta opens an item's sealed metadata.
func openMeta(v *Vault, it *ItemRecord) (ItemMeta, error) {
	var m ItemMeta
	b, err := v.Open(metaAAD(it), it.Meta)
	if err != nil {
		return m, fmt.Errorf("open item metadata: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("decode item metadata: %w", err)
	}
	return m, nil
}

// scrub soft-deletes an item and forgets what was personal in it.
func scrub(it *ItemRecord, now time.Time) {
	it.DeletedAt = &now
	it.Key, it.Meta = "", ""
}

// ItemView is an item as clients see it. IntegrationID is the id of the
// user-integration record that fetched it (an id, never the record).
type ItemView struct {
	ID            string    `json:"id"`
	UserID        string    `json:"userId"`
	IntegrationID string    `json:"integrationId"`
	Integration   string    `json:"integration"`
	ProviderID    string    `json:"providerId"`
	Title         string    `json:"title"`
	From          string    `json:"from"`
	To            []string  `json:"to"`
	Date          time.Time `json:"date"`
	Size          int64     `json:"size"`
	CreatedAt     time.Time `json:"createdAt"`
}

// View returns what a client may see of it, opening its metadata.
func (s *Syncer) View(it *ItemRecord) (ItemView, error) {
	m, err := openMeta(s.records.Vault(), it)
	if err != nil {
		return ItemView{}, err
	}
	if m.To == nil {
		m.To = []string{}
	}
	return ItemView{
		ID: it.ID, UserID: it.UserID, IntegrationID: it.RecordID, Integration: it.Integration,
		ProviderID: m.ProviderID, Title: m.Title, From: m.From, To: m.To,
		Date: it.Date, Size: it.Size, CreatedAt: it.CreatedAt,
	}, nil
}

// ItemDetail is one item with its extracted text.
type ItemDetail struct {
	ItemView
	Text string `json:"text"`
}

// Page sizes of GET /v1/items.
const (
	DefaultItemsLimit = 50
	MaxItemsLimit     = 200
)

// ItemQuery selects a page of a user's items, newest first (by Date, then
// by id, both descending).
type ItemQuery struct {
	UserID string
	// Records keeps only items of these records; empty: all the user's.
	Records map[string]bool
	Filter  httpx.Filter // inIds / ninIds on the item id
	Limit   int          // 1..MaxItemsLimit
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

// ListItems returns a page of the user's live items of live records, and
// whether more follow it. It holds the store's read lock for one pass over
// the items, copying only the page.
func (s *Syncer) ListItems(q ItemQuery) (page []ItemRecord, more bool) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultItemsLimit
	}
	limit = min(limit, MaxItemsLimit)
	live := make(map[string]bool)
	for _, r := range s.records.ForUser(q.UserID) {
		if len(q.Records) == 0 || q.Records[r.ID] {
			live[r.ID] = true
		}
	}
	if len(live) == 0 {
		return nil, false
	}
	h := make(pageHeap, 0, limit+1)
	s.items.Scan(func(it ItemRecord) bool {
		if it.DeletedAt != nil || it.UserID != q.UserID || !live[it.RecordID] || !q.Filter.Match(it.ID) {
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

// GetItem returns the user's live item with id, if its record is live.
func (s *Syncer) GetItem(userID, id string) (ItemRecord, bool) {
	it, ok := s.items.Get(id)
	if !ok || !it.Live() || it.UserID != userID {
		return ItemRecord{}, false
	}
	if _, ok := s.records.Get(it.RecordID); !ok {
		return ItemRecord{}, false
	}
	return it, true
}
