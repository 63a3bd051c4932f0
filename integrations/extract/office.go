package extract

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// xmlRules say what of an XML part is text, by element local name: the
// character data inside a text element, a space or a line break where
// some elements start, a line break where others end.
type xmlRules struct {
	text      map[string]bool // character data inside is text
	space     map[string]bool // a start tag stands for a space (a tab)
	lineBreak map[string]bool // a start tag stands for a line break
	lineEnd   map[string]bool // an end tag ends a line (a paragraph)
}

var (
	// docxRules read word/document.xml: runs of w:t in w:p paragraphs.
	docxRules = xmlRules{
		text:      set("t"),
		space:     set("tab"),
		lineBreak: set("br", "cr"),
		lineEnd:   set("p", "tr"),
	}
	// pptxRules read a slide: a:t runs in a:p paragraphs.
	pptxRules = xmlRules{
		text:      set("t"),
		lineBreak: set("br"),
		lineEnd:   set("p"),
	}
	// odtRules read content.xml: text:p and text:h, with text:s spaces.
	odtRules = xmlRules{
		text:      set("p", "h"),
		space:     set("s", "tab"),
		lineBreak: set("line-break"),
		lineEnd:   set("p", "h"),
	}
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// xmlPart is one XML entry being read: its decoder, with the depth and
// token limits checked on each token.
type xmlPart struct {
	d      *xml.Decoder
	lim    Limits
	depth  int
	tokens *int // shared by every part of a file
}

func newXMLPart(r io.Reader, lim Limits, tokens *int) *xmlPart {
	d := xml.NewDecoder(&tagLimiter{r: r})
	d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		if l := strings.ToLower(label); l == "utf-8" || l == "utf8" || l == "us-ascii" {
			return r, nil
		}
		return nil, fmt.Errorf("charset %q", label)
	}
	return &xmlPart{d: d, lim: lim, tokens: tokens}
}

// next returns the next token, io.EOF at the end.
func (p *xmlPart) next() (xml.Token, error) {
	tok, err := p.d.Token()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		if errors.Is(err, ErrLimit) || errors.Is(err, ErrMalformed) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: xml: %w", ErrMalformed, err)
	}
	*p.tokens++
	if *p.tokens > p.lim.MaxXMLTokens {
		return nil, fmt.Errorf("%w: more than %d XML tokens", ErrLimit, p.lim.MaxXMLTokens)
	}
	switch tok.(type) {
	case xml.StartElement:
		p.depth++
		if p.depth > p.lim.MaxXMLDepth {
			return nil, fmt.Errorf("%w: XML nested deeper than %d", ErrLimit, p.lim.MaxXMLDepth)
		}
	case xml.EndElement:
		p.depth--
	}
	return tok, nil
}

// maxTag bounds the bytes of one XML tag, from '<' to '>'. encoding/xml
// keeps every attribute of a tag as it reads it, at several times the
// bytes each takes in the file: a tag of millions of attributes would cost
// hundreds of megabytes. Office tags take a few hundred bytes.
const maxTag = 64 << 10

// tagLimiter passes an XML document through, failing with ErrLimit on a
// tag longer than maxTag. Inside a start or end tag a quoted '>' does not
// end it; comments, declarations and CDATA end at their first '>', which
// can only make a count restart early.
type tagLimiter struct {
	r     io.Reader
	inTag bool
	quote byte // the quote of an attribute value being read, or 0
	plain bool // a <! or <? construct: quotes not tracked
	start bool // the byte after '<' is next
	n     int  // bytes of the current tag
}

func (t *tagLimiter) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for _, c := range p[:n] {
		if !t.inTag {
			if c == '<' {
				t.inTag, t.start, t.quote, t.plain, t.n = true, true, 0, false, 0
			}
			continue
		}
		t.n++
		if t.n > maxTag {
			return 0, fmt.Errorf("%w: an XML tag longer than %d bytes", ErrLimit, maxTag)
		}
		switch {
		case t.start:
			t.start = false
			t.plain = c == '!' || c == '?'
			if c == '>' {
				t.inTag = false
			}
		case t.quote != 0:
			if c == t.quote {
				t.quote = 0
			}
		case c == '>':
			t.inTag = false
		case (c == '"' || c == '\'') && !t.plain:
			t.quote = c
		}
	}
	return n, err
}

// walk writes the text of an XML part by rules.
func (p *xmlPart) walk(rules xmlRules, out *textBuf) error {
	inText := 0
	for {
		tok, err := p.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			switch {
			case rules.text[name]:
				inText++
			case rules.space[name]:
				err = out.space()
			case rules.lineBreak[name]:
				err = out.newline()
			}
		case xml.EndElement:
			name := t.Name.Local
			if rules.text[name] && inText > 0 {
				inText--
			}
			if rules.lineEnd[name] {
				err = out.newline()
			}
		case xml.CharData:
			if inText > 0 {
				err = out.WriteString(string(t))
			}
		}
		if err != nil {
			return err
		}
	}
}

// office writes the text of a docx, xlsx, pptx or odt file.
func (x *Extractor) office(typ Type, data []byte, out *textBuf) error {
	a, err := openZip(data, x.limits)
	if err != nil {
		return err
	}
	tokens := 0
	part := func(name string, rules xmlRules) error {
		f := a.file(name)
		if f == nil {
			return fmt.Errorf("%w: no %s", ErrMalformed, name)
		}
		rc, err := a.open(f)
		if err != nil {
			return err
		}
		defer rc.Close()
		return newXMLPart(rc, x.limits, &tokens).walk(rules, out)
	}
	switch typ {
	case TypeDOCX:
		return part("word/document.xml", docxRules)
	case TypeODT:
		return part("content.xml", odtRules)
	case TypePPTX:
		slides := numbered(a, "ppt/slides/slide", ".xml")
		if len(slides) == 0 {
			return fmt.Errorf("%w: no slides", ErrMalformed)
		}
		for _, name := range slides {
			if err := part(name, pptxRules); err != nil {
				return err
			}
			if err := out.newline(); err != nil {
				return err
			}
		}
		return nil
	case TypeXLSX:
		return x.xlsx(a, &tokens, out)
	}
	return ErrUnsupported
}

// numbered returns the entries named prefix+N+suffix in the order of N
// (slide2 before slide10).
func numbered(a *archive, prefix, suffix string) []string {
	type entry struct {
		n    int
		name string
	}
	var found []entry
	for _, f := range a.zr.File {
		num, ok := strings.CutPrefix(f.Name, prefix)
		if !ok {
			continue
		}
		num, ok = strings.CutSuffix(num, suffix)
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 0 {
			continue
		}
		found = append(found, entry{n, f.Name})
	}
	slices.SortFunc(found, func(a, b entry) int { return a.n - b.n })
	names := make([]string, len(found))
	for i, e := range found {
		names[i] = e.name
	}
	return names
}
