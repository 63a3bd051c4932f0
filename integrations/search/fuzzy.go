package search

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// Misspellings: `word~` in a query matches the terms within a few edits
// of the word, and Suggest offers a "did you mean" for a query word the
// index does not hold (docs/search.md, "Misspelled words"). Both walk
// only the dictionary entries that start with the word's first letter,
// and at most maxNearScan of them in a part: a typing slip rarely hits
// the first letter, and so the walk is bounded whatever the index holds.

// maxNearScan bounds the dictionary entries one walk reads in one part.
const maxNearScan = 20_000

// maxSuggestWords bounds the query words Suggest looks at, so that a long
// query of unknown words costs a bounded number of walks.
const maxSuggestWords = 8

// fuzzyEdits is the edits `word~` allows: 1, and 2 for a word of 8
// letters or more, where two slips are as likely as one in a short word.
func fuzzyEdits(word string) int {
	if utf8.RuneCountInString(word) >= 8 {
		return 2
	}
	return 1
}

// suggestEdits is the edits a suggestion may be away from the word typed:
// 1 for a word of under 5 letters, where two edits reach most short
// words, else 2.
func suggestEdits(word string) int {
	if utf8.RuneCountInString(word) < 5 {
		return 1
	}
	return 2
}

// editor measures edit distances from one word, reusing its buffers.
type editor struct {
	a, b             []rune
	prev2, prev, cur []int
}

// set makes word the one distances are measured from.
func (ed *editor) set(word string) {
	ed.a = ed.a[:0]
	for _, r := range word {
		ed.a = append(ed.a, r)
	}
}

// distance returns the edit distance of the word set and b, a swap of
// two neighbouring letters counting as one edit (the optimal string
// alignment distance), or k+1 when it is more than k.
func (ed *editor) distance(b []byte, k int) int {
	ed.b = ed.b[:0]
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		ed.b = append(ed.b, r)
		b = b[n:]
	}
	x, y := ed.a, ed.b
	if d := len(x) - len(y); d > k || -d > k {
		return k + 1
	}
	n := len(y)
	ed.prev2 = grow(ed.prev2, n+1)
	ed.prev = grow(ed.prev, n+1)
	ed.cur = grow(ed.cur, n+1)
	for j := range ed.prev {
		ed.prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		ed.cur[0] = i
		best := i
		for j := 1; j <= n; j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			v := min(ed.prev[j]+1, ed.cur[j-1]+1, ed.prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				v = min(v, ed.prev2[j-2]+1)
			}
			ed.cur[j] = v
			best = min(best, v)
		}
		if best > k {
			return k + 1
		}
		ed.prev2, ed.prev, ed.cur = ed.prev, ed.cur, ed.prev2
	}
	return min(ed.prev[n], k+1)
}

// near reports whether b starts with the first letter of a and is within
// k edits of it, as `word~` matches (see part.near).
func (ed *editor) near(a, b string, k int) bool {
	r, n := utf8.DecodeRuneInString(a)
	if n == 0 || !strings.HasPrefix(b, string(r)) {
		return false
	}
	ed.set(a)
	return ed.distance([]byte(b), k) <= k
}

