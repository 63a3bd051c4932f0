package search

import (
	"slices"
	"strings"
	"time"
)

// The field:value terms of the query language: from:, to: and subject:
// take words or a phrase; kind:, integration:, after: and before: a value
// that is checked here.

// textField returns the field a name:value term of words searches.
func textField(name string) (Field, bool) {
	switch name {
	case "from":
		return FieldFrom, true
	case "to":
		return FieldTo, true
	case "subject":
		return FieldTitle, true
	}
	return 0, false
}

// field parses name:value at the cursor; ok is false when there is none
// (and the cursor has not moved).
func (p *parser) field() (n Node, ok bool, err error) {
	start := p.i
	j := start
	for j < len(p.q) && ('a' <= p.q[j]|0x20 && p.q[j]|0x20 <= 'z') {
		j++
	}
	if j == start || j >= len(p.q) || p.q[j] != ':' {
		return nil, false, nil
	}
	name := strings.ToLower(p.q[start:j])
	f, text := textField(name)
	known := text
	switch name {
	case "kind", "integration", "after", "before", "filename", "has", "in":
		known = true
	}
	if p.endsChunk(j+1) && p.quoteAt(j+1) == 0 {
		if known {
			return nil, true, errAt(start, "%s: needs a value", name)
		}
		return nil, false, nil // "Re: budget" is words
	}
	if !known && strings.HasPrefix(p.q[j+1:], "//") {
		return nil, false, nil // a pasted address, "https://…", is words
	}
	if !known {
		return nil, true, errAt(start, "unknown field %q", p.q[start:j+1])
	}
	p.i = j + 1
	if text {
		if p.quoteAt(p.i) > 0 {
			n, err = p.phrase(f)
		} else {
			at := p.i // before chunk moves it on
			n, err = p.words(f, p.chunk(), at, true)
		}
		if err == nil && n == nil {
			err = errAt(start, "%s: needs a word or a \"phrase\"", name)
		}
		return n, true, err
	}

	var v string
	if p.quoteAt(p.i) > 0 {
		if v, err = p.quoted(); err != nil {
			return nil, true, err
		}
	} else {
		v = p.chunk()
	}
	if p.terms++; p.terms > MaxTerms {
		return nil, true, errAt(start, "too many terms (at most %d)", MaxTerms)
	}
	return valueField(name, v, start)
}

// valueField is the node of name:v for the fields that take a value
// rather than words: filename:, has:, kind:, integration:, after: and
// before:.
func valueField(name, v string, start int) (Node, bool, error) {
	switch name {
	case "filename":
		return fileNameNode(start, v)
	case "in":
		return inNode(start, v)
	case "has":
		if strings.ToLower(v) != "attachment" {
			return nil, true, errAt(start, "unknown value %q in has: (attachment)", v)
		}
		return Term{Field: FieldTitle, Text: attachedTerm}, true, nil
	case "kind":
		switch k := strings.ToLower(v); k {
		case "email", "message", "file", "entry":
			return Kind{Kind: k}, true, nil
		}
		return nil, true, errAt(start, "unknown kind %q in kind: (email, message, file or entry)", v)
	case "integration":
		if !validIntegration(v) {
			return nil, true, errAt(start, "bad integration %q in integration:", v)
		}
		return Integration{Integration: strings.ToLower(v)}, true, nil
	default: // after, before
		t, err := time.Parse(time.DateOnly, v)
		if err != nil || len(v) != len(time.DateOnly) {
			return nil, true, errAt(start, "bad date %q in %s: (want YYYY-MM-DD)", v, name)
		}
		if name == "after" {
			return DateRange{After: t}, true, nil
		}
		return DateRange{Before: t}, true, nil
	}
}

// specialUses are the names in: takes for a mailbox's special use,
// whatever the server calls it.
var specialUses = []string{"inbox", "sent", "drafts", "archive", "junk", "trash"}

// inNode is in:v: the items in the mailbox or folder named v, a path
// inside a connected folder ("projects/2026"), or, for a special use's
// name, the mailbox of that use too (docs/search.md, "The query
// language").
func inNode(start int, v string) (Node, bool, error) {
	v = strings.ToLower(strings.Trim(strings.TrimSpace(v), "/"))
	if v == "" || len(v) > maxTerm-2 {
		return nil, true, errAt(start, "in: needs a folder's name")
	}
	n := Term{Field: FieldTitle, Text: folderMark + v}
	if slices.Contains(specialUses, v) {
		return Or{Children: []Node{n, Term{Field: FieldTitle, Text: folderMark + UseValue(v)}}}, true, nil
	}
	return n, true, nil
}

// fileNameNode is filename:v: the items whose file or one of whose
// attachments has every word of v in its name (docs/search.md, "The
// query language").
func fileNameNode(start int, v string) (Node, bool, error) {
	var and And
	nameTerms(v, func(t string) {
		if len(and.Children) < MaxTerms {
			and.Children = append(and.Children, Term{Field: FieldTitle, Text: nameMark + t})
		}
	})
	switch len(and.Children) {
	case 0:
		return nil, true, errAt(start, "filename: needs a word of a name")
	case 1:
		return and.Children[0], true, nil
	}
	return and, true, nil
}

// validIntegration reports whether v can be an integration domain: 1 to
// 64 ASCII letters, digits, '.', '-' or '_'.
func validIntegration(v string) bool {
	if len(v) == 0 || len(v) > 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !isASCIIWord(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}
