package search

import (
	"slices"
	"strings"
)

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
	stored  [][]byte          // each document's stored record (stored.go)
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
	b.cols.kind.add(tableIndex(&b.cols.kinds, d.Kind))
	b.cols.integ.add(tableIndex(&b.cols.integs, d.Integration))
	b.cols.record.add(tableIndex(&b.cols.records, d.RecordID))
	b.cols.lens = append(b.cols.lens, clampLens(a.lens))
	b.ids[d.ID] = doc
	rec := appendStored(nil, &d)
	b.stored = append(b.stored, rec)
	b.bytes += 24 + cap(rec)
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
			// A term is often a piece of the document's text: a copy,
			// so the buffer holds the term and not the whole text.
			b.terms[strings.Clone(t.term)] = bt
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