func grow(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// near calls fn, in dictionary order, for the entries of p that are mark
// followed by a word within k edits of word and starting with its first
// letter, with that word's distance, until fn returns false or
// maxNearScan entries have been read. mark is "" (stemmed terms) or
// wordMark (unstemmed words).
func (p *part) near(ed *editor, mark, word string, k int, fn func(termRef, int) bool) error {
	_, n := utf8.DecodeRuneInString(word)
	if n == 0 {
		return nil
	}
	pre := mark + word[:n]
	ed.set(word)
	check := func(term []byte) int {
		if d := len(term) - len(mark) - len(word); d > k*utf8.UTFMax || -d > k*utf8.UTFMax {
			return k + 1 // a quick test by bytes before the one by runes
		}
		return ed.distance(term[len(mark):], k)
	}
	if p.buf != nil {
		var terms []string
		for t := range p.buf.terms {
			if strings.HasPrefix(t, pre) {
				terms = append(terms, t)
			}
		}
		slices.Sort(terms)
		for _, t := range terms[:min(len(terms), maxNearScan)] {
			if d := check([]byte(t)); d <= k {
				bt := p.buf.terms[t]
				if !fn(termRef{term: t, df: bt.df, bt: bt}, d) {
					return nil
				}
			}
		}
		return nil
	}
	it := p.seg.seek(pre)
	defer it.pin.release()
	read := 0
	for it.next() {
		if string(it.prev) < pre {
			continue
		}
		if !bytes.HasPrefix(it.prev, []byte(pre)) {
			return nil
		}
		if read++; read > maxNearScan {
			return nil
		}
		if d := check(it.prev); d <= k {
			e := it.e
			e.term = string(it.prev)
			if !fn(termRef{term: e.term, df: e.df, e: e}, d) {
				return nil
			}
		}
	}
	return it.err
}

// Suggest returns q with each word of it that matches nothing in the
// user's index (at most maxSuggestWords of them) replaced by the word of
// the index closest to it: within 2 edits (1 for a word of under 5
// letters), starting with the same letter, the fewest edits first and of
// those the word in the most items. It returns "" when no word needs or
// finds a replacement, and for a query that does not parse. A word in
// quotes, with *, ~ or a '-' before it, is left as typed. It reads only.
func (ix *Index) Suggest(userID, q string) (string, error) {
	words, err := queryWords(q)
	if err != nil || len(words) == 0 {
		return "", nil
	}
	u, err := ix.getUser(userID, false)
	if err != nil || u == nil {
		return "", err
	}
	u.mu.RLock()
	defer u.mu.RUnlock()
	parts := searchable(u)
	var (
		ed      editor
		out     strings.Builder
		last    int
		changed bool
		looked  int
	)
	for _, w := range words {
		var toks []Token
		Analyze(q[w.start:w.end], func(t Token) { toks = append(toks, t) })
		if len(toks) != 1 || strings.ContainsAny(toks[0].Term, "@0123456789") {
			continue // a compound, an address or a number: not a typing slip
		}
		t := toks[0]
		if found(parts, t.Term) {
			continue
		}
		if looked++; looked > maxSuggestWords {
			break
		}
		best, ok := closest(&ed, parts, t.Word, suggestEdits(t.Word))
		if !ok {
			continue
		}
		out.WriteString(q[last:w.start])
		out.WriteString(best)
		last, changed = w.end, true
	}
	if !changed {
		return "", nil
	}
	out.WriteString(q[last:])
	return out.String(), nil
}

// found reports whether a part holds term.
func found(parts []*part, term string) bool {
	for _, p := range parts {
		if _, ok, err := p.lookup(term); ok || err != nil {
			return true // a damaged part is no evidence of a typing slip
		}
	}
	return false
}

// closest returns the word of parts within k edits of word that Suggest
// offers: the fewest edits, then the most items, then the first in order.
// A stem is offered as a word the items write with it: "software", not
// "softwar", with the stem's items.
func closest(ed *editor, parts []*part, word string, k int) (string, bool) {
	type cand struct {
		d       int
		df      uint64
		written bool // a word as written (wordMark), not a stem
	}
	cands := map[string]cand{}
	for _, p := range parts {
		for _, mark := range []string{"", wordMark} {
			p.near(ed, mark, word, k, func(r termRef, d int) bool {
				w := r.term[len(mark):]
				c, seen := cands[w]
				if !seen || d < c.d {
					c.d = d
				}
				c.written = c.written || mark != ""
				c.df += uint64(r.df)
				cands[w] = c
				return true
			})
		}
	}
	for w, c := range cands {
		if !c.written {
			continue
		}
		stem := ""
		Analyze(w, func(t Token) { stem = t.Term })
		if s, ok := cands[stem]; ok && stem != w && !s.written && s.d >= c.d {
			c.df = max(c.df, s.df)
			cands[w] = c
			delete(cands, stem)
		}
	}
	best, bc := "", cand{}
	for w, c := range cands {
		if best == "" || c.d < bc.d || c.d == bc.d && (c.df > bc.df || c.df == bc.df && w < best) {
			best, bc = w, c
		}
	}
	return best, best != "" && best != word
}

// wordSpan is where a plain word of a query is, in bytes.
type wordSpan struct{ start, end int }

// queryWords returns the plain words of q, those Suggest may replace: not
// in quotes, without *, ~ or '-', in order.
func queryWords(q string) ([]wordSpan, error) {
	var spans []wordSpan
	p := parser{q: q, spans: &spans}
	if _, err := p.parse(); err != nil {
		return nil, err
	}
	return spans, nil
}
