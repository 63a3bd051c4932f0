package items

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"searchsvc/storage"
)

// The items are a storage.ColdTable: memory keeps, per item, only what
// finding an item and ordering a page need, in fixed-size form (an entry
// of 44 bytes, in chunks of 4,096, plus about 13 bytes of hash tables and
// page order); the rest (the sealed Meta, the key, the size, the creation
// time) stays in the log, read back with one checked pread when an item
// is shown. A mailbox of 100,000 mails costs a few megabytes, not a
// hundred, and a start reads the log once, keeping an entry per item as
// it goes.
//
// Of the key (ItemRecord.Key, 16 bytes of SHA-256) an entry keeps 3
// bytes, a fingerprint: the key table finds the entries with the
// fingerprint asked for, and the record read back says whether its key is
// the one asked for. Keys are looked up by a sync (is this mail known?)
// and a commit (is this key free?), one pread each for a known key, and
// for an unknown one a pread in about one lookup of 170 (100,000 keys of
// 2^24 fingerprints).
//
// Every change to it happens in the storage's ColdConfig funcs, under the
// store's lock held for writing; every read holds it for reading
// (ColdTable.View), so it needs no lock of its own.

// entry is what memory keeps of one item: 44 bytes, aligned to 4 (no
// field of 8 bytes), so that a chunk holds no padding.
type entry struct {
	id [16]byte // the UUID
	// at is ItemRecord.Date in Unix nanoseconds, or for a deleted item
	// when it was deleted (DeletedAt), which its expiry needs: the low 32
	// bits, then the high (see date).
	at  [2]uint32
	ref packedRef // where the whole record lies in the log
	// rm is the index in dense.records (whose user is the item's) in its
	// low 24 bits, and in its high 8 the index in dense.heads of the
	// sealed Meta's header (0: no Meta).
	rm uint32
	// kf is the flags in its low 8 bits, and in its high 24 the key's
	// fingerprint (keyPrint), when flagKey says it has a key.
	kf uint32
}

// Entry flags.
const (
	flagLive = 1 << iota // not deleted
	flagGone             // removed for good; the slot waits for the next rebuild
	flagKey              // has a key (live items have one)
)

// maxRecords bounds the records with items (24 bits of entry.rm).
const maxRecords = 1 << 24

func (e *entry) live() bool     { return e.kf&(flagLive|flagGone) == flagLive }
func (e *entry) gone() bool     { return e.kf&flagGone != 0 }
func (e *entry) hasKey() bool   { return e.kf&flagKey != 0 }
func (e *entry) print() uint32  { return e.kf >> 8 }
func (e *entry) record() uint32 { return e.rm & (maxRecords - 1) }
func (e *entry) meta() uint8    { return uint8(e.rm >> 24) }
func (e *entry) date() int64    { return int64(uint64(e.at[1])<<32 | uint64(e.at[0])) }
func (e *entry) setDate(ns int64) {
	e.at = [2]uint32{uint32(ns), uint32(uint64(ns) >> 32)}
}

// packedRef is a storage.ColdRef in 12 bytes instead of 16: the offset in
// the log in the low 40 bits of pos (1 TiB) and the length in its high 24
// (16 MiB; an item's record is a few hundred bytes), then the CRC32C. A
// position that does not fit is kept whole in dense.far, and the entry
// holds farRef.
type packedRef struct {
	pos [2]uint32 // low 32 bits, high 32
	crc uint32
}

// farRef marks an entry whose position is in dense.far: offset 1 and
// length 0, which no position has (a stripped record's length is not 0,
// and a whole one's position is all zero).
var farRef = packedRef{pos: [2]uint32{1, 0}}

const (
	refOffBits = 40
	refMaxOff  = 1<<refOffBits - 1
	refMaxLen  = 1<<(64-refOffBits) - 1
)

// packRef packs r, or reports false if it does not fit.
func packRef(r storage.ColdRef) (packedRef, bool) {
	off, n, crc := r.Parts()
	if off < 0 || off > refMaxOff || n > refMaxLen || n == 0 && off != 0 {
		return packedRef{}, false
	}
	pos := uint64(off) | uint64(n)<<refOffBits
	return packedRef{pos: [2]uint32{uint32(pos), uint32(pos >> 32)}, crc: crc}, true
}

