package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fragment is a piece of a snippet; Match marks a word the query matched.
type Fragment struct {
	Text  string
	Match bool
}

// Snippet limits: about SnippetChars characters around the best passage;
// only the first snippetScan bytes of a text are looked at and only the
// first maxSnippetHits matches in them kept, which bounds the cost of a
// snippet on any text: one pass of the analyzer, then a pass over the
// matches.
const (
	SnippetChars   = 240
	snippetScan    = 64 << 10
	maxSnippetHits = 1024
	ellipsis       = "…"
)

// snippetQuery is what a snippet looks for in the text: single words
// (terms and prefixes) and phrases, whose words are marked only where the
// whole phrase is. Each has a kind: the best passage has the most kinds.
type snippetQuery struct {
	exact    map[string]int // term to its kind
	prefixes []matcher
	phrases  []snippetPhrase
	kinds    int
	longest  int // words of the longest phrase
	ed       editor
	first    *[256]bool // firsts, once collected
	// stems remembers the stems of the words of the texts looked at so
	// far: a Highlighter's page of snippets stems each word once, not
	// once a snippet (a third of a page's snippets' time).
	stems map[string]string
	// onlyFirsts: no near word (word~) is looked for, so a word that
	// starts otherwise than every word looked for is skipped unread
	// (analyzer.onlyFirsts).
	onlyFirsts bool
	// hits and ring are find's, kept from one text to the next: what
	// find returns is read before the next text.
	hits []snippetHit
	ring []Token
}

// matcher is a prefix of a query as a snippet looks for it.
type matcher struct {
	text  string
	kind  int
	fuzzy int // `word~`: the edits allowed; 0 for a prefix
}

type snippetPhrase struct {
	terms []string
	kind  int
}

// collect adds the words a query looks for in the text, leaving out what
// it excludes and what it looks for in other fields.
func (sq *snippetQuery) collect(n Node, depth int) {
	if depth > 100 {
		return
	}
	switch n := n.(type) {
	case And:
		for _, c := range n.Children {
			sq.collect(c, depth+1)
		}
	case *And:
		sq.collect(*n, depth)
	case Or:
		for _, c := range n.Children {
			sq.collect(c, depth+1)
		}
	case *Or:
		sq.collect(*n, depth)
	case Term:
		if n.Field != FieldAny && n.Field != FieldText || n.Text == "" {
			return
		}
		if n.Prefix || n.Fuzzy > 0 {
			sq.prefixes = append(sq.prefixes, matcher{text: n.Text, kind: sq.kinds, fuzzy: n.Fuzzy})
		} else if _, ok := sq.exact[n.Text]; !ok {
			sq.exact[n.Text] = sq.kinds
		}
		sq.kinds++
	case *Term:
		sq.collect(*n, depth)
	case Phrase:
		if n.Field != FieldAny && n.Field != FieldText || len(n.Terms) == 0 {
			return
		}
		if len(n.Terms) == 1 {
			sq.collect(Term{Field: n.Field, Text: n.Terms[0]}, depth)
			return
		}
		sq.phrases = append(sq.phrases, snippetPhrase{terms: n.Terms, kind: sq.kinds})
		sq.longest = max(sq.longest, len(n.Terms))
		sq.kinds++
	case *Phrase:
		sq.collect(*n, depth)
	}
}

// firsts returns the first bytes of the terms and prefixes the query
// looks for in a text.
func (sq *snippetQuery) firsts() *[256]bool {
	var f [256]bool
	for t := range sq.exact {
		f[t[0]] = true
	}
	for _, m := range sq.prefixes {
		f[m.text[0]] = true
	}
	for _, ph := range sq.phrases {
		for _, t := range ph.terms {
			if t != "" {
				f[t[0]] = true
			}
		}
	}
	return &f
}

// word returns the kind of a single word of the query t matches, or -1.
func (sq *snippetQuery) word(t Token) int {
	if k, ok := sq.exact[t.Term]; ok {
		return k
	}
	for _, m := range sq.prefixes {
		if m.fuzzy > 0 {
			if sq.ed.near(m.text, t.Term, m.fuzzy) || t.Word != t.Term && sq.ed.near(m.text, t.Word, m.fuzzy) {
				return m.kind
			}
			continue
		}
		if strings.HasPrefix(t.Term, m.text) || strings.HasPrefix(t.Word, m.text) {
			return m.kind
		}
	}
	return -1
}

type snippetHit struct {
	start, end int
	kind       int
}

// hitCollector gathers the matches of a text as Analyze goes: single
// words at once; phrases when a position ends, against the last words of
// the positions before (of the tokens at one position the last is the
// part a phrase matches, as in the index).
type hitCollector struct {
	sq   *snippetQuery
	hits []snippetHit
	// ring holds the phrase part of the last sq.longest positions.
	ring []Token
	seen int // positions ended
	cur  Token
	open bool
}

func (hc *hitCollector) add(h snippetHit) {
	if len(hc.hits) < maxSnippetHits {
		hc.hits = append(hc.hits, h)
	}
}

