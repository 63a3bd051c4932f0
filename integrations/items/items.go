// Package items keeps the synced items: their metadata in the main store's
// "items" table (the personal part sealed), their texts sealed in packs
// shared by a record's items (pack.go), pages of a user's items through an
// index of each user's live items in page order, and one user's item by
// id. It is the only code that writes or reads item content; the sync
// scheduler stores and deletes items through it.
package items

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unique"

	"searchsvc/integrations"
	"searchsvc/integrations/textguard"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

// ItemRecord is the metadata of one synced item (an email, a feed entry),
// owned by a user and the integration record that fetched it, kept in the
// main store's "items" table. What is personal in it (provider id, title,
// sender, recipients) is sealed in Meta, like the content, which is in
// its record's pack (see content.go): the store's log is plain JSON on
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
	Meta      []byte    `json:"meta,omitempty"` // sealed Meta (vault.ItemMeta)
	Date      time.Time `json:"date"`
	Size      int64     `json:"size"` // bytes of the original
	CreatedAt time.Time `json:"createdAt"`
	// DeletedAt is set when the record was disconnected: the item is
	// soft-deleted, its Key, Meta and content file are gone, and the
	// tombstone is dropped TombstoneTTL later.
	DeletedAt *time.Time `json:"deletedAt,omitempty"`
	// Content is where the item's sealed text lies in its record's packs,
	// "<pack>.<offset>.<length>" (see pack.go); empty for a deleted item
	// and for one stored before packs, whose text is a file of its own.
	Content string `json:"c,omitempty"`
}

// Meta is the personal part of an item's metadata, sealed in
// ItemRecord.Meta.
type Meta struct {
	ProviderID string   `json:"p"`
	Title      string   `json:"t,omitempty"`
	From       string   `json:"f,omitempty"`
	To         []string `json:"to,omitempty"`
	Link       string   `json:"l,omitempty"` // the original's address
	// Source is where in its record the item comes from (a feed's title;
	// integrations.Item.Source), empty for most.
	Source string `json:"s,omitempty"`
	// Thread and Refs are integrations.Item's: the email's conversation
	// and the ids that link it there (GET /v1/items/{id}/thread).
	Thread string   `json:"th,omitempty"`
	Refs   []string `json:"rf,omitempty"`
	// Folder and FolderUse are integrations.Item's: the mailbox an
	// email lies in, for in:.
	Folder    string `json:"fo,omitempty"`
	FolderUse string `json:"fu,omitempty"`
	// Attachments are an email's files, listed (their text is in the
	// content).
	Attachments []integrations.Attachment `json:"at,omitempty"`
	// Path is a file's path inside its record's folder
	// (integrations.Item.Path), empty for most.
	Path string `json:"pa,omitempty"`
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
	maxLink       = 2048
	// A thread id or link longer than maxThreadKey is not kept (IMAP's
	// are 16 characters, Gmail's about as many); at most maxRefs links.
	maxThreadKey   = 64
	maxRefs        = 12
	maxAttachments = 50
)

// TombstoneTTL is how long a soft-deleted item's tombstone is kept before
// compaction (or the next start) drops it.
const TombstoneTTL = 30 * 24 * time.Hour

// register registers the "items" table on st: a storage.ColdTable whose
// records memory keeps in d (see dense.go).
func register(st *storage.Store, d *dense) *storage.ColdTable {
	return storage.RegisterCold(st, "items", storage.ColdConfig{
		Apply: d.apply, Opened: d.open, Keep: d.keep, Moved: d.moved,
		Ref: d.ref, Owner: d.owner, Len: d.len, Check: d.check,
	})
}

// Store keeps the items of the main store and their content files. It is
// safe for concurrent use.
type Store struct {
	st      *storage.Store
	t       *storage.ColdTable
	d       *dense // read under t.View only
	vault   *vault.Vault
	content *contentStore
	// pageSource gives Page the slots of the user's live items in page
	// order, from the first for which from reports true: ascendUser,
	// which tests wrap to count what a page reads.
	pageSource func(d *dense, user uint16, from func(*entry) bool, fn func(slot uint32) bool)
}