func (p packedRef) unpack() storage.ColdRef {
	pos := uint64(p.pos[1])<<32 | uint64(p.pos[0])
	return storage.ColdRefOf(int64(pos&refMaxOff), uint32(pos>>refOffBits), p.crc)
}

// setRef notes where e's whole record lies.
func (d *dense) setRef(e *entry, r storage.ColdRef) {
	if p, ok := packRef(r); ok {
		e.ref = p
		delete(d.far, e.id)
		return
	}
	if d.far == nil {
		d.far = make(map[[16]byte]storage.ColdRef)
	}
	e.ref, d.far[e.id] = farRef, r
}

// refOf is where e's whole record lies.
func (d *dense) refOf(e *entry) storage.ColdRef {
	if e.ref == farRef {
		return d.far[e.id]
	}
	return e.ref.unpack()
}

// keyPrint is the fingerprint of a key an entry keeps: its first 3 bytes
// (the key is a hash already).
func keyPrint(k [16]byte) uint32 { return uint32(k[0])<<16 | uint32(k[1])<<8 | uint32(k[2]) }

// entries holds the entries in chunks of entryChunk, so that growing
// copies none (a start adding 100,000 would otherwise hold the old and the
// new slice at once, and keep up to a quarter of it unused), and a slot
// is an index: entry s is chunks[s/entryChunk][s%entryChunk].
type entries struct {
	chunks [][]entry
	n      int // slots in use
}

// entryChunk is the entries of a chunk: 256 KiB.
const entryChunk = 4096

func (es *entries) at(s uint32) *entry { return &es.chunks[s/entryChunk][s%entryChunk] }

// add appends e and returns its slot.
func (es *entries) add(e entry) uint32 {
	if es.n == len(es.chunks)*entryChunk {
		es.chunks = append(es.chunks, make([]entry, entryChunk))
	}
	s := uint32(es.n)
	*es.at(s) = e
	es.n++
	return s
}

// newerEntry is newer for entries: by date, then by id, descending.
func newerEntry(a, b *entry) bool {
	if ad, bd := a.date(), b.date(); ad != bd {
		return ad > bd
	}
	return string(a.id[:]) > string(b.id[:])
}

// maxUsers bounds the users with items (entry.user is 16 bits).
const maxUsers = 1 << 16

// dense is the in-memory part of the items table.
type dense struct {
	ents  entries
	n     int      // entries not gone
	ids   hashSlot // id → slot, every entry not gone
	keys  hashSlot // key fingerprint → slots, live entries with a key
	pages map[uint16][]uint32
	// pages holds each user's live entries in page order (newest first);
	// built at Open, kept by merges per batch.

	users     []string
	userIdx   map[string]uint16
	records   []string // record ids
	integ     []string // each record's integration
	recUser   []uint16 // each record's user, in users
	recordIdx map[recordKey]uint32
	heads     [][]byte // distinct sealed-Meta headers; heads[0] is none
	// far holds the positions that do not fit an entry (packedRef), by
	// id: none in a log under 1 TiB.
	far map[[16]byte]storage.ColdRef

	ready bool
}

// recordKey names a record of dense.records: a record's items are one
// user's.
type recordKey struct {
	user uint16
	id   string
}

func newDense() *dense {
	return &dense{pages: make(map[uint16][]uint32), userIdx: make(map[string]uint16),
		recordIdx: make(map[recordKey]uint32), heads: [][]byte{nil}}
}

// user is the index in d.users of e's user.
func (d *dense) user(e *entry) uint16 { return d.recUser[e.record()] }

// record is what memory holds of the item at slot s, without what only
// the log holds (the sealed metadata, the key, the size, the creation
// time).
func (d *dense) record(s uint32) ItemRecord {
	e := d.ents.at(s)
	r := e.record()
	it := ItemRecord{ID: formatID(e.id), UserID: d.users[d.recUser[r]], RecordID: d.records[r],
		Integration: d.integ[r], Date: time.Unix(0, e.date()).UTC()}
	if !e.live() {
		at := it.Date
		it.DeletedAt, it.Date = &at, time.Time{}
	}
	return it
}