func (hc *hitCollector) token(t Token) {
	if k := hc.sq.word(t); k >= 0 {
		hc.add(snippetHit{start: t.Start, end: t.End, kind: k})
	}
	if len(hc.sq.phrases) == 0 {
		return
	}
	if hc.open && t.Pos != hc.cur.Pos {
		hc.endPosition()
	}
	hc.cur, hc.open = t, true
}

// endPosition records the current position's phrase part and marks each
// phrase that ends with it.
func (hc *hitCollector) endPosition() {
	if !hc.open {
		return
	}
	hc.open = false
	n := len(hc.ring)
	hc.ring[hc.seen%n] = hc.cur
	hc.seen++
	for _, ph := range hc.sq.phrases {
		k := len(ph.terms)
		if k > hc.seen {
			continue
		}
		match := true
		for j := range k {
			t := hc.ring[(hc.seen-k+j)%n]
			last := hc.ring[(hc.seen-1)%n]
			if t.Term != ph.terms[j] || t.Pos != last.Pos-(k-1-j) {
				match = false
				break
			}
		}
		if match {
			for j := range k {
				t := hc.ring[(hc.seen-k+j)%n]
				hc.add(snippetHit{start: t.Start, end: t.End, kind: ph.kind})
			}
		}
	}
}

// Snippet cuts at most about SnippetChars characters of text around its
// best passage, the one with the most different query words, as
// fragments; "…" marks a cut, which never falls inside a character. A
// phrase's words are marked where the phrase is, and matches that
// overlap (a joined word and its parts, overlapping CJK bigrams) are
// marked as one. When no word of the text matches, it is the start of
// the text.
func Snippet(text string, q Node) []Fragment {
	fs, _ := snippet(text, q)
	return fs
}

// Limits of Highlight's words: how many, and the bytes of each (a longer
// match, a run of CJK bigrams or a joined word, is left out).
const (
	MaxMatched      = 32
	maxMatchedBytes = 64
)

// Highlight is Snippet with, beside it, the words of text the query
// matched, each as it is written there, once, in the order they first
// appear: at most MaxMatched of them, from the part of the text a snippet
// looks at. A page that shows the whole text marks them there (GET
// /v1/search's "matched", docs/search.md). The text is analysed once for
// both.
func Highlight(text string, q Node) ([]Fragment, []string) {
	return NewHighlighter(q).Highlight(text)
}

// Highlighter is Highlight for many texts of one query: what the query
// looks for is read once, not once a result (a page of 100 results of
// a 40-word query read it 100 times). One goroutine uses it at a time.
type Highlighter struct{ sq *snippetQuery }

// NewHighlighter returns the Highlighter of query q.
func NewHighlighter(q Node) *Highlighter { return &Highlighter{sq: newSnippetQuery(q)} }

// Highlight is Highlight(text, q) of the Highlighter's query q.
func (hl *Highlighter) Highlight(text string) ([]Fragment, []string) {
	sq, hits := hl.sq, hl.sq.find(text)
	if len(hits) == 0 {
		return cut(text, 0, nil), []string{}
	}
	words := []string{}
	seen := make(map[string]bool)
	for _, h := range hits {
		w := text[h.start:h.end]
		if len(w) > maxMatchedBytes || seen[w] {
			continue
		}
		seen[w] = true
		if words = append(words, w); len(words) == MaxMatched {
			break
		}
	}
	fs, _ := snippetAround(text, sq, hits)
	return fs, words
}

// snippet is Snippet, also returning the steps of its best-window search,
// which tests bound.
func snippet(text string, q Node) ([]Fragment, int) {
	sq, hits := findHits(text, q)
	if len(hits) == 0 {
		return cut(text, 0, nil), 0
	}
	return snippetAround(text, sq, hits)
}

// findHits returns what the query looks for and where the text holds it,
// sorted and joined (joinHits), within its first snippetScan bytes.
func findHits(text string, q Node) (*snippetQuery, []snippetHit) {
	sq := newSnippetQuery(q)
	return sq, sq.find(text)
}

// newSnippetQuery returns what q looks for in a text.
func newSnippetQuery(q Node) *snippetQuery {
	sq := &snippetQuery{exact: map[string]int{}, stems: map[string]string{}}
	sq.collect(q, 0)
	sq.first = sq.firsts()
	sq.onlyFirsts = !slices.ContainsFunc(sq.prefixes, func(m matcher) bool { return m.fuzzy > 0 })
	return sq
}

