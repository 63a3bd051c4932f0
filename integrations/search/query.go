package search

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of Parse. They bound the work of a query whatever it holds.
const (
	// MaxQueryBytes is the longest query parsed.
	MaxQueryBytes = 1000
	// MaxDepth is how deeply parentheses nest.
	MaxDepth = 20
	// MaxTerms is how many terms a query holds: every analyzed word of
	// it, phrases' words included, and every kind:, integration:, after:
	// and before:.
	MaxTerms = 100
)

// QueryError is a query that cannot be parsed: what is wrong, and the
// byte offset in the query where it was found.
type QueryError struct {
	Pos int
	Msg string
}

// Error says what is wrong and where, as "unclosed quote at 14".
func (e *QueryError) Error() string { return fmt.Sprintf("%s at %d", e.Msg, e.Pos) }

func errAt(pos int, format string, args ...any) error {
	return &QueryError{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses a query of the query language (docs/search.md, "The query language"
// section) into a tree. Words go through Analyze as the items' text does:
// a word that gives several terms ("e-mail", "report_v2", a CJK run) is a
// Phrase, joined words also match as one ("e-mail" finds "email"), and an
// e-mail address is one Term, the whole address.
//
// Juxtaposed terms are an And (AND may be written), OR (upper case) an
// Or, and And binds tighter. A query of only exclusions is an And of Not
// nodes: it matches every item but those. An error is always a
// *QueryError.
func Parse(q string) (Node, error) {
	if len(q) > MaxQueryBytes {
		return nil, errAt(MaxQueryBytes, "query longer than %d bytes", MaxQueryBytes)
	}
	p := parser{q: q}
	return p.parse()
}

func (p *parser) parse() (Node, error) {
	p.skipSpace()
	if p.i == len(p.q) {
		return nil, errAt(0, "empty query")
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.q) { // and() stops only at the end, OR or ')'
		return nil, errAt(p.i, "unmatched )")
	}
	if n == nil {
		return nil, errAt(0, "nothing to search for")
	}
	return n, nil
}

type parser struct {
	q     string
	i     int
	depth int
	terms int
	// spans, when set, collects the plain words (see queryWords); neg
	// is set while an exclusion is parsed.
	spans *[]wordSpan
	neg   bool
}

func (p *parser) skipSpace() {
	for p.i < len(p.q) {
		r, n := utf8.DecodeRuneInString(p.q[p.i:])
		if !unicode.IsSpace(r) {
			return
		}
		p.i += n
	}
}

// endsChunk reports whether a word ends before i: at the end, a space, a
// parenthesis or a quote.
func (p *parser) endsChunk(i int) bool {
	if i >= len(p.q) {
		return true
	}
	if c := p.q[i]; c == '(' || c == ')' || p.quoteAt(i) > 0 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(p.q[i:])
	return unicode.IsSpace(r)
}

// quoteAt returns the length of the quotation mark at i, or 0: the
// typewriter quote or the typographic ones that phones and word
// processors type instead (“…”, „…“).
func (p *parser) quoteAt(i int) int {
	if i >= len(p.q) {
		return 0
	}
	if p.q[i] == '"' {
		return 1
	}
	if p.q[i] == 0xE2 && i+2 < len(p.q) && p.q[i+1] == 0x80 && 0x9C <= p.q[i+2] && p.q[i+2] <= 0x9E {
		return 3 // U+201C, U+201D, U+201E
	}
	return 0
}

// quoted reads the quoted text at the cursor, which is at a quotation
// mark, up to the next quotation mark.
func (p *parser) quoted() (string, error) {
	start := p.i
	from := start + p.quoteAt(start)
	for i := from; i < len(p.q); i++ {
		if n := p.quoteAt(i); n > 0 {
			p.i = i + n
			return p.q[from:i], nil
		}
	}
	return "", errAt(start, "unclosed quote")
}

// keyword reports whether the operator kw (OR, AND) is at the cursor.
func (p *parser) keyword(kw string) bool {
	return strings.HasPrefix(p.q[p.i:], kw) && p.endsChunk(p.i+len(kw))
}

// chunk reads a word up to the next space, parenthesis or quote.
func (p *parser) chunk() string {
	start := p.i
	for !p.endsChunk(p.i) {
		_, n := utf8.DecodeRuneInString(p.q[p.i:])
		p.i += n
	}
	return p.q[start:p.i]
}

// or parses alternatives: and ("OR" and)*.
func (p *parser) or() (Node, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	var kids []Node
	for p.keyword("OR") {
		at := p.i
		p.i += len("OR")
		if left == nil {
			return nil, errAt(at, "OR needs a term on both sides")
		}
		kids = appendFlat[Or](kids, left)
		if left, err = p.and(); err != nil {
			return nil, err
		}
		if left == nil {
			return nil, errAt(at, "OR needs a term on both sides")
		}
	}
	if kids == nil {
		return left, nil
	}
	return Or{Children: appendFlat[Or](kids, left)}, nil
}

// appendFlat appends n to kids, or its children when it is a T itself:
// (a OR b) OR c is a OR b OR c.
func appendFlat[T And | Or](kids []Node, n Node) []Node {
	switch x := n.(type) {
	case T:
		switch y := any(x).(type) {
		case And:
			return append(kids, y.Children...)
		case Or:
			return append(kids, y.Children...)
		}
	}
	return append(kids, n)
}

// and parses terms up to OR, ')' or the end.
func (p *parser) and() (Node, error) {
	var kids []Node
	for {
		p.skipSpace()
		if p.i >= len(p.q) || p.q[p.i] == ')' || p.keyword("OR") {
			break
		}
		if p.keyword("AND") {
			at := p.i
			p.i += len("AND")
			p.skipSpace()
			if len(kids) == 0 || p.i >= len(p.q) || p.q[p.i] == ')' || p.keyword("OR") || p.keyword("AND") {
				return nil, errAt(at, "AND needs a term on both sides")
			}
			continue
		}
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		if n != nil {
			kids = appendFlat[And](kids, n)
		}
	}
	kids = mergeDates(kids)
	switch {
	case len(kids) == 0:
		return nil, nil
	case len(kids) == 1:
		if _, not := kids[0].(Not); !not {
			return kids[0], nil
		}
	}
	return And{Children: kids}, nil
}

// mergeDates makes the date ranges among an And's children one.
func mergeDates(kids []Node) []Node {
	var (
		d     DateRange
		at    = -1
		clean = kids[:0]
	)
	for _, k := range kids {
		r, ok := k.(DateRange)
		if !ok {
			clean = append(clean, k)
			continue
		}
		if r.After.After(d.After) {
			d.After = r.After
		}
		if !r.Before.IsZero() && (d.Before.IsZero() || r.Before.Before(d.Before)) {
			d.Before = r.Before
		}
		if at < 0 {
			at = len(clean)
			clean = append(clean, nil)
		}
	}
	if at >= 0 {
		clean[at] = d
	}
	return clean
}

// unary parses an optionally excluded term. A '-' followed by a space or
// another '-' is punctuation, not an exclusion.
func (p *parser) unary() (Node, error) {
	if p.q[p.i] != '-' {
		return p.primary()
	}
	if p.endsChunk(p.i+1) && (p.i+1 >= len(p.q) || p.q[p.i+1] != '(' && p.quoteAt(p.i+1) == 0) {
		p.i++
		return nil, nil
	}
	if p.q[p.i+1] == '-' {
		return p.primary()
	}
	p.i++
	neg := p.neg
	p.neg = true
	n, err := p.primary()
	p.neg = neg
	if n == nil || err != nil {
		return nil, err
	}
	return Not{Child: n}, nil
}

// primary parses a group, a phrase, a field or a word.
func (p *parser) primary() (Node, error) {
	start := p.i
	if p.quoteAt(start) > 0 {
		return p.phrase(FieldAny)
	}
	switch p.q[p.i] {
	case '(':
		if p.depth++; p.depth > MaxDepth {
			return nil, errAt(start, "too deeply nested (at most %d levels)", MaxDepth)
		}
		p.i++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.q) {
			return nil, errAt(start, "unclosed parenthesis")
		}
		p.i++ // the ')' and() stopped at
		p.depth--
		if n == nil {
			return nil, errAt(start, "empty parentheses")
		}
		return n, nil
	}
	if n, ok, err := p.field(); ok || err != nil {
		return n, err
	}
	return p.words(FieldAny, p.chunk(), start, true)
}

// phrase parses "…" at the cursor.
func (p *parser) phrase(f Field) (Node, error) {
	start := p.i
	text, err := p.quoted()
	if err != nil {
		return nil, err
	}
	return p.words(f, text, start, false)
}

// words turns one word of the query, or a phrase's text, into a node:
// nil when it holds nothing to search for. A word (not a phrase) ending
// in '*' is a prefix, one ending in '~' matches the terms within
// fuzzyEdits of it.
func (p *parser) words(f Field, text string, at int, word bool) (Node, error) {
	prefix, fuzzy := false, false
	if t := strings.TrimRight(text, "*"); word && len(t) < len(text) {
		prefix, text = true, t
	} else if t := strings.TrimSuffix(text, "~"); word && len(t) < len(text) {
		fuzzy, text = true, t
	}
	var toks []Token
	Analyze(text, func(t Token) { toks = append(toks, t) })
	if p.terms += len(toks); p.terms > MaxTerms {
		return nil, errAt(at, "too many terms (at most %d)", MaxTerms)
	}
	if word && !prefix && !fuzzy && !p.neg && p.spans != nil && strings.HasPrefix(p.q[at:], text) {
		*p.spans = append(*p.spans, wordSpan{at, at + len(text)})
	}
	if fuzzy && len(toks) == 1 {
		// The word as typed, not its stem: a slip can keep a stem from
		// forming ("qaurterly" is not stemmed as "quarterly" is), so it is
		// compared with the stems and the words of the index alike.
		return Term{Field: f, Text: toks[0].Word, Fuzzy: fuzzyEdits(toks[0].Word)}, nil
	}
	if prefix {
		if len(toks) == 0 || utf8.RuneCountInString(toks[len(toks)-1].Word) < 2 {
			return nil, errAt(at, "a prefix needs at least 2 characters before *")
		}
		last := toks[len(toks)-1]
		pre := Term{Field: f, Text: last.Word, Prefix: true}
		k := len(toks)
		for k > 0 && toks[k-1].Pos == last.Pos {
			k--
		}
		if k == 0 {
			return pre, nil
		}
		rest := termsNode(f, toks[:k], text)
		return And{Children: appendFlat[And]([]Node{rest}, pre)}, nil
	}
	return termsNode(f, toks, text), nil
}

// termsNode makes a Term or a Phrase of analyzed tokens. Of the tokens at
// one position the last is the part a phrase needs; a first token that
// spans them all is a whole: an address is the Term itself, a joined
// word ("email" of "e-mail") an alternative to the phrase.
//
// Each term keeps its word as written in text (Term.Word, Phrase.Words),
// so a search can look it up under its stems in other languages.
func termsNode(f Field, toks []Token, text string) Node {
	if len(toks) == 0 {
		return nil
	}
	var whole *Token
	if len(toks) > 1 && toks[0].Pos == toks[1].Pos &&
		toks[0].Start == toks[1].Start && toks[0].End == toks[len(toks)-1].End {
		whole = &toks[0]
		if strings.Contains(whole.Term, "@") {
			return Term{Field: f, Text: whole.Term}
		}
	}
	var terms, written []string
	for k, t := range toks {
		if k+1 < len(toks) && toks[k+1].Pos == t.Pos {
			continue
		}
		terms = append(terms, t.Term)
		written = append(written, text[t.Start:t.End])
	}
	if len(terms) == 1 {
		w := toks[len(toks)-1].Word
		if r, n := utf8.DecodeRuneInString(w); n == len(w) && isCJK(r) {
			// A lone CJK character is indexed inside bigrams.
			return Term{Field: f, Text: w, Prefix: true}
		}
		return Term{Field: f, Text: terms[0], Word: written[0]}
	}
	phrase := Phrase{Field: f, Terms: terms, Words: written}
	if whole != nil {
		return Or{Children: []Node{Term{Field: f, Text: whole.Term}, phrase}}
	}
	return phrase
}