// parseID decodes a UUID in its canonical text form.
func parseID(s string) ([16]byte, bool) {
	var id [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	var h [32]byte
	copy(h[0:], s[0:8])
	copy(h[8:], s[9:13])
	copy(h[12:], s[14:18])
	copy(h[16:], s[19:23])
	copy(h[20:], s[24:36])
	if _, err := hex.Decode(id[:], h[:]); err != nil {
		return id, false
	}
	return id, formatID(id) == s // lower case only: it must read back as it was
}

func formatID(id [16]byte) string {
	b := idText(id)
	return string(b[:])
}

// idText is the canonical text of id, without allocating.
func idText(id [16]byte) [36]byte {
	var b [36]byte
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], id[10:16])
	return b
}

// parseKey decodes ItemRecord.Key; "" is the zero key.
func parseKey(s string) ([16]byte, bool) {
	var k [16]byte
	if s == "" {
		return k, true
	}
	if base64.RawURLEncoding.DecodedLen(len(s)) != 16 {
		return k, false
	}
	n, err := base64.RawURLEncoding.Decode(k[:], []byte(s))
	return k, err == nil && n == 16 && base64.RawURLEncoding.EncodeToString(k[:]) == s
}

// coldFields are the fields of a logged item that memory keeps.
type coldFields struct {
	ID        string          `json:"id"`
	UserID    string          `json:"userId"`
	RecordID  string          `json:"recordId"`
	Integ     string          `json:"integration"`
	Key       string          `json:"key"`
	Meta      json.RawMessage `json:"meta"`
	Date      time.Time       `json:"date"`
	DeletedAt *time.Time      `json:"deletedAt"`
}

// metaHeadLen is how much of a sealed Meta names its key (vault's header).
const metaHeadLen = 5

// fastFields reads the fields memory keeps from an item as json.Marshal
// writes it (the fields in their order, strings without escapes), without
// encoding/json's reflection and its two passes over the sealed metadata:
// most of a start's time. It reports false for anything else, which
// encoding/json then reads.
func fastFields(v []byte, f *coldFields) bool {
	p := 0
	str := func(key string, optional bool) ([]byte, bool) {
		if !bytes.HasPrefix(v[p:], []byte(key)) {
			return nil, optional
		}
		start := p + len(key) - 1 // the opening quote
		n := bytes.IndexByte(v[start+1:], '"')
		if n < 0 || bytes.IndexByte(v[start+1:start+1+n], '\\') >= 0 {
			return nil, false
		}
		p = start + n + 2
		return v[start:p], true // quoted
	}
	var ok bool
	var id, user, rec, integ, key, date, deleted []byte
	if id, ok = str(`{"id":"`, false); !ok || id == nil {
		return false
	}
	if user, ok = str(`,"userId":"`, false); !ok || user == nil {
		return false
	}
	if rec, ok = str(`,"recordId":"`, false); !ok || rec == nil {
		return false
	}
	if integ, ok = str(`,"integration":"`, false); !ok || integ == nil {
		return false
	}
	if key, ok = str(`,"key":"`, true); !ok {
		return false
	}
	if f.Meta, ok = str(`,"meta":"`, true); !ok {
		return false
	}
	if date, ok = str(`,"date":"`, false); !ok || date == nil {
		return false
	}
	if !bytes.HasPrefix(v[p:], []byte(`,"size":`)) {
		return false
	}
	n := bytes.IndexByte(v[p+1:], ',')
	if n < 0 {
		return false
	}
	p += 1 + n
	if c, ok := str(`,"createdAt":"`, false); !ok || c == nil {
		return false
	}
	if deleted, ok = str(`,"deletedAt":"`, true); !ok {
		return false
	}
	// The content reference (ItemRecord.Content), which memory does not keep.
	if _, ok = str(`,"c":"`, true); !ok || string(v[p:]) != "}" {
		return false
	}
	unq := func(b []byte) string { return string(b[1 : len(b)-1]) }
	f.ID, f.UserID, f.RecordID, f.Integ = unq(id), unq(user), unq(rec), unq(integ)
	if key != nil {
		f.Key = unq(key)
	}
	if f.Date.UnmarshalJSON(date) != nil {
		return false
	}
	if deleted != nil {
		f.DeletedAt = new(time.Time)
		if f.DeletedAt.UnmarshalJSON(deleted) != nil {
			return false
		}
	}
	return true
}