// New registers the "items" table on st, which must not be open yet, with
// content files under dir (DATA_DIR/items).
func New(st *storage.Store, v *vault.Vault, dir string) *Store {
	d := newDense()
	s := &Store{st: st, t: register(st, d), d: d, vault: v, content: newContentStore(dir, v)}
	s.pageSource = ascendUser
	return s
}

// view calls fn with the items as committed, and load, which reads the
// record at a slot back whole from the log.
func (s *Store) view(fn func(d *dense, load func(slot uint32) ([]byte, error))) {
	s.t.View(func(load func(string, storage.ColdRef) ([]byte, error)) {
		fn(s.d, func(slot uint32) ([]byte, error) {
			e := s.d.ents.at(slot)
			return load(formatID(e.id), s.d.refOf(e))
		})
	})
}

// read returns the records at the slots pick chooses, read back whole.
func (s *Store) read(pick func(d *dense) []uint32) ([]ItemRecord, error) {
	return s.readLoad(func(d *dense, _ func(uint32) ([]byte, error)) []uint32 { return pick(d) })
}

// readLoad is read for a pick that reads records back too (to confirm a
// key, findKey).
func (s *Store) readLoad(pick func(d *dense, load func(uint32) ([]byte, error)) []uint32) ([]ItemRecord, error) {
	var raws [][]byte
	var err error
	s.view(func(d *dense, load func(uint32) ([]byte, error)) {
		slots := pick(d, load)
		raws = make([][]byte, len(slots))
		for i, sl := range slots {
			if raws[i], err = load(sl); err != nil {
				return
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("read item back: %w", err)
	}
	out := make([]ItemRecord, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("decode item read back: %w", err)
		}
	}
	return out, nil
}

// readAll is read for the callers that take no error (ForRecord, Scan,
// RemoveProviderOps): a record that does not read back whole (damage in
// the log, which the store reports as a *CorruptError) is given as memory
// holds it, without its sealed metadata, so that opening it fails where
// it is used, rather than the item going missing.
func (s *Store) readAll(pick func(d *dense, load func(uint32) ([]byte, error)) []uint32) []ItemRecord {
	var out []ItemRecord
	s.view(func(d *dense, load func(uint32) ([]byte, error)) {
		slots := pick(d, load)
		out = make([]ItemRecord, len(slots))
		for i, sl := range slots {
			raw, err := load(sl)
			if err == nil {
				err = json.Unmarshal(raw, &out[i])
			}
			if err != nil {
				out[i] = d.record(sl)
			}
		}
	})
	return out
}

// Dir is the directory of the content files, one directory per record.
func (s *Store) Dir() string { return s.content.dir }

// Owner is the user-integration record an item is synced for.
type Owner struct {
	UserID      string
	RecordID    string
	Integration string // the integration's domain
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

func metaAAD(it *ItemRecord) []byte {
	return vault.AAD(vault.ItemMeta, it.UserID, it.Integration, it.ID)
}

// Known reports whether the record holds a live item with providerID.
func (s *Store) Known(recordID, providerID string) bool {
	k, _ := parseKey(itemKey(recordID, providerID))
	var ok bool
	s.view(func(d *dense, load func(uint32) ([]byte, error)) { _, ok = d.findKey(k, load) })
	return ok
}

// MaxProviderID bounds a provider's id for an item (bytes); an item with
// a longer one is not stored.
const MaxProviderID = maxProviderID

// NewItem turns what a provider returned into the metadata to store, its
// personal part clipped to the limits above and sealed, times in UTC.
func (s *Store) NewItem(owner Owner, out *integrations.Item, now time.Time) (ItemRecord, error) {
	it := ItemRecord{
		ID:          uuid.New(),
		UserID:      intern(owner.UserID),
		RecordID:    intern(owner.RecordID),
		Integration: intern(owner.Integration),
		Key:         itemKey(owner.RecordID, out.ProviderID),
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
	m := Meta{ProviderID: out.ProviderID, Title: textguard.Truncate(out.Title, maxTitle), From: textguard.Truncate(out.From, maxAddress),
		Source: textguard.Truncate(out.Source, maxTitle), Path: textguard.Truncate(out.Path, maxLink)}
	if len(out.Link) <= maxLink {
		m.Link = out.Link // a cut link would lead elsewhere: none instead
	}
	if len(out.Thread) <= maxThreadKey {
		m.Thread = out.Thread
	}
	for _, r := range out.Refs {
		if len(m.Refs) < maxRefs && r != "" && len(r) <= maxThreadKey {
			m.Refs = append(m.Refs, r)
		}
	}
	m.Folder, m.FolderUse = textguard.Truncate(out.Folder, maxTitle), textguard.Truncate(out.FolderUse, 16)
	for _, a := range out.Attachments {
		if len(m.Attachments) == maxAttachments {
			break
		}
		a.Name, a.Type = textguard.Truncate(a.Name, maxTitle), textguard.Truncate(a.Type, maxTitle)
		m.Attachments = append(m.Attachments, a)
	}
	for _, to := range out.To {
		if len(m.To) == maxRecipients {
			break
		}
		m.To = append(m.To, textguard.Truncate(to, maxAddress))
	}
	b, err := json.Marshal(m)
	if err != nil {
		return ItemRecord{}, err
	}
	it.Meta = s.vault.Seal(metaAAD(&it), b)
	return it, nil
}

// OpenMeta opens an item's sealed metadata.
func (s *Store) OpenMeta(it *ItemRecord) (Meta, error) {
	var m Meta
	b, err := s.vault.Open(metaAAD(it), it.Meta)
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
	it.Key, it.Meta, it.Content = "", nil, ""
}

// View is an item as clients see it. IntegrationID is the id of the
// user-integration record that fetched it (an id, never the record).
type View struct {
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
	// Link is the address of the original (a feed entry's page, the
	// message in Gmail); absent when there is none.
	Link string `json:"link,omitempty"`
	// ThreadID names an email's conversation (Meta.Thread): Gmail's
	// thread id, or for IMAP one made from the first message's id;
	// absent for other items.
	ThreadID string `json:"threadId,omitempty"`
	// Attachments are an email's files: an empty list for an item
	// without any.
	Attachments []integrations.Attachment `json:"attachments"`
	// Path is a file's path inside the folder its record connects;
	// absent for other items.
	Path string `json:"path,omitempty"`
}

// View returns what a client may see of it, opening its metadata.
func (s *Store) View(it *ItemRecord) (View, error) {
	m, err := s.OpenMeta(it)
	if err != nil {
		return View{}, err
	}
	if m.To == nil {
		m.To = []string{}
	}
	if m.Attachments == nil {
		m.Attachments = []integrations.Attachment{}
	}
	return View{
		ID: it.ID, UserID: it.UserID, IntegrationID: it.RecordID, Integration: it.Integration,
		ProviderID: m.ProviderID, Title: m.Title, From: m.From, To: m.To,
		Date: it.Date, Size: it.Size, CreatedAt: it.CreatedAt, Link: m.Link, ThreadID: m.Thread,
		Attachments: m.Attachments, Path: m.Path,
	}, nil
}

// Detail is one item with its extracted text.
type Detail struct {
	View
	Text string `json:"text"`
}

// ErrNotFound is returned for an unknown or deleted item, and for another
// user's item.
var ErrNotFound = errors.New("item not found")

// Get returns the user's live item with id, read back from the log. An
// unknown id, a deleted item and another user's item are all ErrNotFound.
func (s *Store) Get(userID, id string) (ItemRecord, error) {
	its, err := s.read(func(d *dense) []uint32 {
		sl, ok := d.slot(id)
		if !ok || !d.ents.at(sl).live() || d.users[d.user(d.ents.at(sl))] != userID {
			return nil
		}
		return []uint32{sl}
	})
	if err != nil {
		return ItemRecord{}, err
	}
	if len(its) == 0 {
		return ItemRecord{}, ErrNotFound
	}
	return its[0], nil
}
