package search

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// columns are the per-document values of a segment or buffer, indexed by
// document number: what filters, sorting and BM25 need without reading
// postings. A document's kind, integration and record are one code, an
// index into the small table of the triples its columns hold (a record's
// documents are of one integration and of a kind or two), each an index
// into its own table of names.
//
// A segment whose ids are all UUIDs in their canonical form, as the
// service's are, keeps them in uuids, 16 bytes each, instead of ids: as
// strings they take 52 bytes each, more than every other column of the
// document together, and they are what a large open index holds most of.
type columns struct {
	ids     []string
	uuids   []byte
	dates   dateColumn // Unix milliseconds
	tag     codes      // index into tags
	tags    []tag
	tagIdx  map[tag]uint32 // tags' indexes, once there are manyTags
	lens    []fieldLens    // tokens per field
	kinds   []string
	integs  []string
	records []string
	byID    docOrder // document numbers sorted by id (segments only)
}

// tag is a document's kind, integration and record, as indexes into
// columns.kinds, integs and records.
type tag struct{ kind, integ, record uint32 }

// addTag appends a document's kind, integration and record, as indexes
// into their tables.
func (c *columns) addTag(t tag) {
	i := len(c.tags) - 1 // a batch's documents are mostly of one record
	if i < 0 || c.tags[i] != t {
		i = c.findTag(t)
	}
	c.tag.add(uint32(i))
}

// manyTags is the size of columns.tags from which addTag finds a tag in a
// map rather than by a scan.
const manyTags = 32

// findTag returns the index of t in c.tags, added if new.
func (c *columns) findTag(t tag) int {
	if c.tagIdx != nil {
		if i, ok := c.tagIdx[t]; ok {
			return int(i)
		}
	} else if i := slices.Index(c.tags, t); i >= 0 {
		return i
	}
	c.tags = append(c.tags, t)
	if len(c.tags) == manyTags {
		c.tagIdx = make(map[tag]uint32, 2*manyTags)
		for j, o := range c.tags {
			c.tagIdx[o] = uint32(j)
		}
	} else if c.tagIdx != nil {
		c.tagIdx[t] = uint32(len(c.tags) - 1)
	}
	return len(c.tags) - 1
}

// addNames appends a document's kind, integration and record by name.
func (c *columns) addNames(kind, integ, record string) {
	c.addTag(tag{tableIndex(&c.kinds, kind), tableIndex(&c.integs, integ), tableIndex(&c.records, record)})
}

// tagAt is document d's kind, integration and record.
func (c *columns) tagAt(d uint32) tag { return c.tags[c.tag.at(d)] }

func (c *columns) kindAt(d uint32) string  { return c.kinds[c.tagAt(d).kind] }
func (c *columns) integAt(d uint32) string { return c.integs[c.tagAt(d).integ] }

// recordAt is the index in records of document d's record.
func (c *columns) recordAt(d uint32) uint32 { return c.tagAt(d).record }

// dateColumn is a column of dates in Unix milliseconds: 6 bytes each, a
// signed distance from the first (±4,459 years), while every one is that
// close, else 8.
type dateColumn struct {
	base   int64
	narrow []byte
	wide   []int64 // nil while narrow holds the column
}

// dateSpan bounds a distance from the base that narrow holds.
const dateSpan = 1<<47 - 1

func (c *dateColumn) len() int {
	if c.wide != nil {
		return len(c.wide)
	}
	return len(c.narrow) / 6
}

func (c *dateColumn) at(d uint32) int64 {
	if c.wide != nil {
		return c.wide[d]
	}
	b := c.narrow[6*int(d) : 6*int(d)+6]
	v := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32 | uint64(b[5])<<40
	return c.base + int64(v<<16)>>16 // sign-extended from 48 bits
}

// add appends v, widening the column the first time v is too far from
// the first date.
func (c *dateColumn) add(v int64) {
	if c.wide == nil && len(c.narrow) == 0 {
		c.base = v
	}
	off := v - c.base
	if c.wide == nil && (off > dateSpan || off < -dateSpan || (v < c.base) != (off < 0)) {
		wide := make([]int64, c.len(), max(cap(c.narrow)/6, c.len()+1))
		for d := range wide {
			wide[d] = c.at(uint32(d))
		}
		c.wide, c.narrow = wide, nil
	}
	if c.wide != nil {
		c.wide = append(c.wide, v)
		return
	}
	c.narrow = append(c.narrow, byte(off), byte(off>>8), byte(off>>16), byte(off>>24), byte(off>>32), byte(off>>40))
}

// docOrder is a list of document numbers: 3 bytes each while every one
// fits (16,777,216 documents, far more than a segment holds), else 4.
type docOrder struct {
	narrow []byte
	wide   []uint32
}

func newDocOrder(ds []uint32) docOrder {
	if len(ds) > 1<<24 {
		return docOrder{wide: ds}
	}
	b := make([]byte, 3*len(ds))
	for i, d := range ds {
		b[3*i], b[3*i+1], b[3*i+2] = byte(d), byte(d>>8), byte(d>>16)
	}
	return docOrder{narrow: b}
}

