package search

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// columns are the per-document values of a segment or buffer, indexed by
// document number: what filters, sorting and BM25 need without reading
// postings. Kind, integration and record are indexes into small tables.
type columns struct {
	ids     []string
	dates   []int64 // Unix milliseconds
	kind    []uint32
	integ   []uint32
	record  []uint32
	lens    [][numFields]uint32 // tokens per field
	kinds   []string
	integs  []string
	records []string
	byID    []uint32 // document numbers sorted by id (segments only)
}

func (c *columns) len() int { return len(c.ids) }

// find returns the document with this id that dead does not reject, in a
// segment's columns. A segment written from a buffer keeps the replaced
// versions of a document, deleted, beside the live one.
func (c *columns) find(id string, dead func(uint32) bool) (uint32, bool) {
	i, _ := slices.BinarySearchFunc(c.byID, id, func(d uint32, id string) int {
		return strings.Compare(c.ids[d], id)
	})
	for ; i < len(c.byID) && c.ids[c.byID[i]] == id; i++ {
		if !dead(c.byID[i]) {
			return c.byID[i], true
		}
	}
	return 0, false
}

func (c *columns) sortByID() {
	c.byID = make([]uint32, len(c.ids))
	for i := range c.byID {
		c.byID[i] = uint32(i)
	}
	slices.SortFunc(c.byID, func(a, b uint32) int { return strings.Compare(c.ids[a], c.ids[b]) })
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
	for i := range c.ids {
		b = appendID(b, c.ids[i])
		b = binary.AppendVarint(b, c.dates[i])
		b = binary.AppendUvarint(b, uint64(c.kind[i]))
		b = binary.AppendUvarint(b, uint64(c.integ[i]))
		b = binary.AppendUvarint(b, uint64(c.record[i]))
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

func readID(r *reader, out *strings.Builder) {
	n := r.uvarint()
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
	c.ids = make([]string, 0, n)
	var ids strings.Builder       // one allocation for every id
	ids.Grow(min(n*36, 4*len(b))) // UUIDs mostly; a hostile count is bounded by the bytes
	c.dates = make([]int64, 0, n)
	c.kind = make([]uint32, 0, n)
	c.integ = make([]uint32, 0, n)
	c.record = make([]uint32, 0, n)
	c.lens = make([][numFields]uint32, 0, n)
	idEnd := make([]int, 0, n)
	for range n {
		readID(r, &ids)
		idEnd = append(idEnd, ids.Len())
		c.dates = append(c.dates, r.varint())
		k, in, rec := r.uvarint(), r.uvarint(), r.uvarint()
		if r.err == nil && (k >= uint64(len(c.kinds)) || in >= uint64(len(c.integs)) || rec >= uint64(len(c.records))) {
			r.err = fmt.Errorf("%w: column value out of range", ErrCorrupt)
		}
		c.kind = append(c.kind, uint32(k))
		c.integ = append(c.integ, uint32(in))
		c.record = append(c.record, uint32(rec))
		var l [numFields]uint32
		for f := range l {
			l[f] = uint32(min(r.uvarint(), 1<<31))
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
	all, start := ids.String(), 0
	for _, end := range idEnd {
		c.ids = append(c.ids, all[start:end])
		start = end
	}
	c.sortByID()
	return c, nil
}