// find returns where text holds what sq looks for, as findHits does.
func (sq *snippetQuery) find(text string) []snippetHit {
	scan := text
	if len(scan) > snippetScan {
		scan = scan[:snippetScan]
		for len(scan) > 0 && !utf8.RuneStart(scan[len(scan)-1]) {
			scan = scan[:len(scan)-1]
		}
	}
	if len(sq.ring) < max(sq.longest, 1) {
		sq.ring = make([]Token, max(sq.longest, 1))
	}
	clear(sq.ring)
	hc := &hitCollector{sq: sq, ring: sq.ring, hits: sq.hits[:0]}
	if sq.kinds > 0 {
		// Past maxSnippetHits nothing more is kept: reading stops.
		a := analyzer{text: scan, emit: hc.token, done: func() bool { return len(hc.hits) >= maxSnippetHits }, firsts: sq.first, onlyFirsts: sq.onlyFirsts, stems: sq.stems}
		a.run()
		hc.endPosition()
	}
	sq.hits = hc.hits
	return joinHits(hc.hits)
}

// snippetAround cuts the snippet around the best window of hits (not
// empty).
func snippetAround(text string, sq *snippetQuery, hits []snippetHit) ([]Fragment, int) {
	best, steps := bestWindow(hits, sq.kinds)
	// Some context before the first hit, starting at a word.
	start := hits[best].start
	for back := 0; start > 0 && back < 40; back++ {
		_, n := utf8.DecodeLastRuneInString(text[:start])
		start -= n
	}
	if start > 0 {
		if sp := strings.IndexFunc(text[start:hits[best].start], unicode.IsSpace); sp >= 0 {
			start += sp + 1
		}
	}
	return cut(text, start, hits), steps
}

// joinHits sorts hits by where they start and makes overlapping ones one.
func joinHits(hits []snippetHit) []snippetHit {
	slices.SortStableFunc(hits, func(a, b snippetHit) int { return a.start - b.start })
	out := hits[:0]
	for _, h := range hits {
		if n := len(out); n > 0 && h.start < out[n-1].end {
			out[n-1].end = max(out[n-1].end, h.end)
			continue
		}
		out = append(out, h)
	}
	return out
}

// bestWindow returns the hit that starts the best window: the one whose
// hits within about three quarters of SnippetChars hold the most
// different kinds, then the most hits. It slides the window once over
// the hits, with a count per kind, and returns its steps too.
func bestWindow(hits []snippetHit, kinds int) (best, steps int) {
	budget := SnippetChars * 3 / 4 // bytes of hits a window may span, roughly
	count := make([]int, kinds)
	distinct, bestKinds, bestCount := 0, 0, 0
	j := 0 // the window is hits[i:j]
	for i := range hits {
		for j < len(hits) && hits[j].end-hits[i].start <= budget {
			if count[hits[j].kind] == 0 {
				distinct++
			}
			count[hits[j].kind]++
			j++
			steps++
		}
		if distinct > bestKinds || distinct == bestKinds && j-i > bestCount {
			best, bestKinds, bestCount = i, distinct, j-i
		}
		if j > i {
			if count[hits[i].kind]--; count[hits[i].kind] == 0 {
				distinct--
			}
		} else {
			j = i + 1 // a hit longer than the window: a window of its own
		}
		steps++
	}
	return best, steps
}

// cut returns about SnippetChars characters of text from start, ending at
// a word when one ends near the limit, with the hits inside marked.
func cut(text string, start int, hits []snippetHit) []Fragment {
	end := start
	for n := 0; end < len(text) && n < SnippetChars; n++ {
		_, k := utf8.DecodeRuneInString(text[end:])
		end += k
	}
	if end < len(text) {
		if sp := strings.LastIndexFunc(text[start:end], unicode.IsSpace); sp > (end-start)*3/4 {
			end = start + sp
		}
	}
	// Plain text gathers in run, each piece's white space collapsed,
	// and becomes one fragment before a match and at the end: one
	// string a fragment, where adding piece to piece made one each.
	var out []Fragment
	run := make([]byte, 0, 2*SnippetChars)
	flush := func() {
		if len(run) > 0 {
			out = append(out, Fragment{Text: string(run)})
			run = run[:0]
		}
	}
	if start > 0 {
		run = appendCollapsed(run, ellipsis)
	}
	at := start
	for _, h := range hits {
		if h.start < at || h.end > end {
			continue
		}
		run = appendCollapsed(run, text[at:h.start])
		flush()
		out = append(out, Fragment{Text: text[h.start:h.end], Match: true})
		at = h.end
	}
	run = appendCollapsed(run, text[at:end])
	if end < len(text) {
		run = appendCollapsed(run, ellipsis)
	}
	flush()
	if out == nil {
		out = []Fragment{}
	}
	return out
}

// appendCollapsed appends s to dst with each run of white space in s
// turned into one space, ASCII byte by byte.
func appendCollapsed(dst []byte, s string) []byte {
	space := false
	for i := 0; i < len(s); {
		c, n, sp := s[i], 1, false
		if c < utf8.RuneSelf {
			sp = c == ' ' || '\t' <= c && c <= '\r'
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			sp = unicode.IsSpace(r)
		}
		switch {
		case sp && !space:
			dst = append(dst, ' ')
		case !sp:
			dst = append(dst, s[i:i+n]...)
		}
		space = sp
		i += n
	}
	return dst
}
