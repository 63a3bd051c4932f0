package search

import (
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

// docTerm is one term or word of an analyzed document.
type docTerm struct {
	term string
	tf   [numFields]uint32
	pos  [numFields][]uint32 // nil for words
}

// analyzed is a document turned into terms, ready for a buffer.
type analyzed struct {
	doc   Doc
	terms []docTerm
	lens  [numFields]uint32
}

// analyzeDoc runs the analyzer over the fields of d. Recipients are one
// field, with a gap of positions between them so no phrase spans two.
func analyzeDoc(d Doc) *analyzed {
	a := &analyzed{doc: d}
	at := map[string]int{}
	emit := func(f Field, p uint32, t Token) {
		a.lens[f]++
		i, ok := at[t.Term]
		if !ok {
			i = len(a.terms)
			at[t.Term] = i
			a.terms = append(a.terms, docTerm{term: t.Term})
		}
		dt := &a.terms[i]
		dt.tf[f]++
		dt.pos[f] = append(dt.pos[f], p)
		if t.Word != t.Term && t.Word != "" {
			w := wordMark + t.Word
			j, ok := at[w]
			if !ok {
				j = len(a.terms)
				at[w] = j
				a.terms = append(a.terms, docTerm{term: w})
			}
			a.terms[j].tf[f]++
		}
	}
	field := func(f Field) func(Token) {
		return func(t Token) { emit(f, uint32(t.Pos), t) }
	}
	Analyze(d.Title, field(FieldTitle))
	Analyze(d.From, field(FieldFrom))
	next := uint32(0)
	for _, to := range d.To {
		base := next
		Analyze(to, func(t Token) {
			p := base + uint32(t.Pos)
			emit(FieldTo, p, t)
			next = p + 2
		})
	}
	Analyze(d.Text, field(FieldText))
	return a
}

// bufTerm is one term's postings in a buffer.
type bufTerm struct {
	docs, pos []byte
	df        uint32
	last      uint32
}

// buffer holds documents added since the last flush: postings in the
// segment encoding, so queries read it as they read a segment.
type buffer struct {
	terms   map[string]*bufTerm
	cols    columns
	ids     map[string]uint32 // id to its latest document number
	lenSums [numFields]uint64
	withF   [numFields]uint64 // documents with a non-empty field
	bytes   int               // estimate of the memory held
}

func newBuffer() *buffer {
	return &buffer{terms: map[string]*bufTerm{}, ids: map[string]uint32{}}
}

func (b *buffer) add(a *analyzed) uint32 {
	doc := uint32(b.cols.len())
	d := a.doc
	b.cols.ids = append(b.cols.ids, d.ID)
	b.cols.dates = append(b.cols.dates, d.Date.UnixMilli())
	b.cols.kind = append(b.cols.kind, tableIndex(&b.cols.kinds, d.Kind))
	b.cols.integ = append(b.cols.integ, tableIndex(&b.cols.integs, d.Integration))
	b.cols.record = append(b.cols.record, tableIndex(&b.cols.records, d.RecordID))
	b.cols.lens = append(b.cols.lens, a.lens)
	b.ids[d.ID] = doc
	for f, n := range a.lens {
		b.lenSums[f] += uint64(n)
		if n > 0 {
			b.withF[f]++
		}
	}
	b.bytes += 160 + len(d.ID)
	for i := range a.terms {
		t := &a.terms[i]
		bt := b.terms[t.term]
		if bt == nil {
			bt = &bufTerm{}
			b.terms[t.term] = bt
			b.bytes += 120 + len(t.term)
		}
		before := cap(bt.docs) + cap(bt.pos)
		delta := doc - bt.last
		if bt.df == 0 {
			delta = doc
		}
		bt.docs = appendEntry(bt.docs, delta, &t.tf)
		for f := range numFields {
			bt.pos = appendPositions(bt.pos, t.pos[f])
		}
		bt.df++
		bt.last = doc
		b.bytes += cap(bt.docs) + cap(bt.pos) - before
	}
	return doc
}

// sortedTerms returns the buffer's terms in dictionary order.
func (b *buffer) sortedTerms() []string {
	terms := make([]string, 0, len(b.terms))
	for t := range b.terms {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	return terms
}