func (o *docOrder) len() int {
	if o.wide != nil {
		return len(o.wide)
	}
	return len(o.narrow) / 3
}

func (o *docOrder) at(i int) uint32 {
	if o.wide != nil {
		return o.wide[i]
	}
	b := o.narrow[3*i : 3*i+3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
}

// codes is a column of indexes into a small table (kinds,
// integrations, records): a byte each while every index is below 256, as
// a user's are, 4 bytes each once one is not.
type codes struct {
	small []uint8
	wide  []uint32 // nil while small holds the column
}

func (c *codes) at(d uint32) uint32 {
	if c.wide != nil {
		return c.wide[d]
	}
	return uint32(c.small[d])
}

func (c *codes) len() int {
	if c.wide != nil {
		return len(c.wide)
	}
	return len(c.small)
}

// add appends v, widening the column the first time v is over a byte.
func (c *codes) add(v uint32) {
	if c.wide == nil && v > 255 {
		c.wide = make([]uint32, len(c.small), max(cap(c.small), len(c.small)+1))
		for i, s := range c.small {
			c.wide[i] = uint32(s)
		}
		c.small = nil
	}
	if c.wide != nil {
		c.wide = append(c.wide, v)
		return
	}
	c.small = append(c.small, uint8(v))
}

// fieldLens are a document's tokens per field, up to maxFieldLen: more
// changes a score by less than its quantum's worth of rank (BM25 has all
// but ignored a term in a field that long), and two bytes a field instead
// of four keep a large index's columns smaller in memory.
type fieldLens [numFields]uint16

// maxFieldLen is the largest length fieldLens holds.
const maxFieldLen = 1<<16 - 1

// clampLens turns an analyzed document's lengths into fieldLens.
func clampLens(l [numFields]uint32) fieldLens {
	var out fieldLens
	for f, n := range l {
		out[f] = uint16(min(n, maxFieldLen))
	}
	return out
}

func (c *columns) len() int {
	if c.uuids != nil {
		return len(c.uuids) / 16
	}
	return len(c.ids)
}

// id returns document d's id, made anew when it is kept in uuids.
func (c *columns) id(d uint32) string {
	if c.uuids != nil {
		return formatUUID(c.uuidAt(d))
	}
	return c.ids[d]
}

func (c *columns) uuidAt(d uint32) []byte { return c.uuids[16*int(d) : 16*int(d)+16] }

// appendDocID appends document d's id to b; a UUID kept in uuids is
// written out without allocating when b has room for its 36 bytes.
func (c *columns) appendDocID(b []byte, d uint32) []byte {
	if c.uuids != nil {
		var t [36]byte
		putUUID(&t, c.uuidAt(d))
		return append(b, t[:]...)
	}
	return append(b, c.ids[d]...)
}

// copyID appends document d of src's id to c's ids: as bytes while
// every id so far came from segments that keep them so, as a merge of
// such segments does, else as strings.
func (c *columns) copyID(src *columns, d uint32) {
	if src.uuids != nil && c.ids == nil {
		c.uuids = append(c.uuids, src.uuidAt(d)...)
		return
	}
	if c.uuids != nil {
		for e := range uint32(c.len()) {
			c.ids = append(c.ids, c.id(e))
		}
		c.uuids = nil
	}
	c.ids = append(c.ids, src.id(d))
}

// find returns the document with this id that dead does not reject, in a
// segment's columns. A segment written from a buffer keeps the replaced
// versions of a document, deleted, beside the live one. The canonical
// form of a UUID sorts as its bytes do, so byID is in the order of the
// ids either way.
func (c *columns) find(id string, dead func(uint32) bool) (uint32, bool) {
	cmpAt := func(d uint32, id string) int { return strings.Compare(c.ids[d], id) }
	if c.uuids != nil {
		u, ok := parseUUID(id)
		if !ok {
			return 0, false
		}
		cmpAt = func(d uint32, _ string) int { return bytes.Compare(c.uuidAt(d), u[:]) }
	}
	i := sort.Search(c.byID.len(), func(i int) bool { return cmpAt(c.byID.at(i), id) >= 0 })
	for ; i < c.byID.len() && cmpAt(c.byID.at(i), id) == 0; i++ {
		if d := c.byID.at(i); !dead(d) {
			return d, true
		}
	}
	return 0, false
}

func (c *columns) sortByID() {
	byID := make([]uint32, c.len())
	for i := range byID {
		byID[i] = uint32(i)
	}
	if c.uuids != nil {
		slices.SortFunc(byID, func(a, b uint32) int { return bytes.Compare(c.uuidAt(a), c.uuidAt(b)) })
	} else {
		slices.SortFunc(byID, func(a, b uint32) int { return strings.Compare(c.ids[a], c.ids[b]) })
	}
	c.byID = newDocOrder(byID)
}

func tableIndex(table *[]string, v string) uint32 {
	if i := slices.Index(*table, v); i >= 0 {
		return uint32(i)
	}
	*table = append(*table, v)
	return uint32(len(*table) - 1)
}

func encodeColumns(c *columns) []byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(c.len()))
	for _, t := range [][]string{c.kinds, c.integs, c.records} {
		b = binary.AppendUvarint(b, uint64(len(t)))
		for _, s := range t {
			b = appendString(b, s)
		}
	}
	for i := range c.len() {
		if c.uuids != nil {
			b = append(b, 0)
			b = append(b, c.uuidAt(uint32(i))...)
		} else {
			b = appendID(b, c.ids[i])
		}
		b = binary.AppendVarint(b, c.dates.at(uint32(i)))
		t := c.tagAt(uint32(i))
		b = binary.AppendUvarint(b, uint64(t.kind))
		b = binary.AppendUvarint(b, uint64(t.integ))
		b = binary.AppendUvarint(b, uint64(t.record))
		for _, n := range c.lens[i] {
			b = binary.AppendUvarint(b, uint64(n))
		}
	}
	return b
}