// entryOf decodes the entry of a logged item, noting its user, record and
// metadata header if new: only apply, under the store's lock, calls it.
func (d *dense) entryOf(id string, v []byte, ref storage.ColdRef) (entry, error) {
	return d.decode(id, v, ref, true)
}

// decode is entryOf; with note false it changes nothing of d (for check,
// which runs beside readers) and leaves the entry's user, record and
// header unset.
func (d *dense) decode(id string, v []byte, ref storage.ColdRef, note bool) (entry, error) {
	var f coldFields
	if !fastFields(v, &f) {
		f = coldFields{}
		if err := json.Unmarshal(v, &f); err != nil {
			return entry{}, err
		}
	}
	if f.ID != id {
		return entry{}, fmt.Errorf("item logged as %q has id %q", id, f.ID)
	}
	var e entry
	var ok bool
	if e.id, ok = parseID(id); !ok {
		return entry{}, fmt.Errorf("item id %q is not a UUID", id)
	}
	key, ok := parseKey(f.Key)
	if !ok {
		return entry{}, fmt.Errorf("item %q: bad key", id)
	}
	if f.Key != "" {
		e.kf = keyPrint(key)<<8 | flagKey
	}
	e.setDate(f.Date.UnixNano())
	if f.DeletedAt == nil {
		e.kf |= flagLive
	} else {
		e.setDate(f.DeletedAt.UnixNano())
	}
	if !note {
		_, known := d.userIdx[f.UserID]
		if !known && len(d.users) == maxUsers {
			return entry{}, errors.New("more than 65,536 users with items")
		}
		if len(d.records) == maxRecords {
			if _, ok := d.recordIdx[recordKey{d.userIdx[f.UserID], f.RecordID}]; !known || !ok {
				return entry{}, errors.New("more than 16,777,216 records with items")
			}
		}
		return e, nil
	}
	u, err := d.userOf(f.UserID)
	if err != nil {
		return entry{}, err
	}
	r, err := d.recordOf(u, f.RecordID, f.Integ)
	if err != nil {
		return entry{}, err
	}
	e.rm = r
	if len(f.Meta) > 2 && f.Meta[0] == '"' {
		// The header is the first 5 bytes: 8 base64 characters hold 6.
		var head [6]byte
		h := []byte{0} // names no key: "unreadable" to CheckKeys
		if n, err := base64.StdEncoding.Decode(head[:], f.Meta[1:min(9, len(f.Meta)-1)]); err == nil && n >= metaHeadLen {
			h = head[:metaHeadLen]
		}
		e.rm |= uint32(d.headOf(h)) << 24
	}
	d.setRef(&e, ref)
	return e, nil
}

// keyOf reads the key of a logged item.
func keyOf(v []byte) ([16]byte, bool) {
	var f coldFields
	if !fastFields(v, &f) {
		f = coldFields{}
		if json.Unmarshal(v, &f) != nil {
			return [16]byte{}, false
		}
	}
	k, ok := parseKey(f.Key)
	return k, ok && f.Key != ""
}

func (d *dense) userOf(s string) (uint16, error) {
	if i, ok := d.userIdx[s]; ok {
		return i, nil
	}
	if len(d.users) == maxUsers {
		return 0, errors.New("more than 65,536 users with items")
	}
	i := uint16(len(d.users))
	d.users = append(d.users, s)
	d.userIdx[s] = i
	return i, nil
}

func (d *dense) recordOf(user uint16, id, integ string) (uint32, error) {
	if i, ok := d.recordIdx[recordKey{user, id}]; ok {
		return i, nil
	}
	if len(d.records) == maxRecords {
		return 0, errors.New("more than 16,777,216 records with items")
	}
	i := uint32(len(d.records))
	d.records = append(d.records, id)
	d.integ = append(d.integ, integ)
	d.recUser = append(d.recUser, user)
	d.recordIdx[recordKey{user, id}] = i
	return i, nil
}

// headOf returns the index of a sealed Meta's header, noting it if new.
// The headers are few: one per key the vault ever sealed with (255 at
// most; more share the last, which CheckKeys then reads whole).
func (d *dense) headOf(h []byte) uint8 {
	for i, o := range d.heads {
		if i > 0 && string(o) == string(h) {
			return uint8(i)
		}
	}
	if len(d.heads) == 256 {
		return 255
	}
	d.heads = append(d.heads, []byte(string(h)))
	return uint8(len(d.heads) - 1)
}

