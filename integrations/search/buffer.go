package search

import (
	"slices"
	"strings"
	"sync"
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
	return new(docScratch).analyze(d)
}

// docScratch is the memory analysing a document works in: its analyzed
// result, the maps from terms and words to their place in it, and its
// positions. Index.Add analyses one document after another in one
// (docScratches), since a document's terms, grown entry by entry in
// fresh arrays for every mail, were most of what a first sync allocated,
// and so of the collector's work (BenchmarkDovecotFirstSync).
//
// A term's positions are gathered in one array for the whole document,
// each term's of a field a part of it, rather than in a slice per term
// and field grown token by token: growing those slices was most of what
// analysing a mail cost beside the analyzer itself.
type docScratch struct {
	a     analyzed
	at    map[string]int // term to its index in a.terms
	words map[string]int // unstemmed word to its index in a.terms
	occs  []termPos
	all   []uint32            // the positions, placed (placePositions)
	next  [][numFields]uint32 // where each term's next position goes
}

// maxScratchTerms bounds the terms a docScratch keeps room for between
// documents: a rare huge document's maps and arrays are let go rather
// than held for the small ones after it.
const maxScratchTerms = 1 << 14

// analyze analyses d in s, new or reset; the result is s's, valid until
// s is reset.
func (s *docScratch) analyze(d Doc) *analyzed {
	if s.at == nil {
		*s = docScratch{at: make(map[string]int, 64), words: make(map[string]int, 16), occs: make([]termPos, 0, 64)}
	}
	s.a = analyzed{doc: d, terms: s.a.terms[:0]}
	a, at, words, occs := &s.a, s.at, s.words, s.occs[:0]
	emit := func(f Field, p uint32, t Token) {
		a.lens[f]++
		i, ok := at[t.Term]
		if !ok {
			i = len(a.terms)
			at[t.Term] = i
			a.terms = append(a.terms, docTerm{term: t.Term})
		}
		a.terms[i].tf[f]++
		occs = append(occs, termPos{term: uint32(i), pos: p, field: f})
		if t.Word != t.Term && t.Word != "" {
			j, ok := words[t.Word]
			if !ok {
				j = len(a.terms)
				words[t.Word] = j
				a.terms = append(a.terms, docTerm{term: wordMark + t.Word})
			}
			a.terms[j].tf[f]++
		}
	}
	field := func(f Field) func(Token) {
		return func(t Token) { emit(f, uint32(t.Pos), t) }
	}
	lang := detectDoc(&d)
	analyzeLang(d.Title, lang, field(FieldTitle))
	analyzeLang(d.From, lang, field(FieldFrom))
	next := uint32(0)
	for _, to := range d.To {
		base := next
		analyzeLang(to, lang, func(t Token) {
			p := base + uint32(t.Pos)
			emit(FieldTo, p, t)
			next = p + 2
		})
	}
	analyzeLang(d.Text, lang, field(FieldText))
	if lang != LangEnglish {
		// The language's marker (lang.go): a word, without positions.
		var tf [numFields]uint32
		tf[FieldText] = 1
		a.terms = append(a.terms, docTerm{term: langMarker(lang), tf: tf})
	}
	s.occs = occs
	s.placePositions() // before the marks, which have no positions
	// Links, the words of names and the attachment mark are terms of the
	// title without a position or a length: no typed word reaches them
	// (postings.go's marks) and they weigh nothing in the title's
	// ranking.
	mark := func(t string) {
		if _, ok := at[t]; !ok {
			at[t] = len(a.terms)
			a.terms = append(a.terms, docTerm{term: t, tf: [numFields]uint32{FieldTitle: 1}})
		}
	}
	for _, r := range d.Refs {
		mark(RefTerm(r))
	}
	for _, n := range d.Names {
		nameTerms(n, func(t string) { mark(nameMark + t) })
	}
	if d.Attached {
		mark(attachedTerm)
	}
	for _, f := range d.Folders {
		mark(folderMark + f)
	}
	return a
}

// reset readies s for the next document. It lets go of the last one,
// whose text its terms and maps may point into, and of the room a huge
// one took (over maxScratchTerms terms).
func (s *docScratch) reset() {
	if len(s.a.terms) > maxScratchTerms {
		*s = docScratch{}
		return
	}
	clear(s.at)
	clear(s.words)
	clear(s.a.terms)
	s.a = analyzed{terms: s.a.terms[:0]}
}

// docScratches keeps docScratch for Index.Add between documents.
var docScratches = sync.Pool{New: func() any { return new(docScratch) }}

// nameTerms gives the terms of a file name that filename: matches: the
// analyzed words of the name, and its extension as a word ("pdf").
func nameTerms(name string, emit func(string)) {
	Analyze(name, func(t Token) { emit(t.Term) })
	if i := strings.LastIndexByte(name, '.'); i >= 0 && i < len(name)-1 && len(name)-i <= 9 {
		Analyze(name[i+1:], func(t Token) { emit(t.Term) })
	}
}

// termPos is one position of a term of an analyzed document: the term's
// index in its terms, the position and the field.
type termPos struct {
	term, pos uint32
	field     Field
}

// placePositions gives each term of s.a its positions in each field from
// s.occs (in the order emitted), as parts of one array. A term's tf of a
// field counts its positions there, but for unstemmed words, which keep
// none.
func (s *docScratch) placePositions() {
	a := &s.a
	if cap(s.all) < len(s.occs) {
		s.all = make([]uint32, len(s.occs))
	}
	all := s.all[:len(s.occs)]
	if cap(s.next) < len(a.terms) {
		s.next = make([][numFields]uint32, len(a.terms))
	}
	next := s.next[:len(a.terms)]
	at := uint32(0)
	for i := range a.terms {
		t := &a.terms[i]
		if strings.HasPrefix(t.term, wordMark) {
			continue
		}
		for f := range numFields {
			next[i][f] = at
			if c := t.tf[f]; c > 0 {
				t.pos[f] = all[at : at+c : at+c]
				at += c
			}
		}
	}
	for _, o := range s.occs {
		all[next[o.term][o.field]] = o.pos
		next[o.term][o.field]++
	}
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
	b.cols.dates.add(d.Date.UnixMilli())
	b.cols.addNames(d.Kind, d.Integration, d.RecordID)
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