// appendID appends an id: a UUID in its canonical lower-case form as a
// zero byte and its 16 bytes, any other id as uvarint(length+1) and bytes.
func appendID(b []byte, id string) []byte {
	if u, ok := parseUUID(id); ok {
		b = append(b, 0)
		return append(b, u[:]...)
	}
	b = binary.AppendUvarint(b, uint64(len(id))+1)
	return append(b, id...)
}

// readID reads the rest of an id whose first uvarint was n.
func readID(r *reader, n uint64, out *strings.Builder) {
	if n == 0 {
		u := r.bytes(16)
		if r.err == nil && len(u) == 16 {
			var b [36]byte
			putUUID(&b, u)
			out.Write(b[:])
		}
		return
	}
	if n-1 > maxTerm {
		r.err = fmt.Errorf("%w: id too long", ErrCorrupt)
		return
	}
	out.Write(r.bytes(n - 1))
}

func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) != 36 {
		return u, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return u, false
			}
			i++
			continue
		}
		hi, ok1 := hexVal(s[i])
		lo, ok2 := hexVal(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func formatUUID(u []byte) string {
	var b [36]byte
	putUUID(&b, u)
	return string(b[:])
}

// putUUID writes the UUID u in its text form into b.
func putUUID(b *[36]byte, u []byte) {
	const hex = "0123456789abcdef"
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hex[c>>4], hex[c&15]
		j += 2
	}
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func decodeColumns(b []byte) (columns, error) {
	r := &reader{b: b}
	var c columns
	n := r.count(9)
	tables := []*[]string{&c.kinds, &c.integs, &c.records}
	for _, t := range tables {
		m := r.count(1)
		for range m {
			*t = append(*t, r.string(maxTerm))
		}
	}
	// The ids go to uuids until one is not a UUID; then every id so far
	// is written out as text, and all are kept as strings of one
	// allocation.
	uuids := make([]byte, 0, min(n*16, len(b)))
	var ids strings.Builder
	var idEnd []int
	c.dates.narrow = make([]byte, 0, 6*n)
	c.tag.small = make([]uint8, 0, n)
	c.lens = make([]fieldLens, 0, n)
	for range n {
		switch k := r.uvarint(); {
		case k == 0 && uuids != nil:
			uuids = append(uuids, r.bytes(16)...)
		default:
			if uuids != nil {
				ids.Grow(min(n*36, 4*len(b))) // a hostile count is bounded by the bytes
				idEnd = make([]int, 0, n)
				for j := 0; j+16 <= len(uuids); j += 16 {
					var t [36]byte
					putUUID(&t, uuids[j:j+16])
					ids.Write(t[:])
					idEnd = append(idEnd, ids.Len())
				}
				uuids = nil
			}
			readID(r, k, &ids)
			idEnd = append(idEnd, ids.Len())
		}
		c.dates.add(r.varint())
		k, in, rec := r.uvarint(), r.uvarint(), r.uvarint()
		if r.err == nil && (k >= uint64(len(c.kinds)) || in >= uint64(len(c.integs)) || rec >= uint64(len(c.records))) {
			r.err = fmt.Errorf("%w: column value out of range", ErrCorrupt)
		}
		c.addTag(tag{uint32(k), uint32(in), uint32(rec)})
		var l fieldLens
		for f := range l {
			l[f] = uint16(min(r.uvarint(), maxFieldLen))
		}
		c.lens = append(c.lens, l)
		if r.err != nil {
			return columns{}, r.err
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: trailing bytes in columns", ErrCorrupt)
	}
	if r.err != nil {
		return columns{}, r.err
	}
	if uuids != nil {
		c.uuids = uuids
	} else {
		c.ids = make([]string, 0, n)
		all, start := ids.String(), 0
		for _, end := range idEnd {
			c.ids = append(c.ids, all[start:end])
			start = end
		}
	}
	c.sortByID()
	return c, nil
}