// slot returns the slot of the entry with id, not gone.
func (d *dense) slot(id string) (uint32, bool) {
	b, ok := parseID(id)
	if !ok {
		return 0, false
	}
	return d.findID(b)
}

// findID returns the slot of the entry with id, not gone.
func (d *dense) findID(id [16]byte) (uint32, bool) {
	return d.ids.find(idHash(id), d.idHashAt, func(s uint32) bool { return d.ents.at(s).id == id })
}

// findKey returns the slot of the live entry whose key is k, confirmed by
// its record read back with load. A record that does not read back
// (damage in the log) is taken to hold the key of its fingerprint: its
// key is not given to another item, nor is its mail stored again.
func (d *dense) findKey(k [16]byte, load func(slot uint32) ([]byte, error)) (uint32, bool) {
	return d.keys.find(uint64(keyPrint(k)), d.printAt, func(s uint32) bool {
		raw, err := load(s)
		if err != nil {
			return true
		}
		got, ok := keyOf(raw)
		return ok && got == k
	})
}

// idHash is an id's hash in d.ids: ids are random already.
func idHash(id [16]byte) uint64 {
	return binary.LittleEndian.Uint64(id[:8]) ^ binary.LittleEndian.Uint64(id[8:])
}

func (d *dense) idHashAt(s uint32) uint64 { return idHash(d.ents.at(s).id) }
func (d *dense) printAt(s uint32) uint64  { return uint64(d.ents.at(s).print()) }

// check is the ColdConfig.Check of the items table: what apply would
// refuse (an id that is not a UUID, a bad key) fails the commit instead.
func (d *dense) check(id string, v []byte) error {
	_, err := d.decode(id, v, storage.ColdRef{}, false)
	return err
}

// apply is the ColdConfig.Apply of the items table.
func (d *dense) apply(puts []storage.ColdPut, dels []string, replaying bool) error {
	var moved map[uint16]*pageChange
	change := func(u uint16) *pageChange {
		if moved == nil {
			moved = make(map[uint16]*pageChange)
		}
		c := moved[u]
		if c == nil {
			c = &pageChange{out: make(map[uint32]bool)}
			moved[u] = c
		}
		return c
	}
	for _, p := range puts {
		e, err := d.entryOf(p.ID, p.V, p.Ref)
		if err != nil {
			if replaying {
				return err
			}
			continue // checked when the op was made: cannot happen
		}
		s, had := d.findID(e.id)
		if !had {
			s = d.ents.add(e)
			d.n++
			d.ids.insert(idHash(e.id), s, d.idHashAt)
		} else if d.ready {
			old := d.ents.at(s)
			if old.live() && old.hasKey() {
				d.keys.remove(uint64(old.print()), s, d.printAt)
			}
			if old.live() {
				change(d.user(old)).out[s] = true
			}
		}
		*d.ents.at(s) = e
		if !d.ready {
			continue
		}
		if e.live() {
			if e.hasKey() {
				d.keys.insert(uint64(e.print()), s, d.printAt)
			}
			c := change(d.user(&e))
			c.in = append(c.in, s)
		}
	}
	for _, id := range dels {
		s, ok := d.slot(id)
		if !ok {
			continue
		}
		e := d.ents.at(s)
		if d.ready && e.live() {
			if e.hasKey() {
				d.keys.remove(uint64(e.print()), s, d.printAt)
			}
			change(d.user(e)).out[s] = true
		}
		d.ids.remove(idHash(e.id), s, d.idHashAt)
		e.kf |= flagGone
		d.n--
	}
	for u, c := range moved {
		d.pages[u] = d.mergePage(d.pages[u], c)
		if len(d.pages[u]) == 0 {
			delete(d.pages, u)
		}
	}
	return nil
}

// pageChange is what a batch does to one user's page order.
type pageChange struct {
	out map[uint32]bool // slots that leave it (or move in it)
	in  []uint32        // slots that enter it
}

