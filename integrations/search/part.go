package search

import (
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"
)

// part is one searchable piece of a user's index: a segment on disk or a
// buffer in memory, with the documents deleted from it since.
type part struct {
	seg  *segment
	buf  *buffer
	del  []uint64 // bitmap of deleted document numbers
	ndel int
	bad  atomic.Bool // a block did not open: skipped, then dropped
	// langsSeen caches a segment's languages (lang_query.go); 0 until
	// looked up.
	langsSeen atomic.Uint32
}

func (p *part) cols() *columns {
	if p.seg != nil {
		return &p.seg.cols
	}
	return &p.buf.cols
}

func (p *part) docs() int { return p.cols().len() }

func (p *part) live() int { return p.docs() - p.ndel }

func (p *part) lenSums() [numFields]uint64 {
	if p.seg != nil {
		return p.seg.lenSums
	}
	return p.buf.lenSums
}

func (p *part) withField() [numFields]uint64 {
	if p.seg != nil {
		return p.seg.withF
	}
	return p.buf.withF
}

func (p *part) deleted(d uint32) bool {
	w := int(d >> 6)
	return w < len(p.del) && p.del[w]&(1<<(d&63)) != 0
}

// remove marks document d deleted; false if it already was.
func (p *part) remove(d uint32) bool {
	if p.deleted(d) {
		return false
	}
	w := int(d >> 6)
	for len(p.del) <= w {
		p.del = append(p.del, 0)
	}
	p.del[w] |= 1 << (d & 63)
	p.ndel++
	return true
}

// find returns the live document with this id.
func (p *part) find(id string) (uint32, bool) {
	var d uint32
	var ok bool
	if p.buf != nil {
		d, ok = p.buf.ids[id]
	} else {
		d, ok = p.seg.cols.find(id, p.deleted)
	}
	return d, ok && !p.deleted(d)
}

// deletedList lists the deleted document numbers, in order.
func (p *part) deletedList() []uint32 {
	out := make([]uint32, 0, p.ndel)
	for w, bitsW := range p.del {
		for bitsW != 0 {
			b := bits.TrailingZeros64(bitsW)
			out = append(out, uint32(w*64+b))
			bitsW &^= 1 << b
		}
	}
	return out
}

func (p *part) cloneDel() []uint64 { return append([]uint64(nil), p.del...) }

// termRef locates one term's postings in a part.
type termRef struct {
	term string
	df   uint32
	e    dictEntry
	bt   *bufTerm
}

func (p *part) lookup(term string) (termRef, bool, error) {
	if p.buf != nil {
		bt := p.buf.terms[term]
		if bt == nil {
			return termRef{}, false, nil
		}
		return termRef{term: term, df: bt.df, bt: bt}, true, nil
	}
	e, ok, err := p.seg.lookup(term)
	return termRef{term: term, df: e.df, e: e}, ok, err
}

// prefix calls fn for the first max terms starting with pre, in
// dictionary order.
func (p *part) prefix(pre string, max int, fn func(termRef)) error {
	if max <= 0 {
		return nil
	}
	if p.buf != nil {
		var terms []string
		for t := range p.buf.terms {
			if strings.HasPrefix(t, pre) {
				terms = append(terms, t)
			}
		}
		slices.Sort(terms)
		for _, t := range terms[:min(max, len(terms))] {
			bt := p.buf.terms[t]
			fn(termRef{term: t, df: bt.df, bt: bt})
		}
		return nil
	}
	n := 0
	return p.seg.prefix(pre, func(e dictEntry) bool {
		fn(termRef{term: e.term, df: e.df, e: e})
		n++
		return n < max
	})
}

// postings returns a term's doc stream and position stream: through the
// cache, opening blocks in bs, or without one, in bufs copied when a
// stream spans blocks.
func (p *part) postings(r termRef, docBuf, posBuf *[]byte, bs *blockScratch, withPos bool) (docs, pos []byte, err error) {
	if r.bt != nil {
		return r.bt.docs, r.bt.pos, nil
	}
	get := func(off, n uint64, buf *[]byte) ([]byte, error) {
		if p.seg.cache != nil {
			return p.seg.cachedPostings(off, n, bs)
		}
		return p.seg.postings(off, n, buf, nil)
	}
	docs, err = get(r.e.off+r.e.posLen, r.e.docLen, docBuf)
	if err != nil || !withPos {
		return docs, nil, err
	}
	pos, err = get(r.e.off, r.e.posLen, posBuf)
	return docs, pos, err
}