// mergePage applies c to a user's page order in one pass: a batch of many
// items (a sync's, a disconnect's) costs the length of the order once.
func (d *dense) mergePage(order []uint32, c *pageChange) []uint32 {
	if len(c.out) > 0 {
		order = slices.DeleteFunc(order, func(s uint32) bool { return c.out[s] })
	}
	if len(c.in) == 0 {
		return order
	}
	less := func(a, b uint32) int {
		if newerEntry(d.ents.at(a), d.ents.at(b)) {
			return -1
		}
		return 1
	}
	slices.SortFunc(c.in, less)
	out := make([]uint32, 0, len(order)+len(c.in))
	i, j := 0, 0
	for i < len(order) && j < len(c.in) {
		if less(order[i], c.in[j]) < 0 {
			out = append(out, order[i])
			i++
		} else {
			out = append(out, c.in[j])
			j++
		}
	}
	out = append(out, order[i:]...)
	return append(out, c.in[j:]...)
}

// expired reports whether e is a tombstone older than TombstoneTTL.
func expired(e *entry, now time.Time) bool {
	return !e.live() && !e.gone() && now.UnixNano()-e.date() > int64(TombstoneTTL)
}

// open is the ColdConfig.Opened of the items table.
func (d *dense) open(now time.Time) {
	for i := range d.ents.n {
		if e := d.ents.at(uint32(i)); expired(e, now) {
			e.kf |= flagGone
			d.n--
		}
	}
	d.rebuild()
	d.ready = true
}

// rebuild drops the slots of gone entries, if any, and builds the hash
// tables and page orders anew.
func (d *dense) rebuild() {
	if d.n < d.ents.n { // slots of gone entries to drop
		var ents entries
		for i := range d.ents.n {
			if e := d.ents.at(uint32(i)); !e.gone() {
				ents.add(*e)
			}
		}
		d.ents = ents
	}
	ents := &d.ents
	d.ids.reset(ents.n)
	nkeys := 0
	byUser := make(map[uint16]int)
	for i := range ents.n {
		e := ents.at(uint32(i))
		d.ids.insert(idHash(e.id), uint32(i), d.idHashAt)
		if e.live() {
			byUser[d.user(e)]++
			if e.hasKey() {
				nkeys++
			}
		}
	}
	for id := range d.far {
		if _, ok := d.findID(id); !ok {
			delete(d.far, id)
		}
	}
	d.keys.reset(nkeys)
	pages := make(map[uint16][]uint32, len(byUser))
	for u, n := range byUser {
		pages[u] = make([]uint32, 0, n)
	}
	for i := range ents.n {
		e := ents.at(uint32(i))
		if !e.live() {
			continue
		}
		if e.hasKey() {
			d.keys.insert(uint64(e.print()), uint32(i), d.printAt)
		}
		u := d.user(e)
		pages[u] = append(pages[u], uint32(i))
	}
	for _, order := range pages {
		slices.SortFunc(order, func(a, b uint32) int {
			if newerEntry(ents.at(a), ents.at(b)) {
				return -1
			}
			return 1
		})
	}
	d.pages = pages
}

// keep is the ColdConfig.Keep of the items table.
func (d *dense) keep(now time.Time, fn func(id string, ref storage.ColdRef)) {
	for i := range d.ents.n {
		if e := d.ents.at(uint32(i)); !e.gone() && !expired(e, now) {
			fn(formatID(e.id), d.refOf(e))
		}
	}
}

// moved is the ColdConfig.Moved of the items table: every entry not named
// expired.
func (d *dense) moved(refs []storage.ColdPut) {
	kept := make([]bool, d.ents.n)
	for _, r := range refs {
		if s, ok := d.slot(r.ID); ok {
			d.setRef(d.ents.at(s), r.Ref)
			kept[s] = true
		}
	}
	for i := range d.ents.n {
		if e := d.ents.at(uint32(i)); !e.gone() && !kept[i] {
			e.kf |= flagGone
			d.n--
		}
	}
	d.rebuild()
}

func (d *dense) ref(id string) (storage.ColdRef, bool) {
	s, ok := d.slot(id)
	if !ok {
		return storage.ColdRef{}, false
	}
	return d.refOf(d.ents.at(s)), true
}

// owner is the ColdConfig.Owner of the items table.
func (d *dense) owner(key string, load func(string, storage.ColdRef) ([]byte, error)) string {
	k, ok := parseKey(key)
	if !ok || key == "" {
		return ""
	}
	s, ok := d.findKey(k, func(s uint32) ([]byte, error) {
		e := d.ents.at(s)
		return load(formatID(e.id), d.refOf(e))
	})
	if !ok {
		return ""
	}
	return formatID(d.ents.at(s).id)
}

func (d *dense) len() int { return d.n }

// hashSlot maps a hash (of an id, of a key's fingerprint) to the slots
// of dense.ents that have it: open addressing with linear probing, a cell
// holds slot+1 (0: empty), kept at most 7/8 full and sized to about 10/7
// of its entries when it grows. A cell is 3 bytes while every slot fits
// (16,777,215 entries), so the table costs about 4.3 bytes an entry, 4
// bytes once one does not. It keeps no hash: its callers give each slot's
// (hashAt), and say which of the slots with the hash asked for is the one
// (match).
type hashSlot struct {
	narrow []byte   // 3 bytes a cell, little-endian
	wide   []uint32 // instead of narrow, once a slot needs more
	size   int      // cells
	n      int
}

// narrowMax is the largest cell a narrow table holds.
const narrowMax = 1<<24 - 1

func (h *hashSlot) cell(i int) uint32 {
	if h.wide != nil {
		return h.wide[i]
	}
	b := h.narrow[3*i : 3*i+3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
}

func (h *hashSlot) setCell(i int, c uint32) {
	if h.wide == nil && c > narrowMax {
		wide := make([]uint32, h.size)
		for j := range h.size {
			wide[j] = h.cell(j)
		}
		h.wide, h.narrow = wide, nil
	}
	if h.wide != nil {
		h.wide[i] = c
		return
	}
	h.narrow[3*i], h.narrow[3*i+1], h.narrow[3*i+2] = byte(c), byte(c>>8), byte(c>>16)
}

func (h *hashSlot) home(x uint64) int {
	hi, _ := bits.Mul64(x*0x9E3779B97F4A7C15, uint64(h.size))
	return int(hi)
}

// reset empties h, sized for n entries.
func (h *hashSlot) reset(n int) {
	h.size = max(16, n*10/7+1)
	h.narrow, h.wide = make([]byte, 3*h.size), nil
	h.n = 0
}

// find returns the first slot with hash x for which match reports true.
func (h *hashSlot) find(x uint64, hashAt func(uint32) uint64, match func(uint32) bool) (uint32, bool) {
	if h.size == 0 {
		return 0, false
	}
	for i := h.home(x); ; i++ {
		if i == h.size {
			i = 0
		}
		c := h.cell(i)
		if c == 0 {
			return 0, false
		}
		if hashAt(c-1) == x && match(c-1) {
			return c - 1, true
		}
	}
}

// insert adds slot s, whose hash is x; s must not be in h.
func (h *hashSlot) insert(x uint64, s uint32, hashAt func(uint32) uint64) {
	if (h.n+1)*8 > h.size*7 {
		old := *h
		h.reset(h.n + 1)
		if old.wide != nil {
			h.wide, h.narrow = make([]uint32, h.size), nil
		}
		for i := range old.size {
			if c := old.cell(i); c != 0 {
				h.put(hashAt(c-1), c)
			}
		}
	}
	h.put(x, s+1)
}

func (h *hashSlot) put(x uint64, c uint32) {
	i := h.home(x)
	for h.cell(i) != 0 {
		if i++; i == h.size {
			i = 0
		}
	}
	h.setCell(i, c)
	h.n++
}

// remove takes out slot s, whose hash is x, moving back the cells after
// it that it displaced.
func (h *hashSlot) remove(x uint64, s uint32, hashAt func(uint32) uint64) {
	if h.size == 0 {
		return
	}
	i := h.home(x)
	for {
		c := h.cell(i)
		if c == 0 {
			return
		}
		if c == s+1 {
			break
		}
		if i++; i == h.size {
			i = 0
		}
	}
	h.setCell(i, 0)
	h.n--
	for j := i; ; {
		if j++; j == h.size {
			j = 0
		}
		c := h.cell(j)
		if c == 0 {
			return
		}
		home := h.home(hashAt(c - 1))
		// c may move to i if its home is not in (i, j] cyclically.
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			h.setCell(i, c)
			h.setCell(j, 0)
			i = j
		}
	}
}
