package extract

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// pdf writes the text of a PDF: the text-showing operators (Tj, TJ, ' and
// ") of each page's content streams, in page order, decoded through each
// font's ToUnicode map or, for simple fonts, its encoding. Images, forms
// (XObjects), encrypted files and fonts with no way back to Unicode give
// no text.
func (x *Extractor) pdf(data []byte, out *textBuf) error {
	d, err := openPDF(data, x.limits)
	if err != nil {
		return err
	}
	root := d.dict(d.trailer["Root"])
	if d.trailer["Encrypt"] != nil {
		return fmt.Errorf("%w: the PDF is encrypted", ErrNoText)
	}
	if root == nil {
		root = d.findCatalog()
	}
	if root == nil {
		return fmt.Errorf("%w: pdf: no document catalog", ErrMalformed)
	}
	if root["Encrypt"] != nil {
		return fmt.Errorf("%w: the PDF is encrypted", ErrNoText)
	}
	pages := d.pages(root["Pages"])
	if len(pages) == 0 {
		return fmt.Errorf("%w: pdf: no pages", ErrMalformed)
	}
	fonts := map[any]*pdfFont{}
	for _, p := range pages {
		if err := d.pageText(p, fonts, out); err != nil {
			return err
		}
		if err := out.newline(); err != nil {
			return err
		}
	}
	return nil
}

// findCatalog returns the /Type /Catalog object of a file whose trailer
// is missing or in a cross-reference stream, and notes an /Encrypt there.
func (d *pdfDoc) findCatalog() pdfDict {
	nums := make([]int, 0, len(d.offsets))
	for n := range d.offsets {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	var catalog pdfDict
	for _, n := range nums {
		dict := d.dict(pdfRef{n, 0})
		switch dict["Type"] {
		case pdfName("XRef"):
			if dict["Encrypt"] != nil {
				return pdfDict{"Encrypt": true}
			}
			if root := d.dict(dict["Root"]); root != nil && catalog == nil {
				catalog = root
			}
		case pdfName("Catalog"):
			if catalog == nil {
				catalog = dict
			}
		}
	}
	return catalog
}

// pdfPage is a page's dictionary and its resources, inherited from the
// page tree when the page has none.
type pdfPage struct {
	dict      pdfDict
	resources pdfDict
}

// pages walks the page tree from node, depth first, each node once.
func (d *pdfDoc) pages(node any) []pdfPage {
	var pages []pdfPage
	seen := map[int]bool{}
	var walk func(o any, res pdfDict, depth int)
	walk = func(o any, res pdfDict, depth int) {
		if r, ok := o.(pdfRef); ok {
			if seen[r.num] {
				return
			}
			seen[r.num] = true
		}
		n := d.dict(o)
		if n == nil || depth > maxPDFNesting || len(pages) >= d.lim.MaxObjects {
			return
		}
		if r := d.dict(n["Resources"]); r != nil {
			res = r
		}
		kids, isTree := d.resolve(n["Kids"]).([]any)
		if !isTree {
			pages = append(pages, pdfPage{dict: n, resources: res})
			return
		}
		for _, k := range kids {
			walk(k, res, depth+1)
		}
	}
	walk(node, nil, 0)
	return pages
}

// pageText writes the text of one page.
func (d *pdfDoc) pageText(p pdfPage, fonts map[any]*pdfFont, out *textBuf) error {
	var content []byte
	var parts []any
	switch c := p.dict["Contents"].(type) {
	case []any:
		parts = c
	default:
		if a, ok := d.resolve(c).([]any); ok {
			parts = a
		} else {
			parts = []any{c}
		}
	}
	for _, part := range parts {
		s, ok := d.resolve(part).(*pdfStream)
		if !ok {
			continue
		}
		data, err := d.decode(s)
		if errors.Is(err, ErrLimit) {
			return err
		}
		if err != nil {
			continue
		}
		content = append(content, data...)
		content = append(content, '\n')
	}
	fontDict := d.dict(p.resources["Font"])
	font := func(name pdfName) *pdfFont {
		ref := fontDict[name]
		key := any(ref)
		if _, isRef := ref.(pdfRef); !isRef {
			key = name // a direct font dictionary: cached by name for this doc
		}
		if f, ok := fonts[key]; ok {
			return f
		}
		f := d.font(d.dict(ref))
		fonts[key] = f
		return f
	}
	return showText(content, font, out)
}

// maxOperands bounds the operand stack of a content stream.
const maxOperands = 64

// showText runs a content stream's text operators.
func showText(content []byte, font func(pdfName) *pdfFont, out *textBuf) error {
	l := &pdfLexer{b: content}
	ts := &textState{font: font, out: out}
	var ops []any
	for {
		kind, v := l.token()
		if kind == tokEOF {
			return nil
		}
		if kind != tokKeyword {
			o, err := l.objectFrom(kind, v, false, 0)
			if err != nil {
				ops = ops[:0]
				continue
			}
			if len(ops) < maxOperands {
				ops = append(ops, o)
			}
			continue
		}
		if err := ts.apply(v.(pdfOp), ops, l); err != nil {
			return err
		}
		ops = ops[:0]
	}
}

// textState is what showText keeps from one operator of a content stream
// to the next: the current font and the y of the last text matrix.
type textState struct {
	font  func(pdfName) *pdfFont
	out   *textBuf
	cur   *pdfFont
	lastY float64
}

// show writes s, decoded with the current font.
func (ts *textState) show(s pdfString) error { return ts.out.WriteString(ts.cur.decode([]byte(s))) }

// apply runs the operator op with its operands ops; l is the lexer, which
// an inline image is skipped on.
func (ts *textState) apply(op pdfOp, ops []any, l *pdfLexer) error {
	var err error
	switch op {
	case "Tf":
		if len(ops) >= 2 {
			if name, ok := ops[len(ops)-2].(pdfName); ok {
				ts.cur = ts.font(name)
			}
		}
	case "Tj":
		if s, ok := last[pdfString](ops); ok {
			err = ts.show(s)
		}
	case "'", "\"":
		if s, ok := last[pdfString](ops); ok {
			if err = ts.out.newline(); err == nil {
				err = ts.show(s)
			}
		}
	case "TJ":
		arr, _ := last[[]any](ops)
		for _, e := range arr {
			switch e := e.(type) {
			case pdfString:
				err = ts.show(e)
			case float64:
				if e < -200 { // a gap wider than a fifth of an em: a space
					err = ts.out.space()
				}
			}
			if err != nil {
				break
			}
		}
	case "Td", "TD":
		if ty, ok := last[float64](ops); ok && ty != 0 {
			ts.lastY += ty
			err = ts.out.newline()
		} else {
			err = ts.out.space()
		}
	case "T*":
		err = ts.out.newline()
	case "Tm":
		if y, ok := last[float64](ops); ok && len(ops) >= 6 {
			if y != ts.lastY {
				err = ts.out.newline()
			} else {
				err = ts.out.space()
			}
			ts.lastY = y
		}
	case "ET":
		err = ts.out.space()
	case "BI":
		skipInlineImage(l)
	}
	return err
}

// last returns the last operand if it is a T.
func last[T any](ops []any) (T, bool) {
	var zero T
	if len(ops) == 0 {
		return zero, false
	}
	v, ok := ops[len(ops)-1].(T)
	return v, ok
}

// skipInlineImage moves past an inline image's data, "ID" to "EI".
func skipInlineImage(l *pdfLexer) {
	for {
		kind, v := l.token()
		if kind == tokEOF {
			return
		}
		if kind == tokKeyword && v == pdfOp("ID") {
			break
		}
	}
	for l.pos < len(l.b) {
		i := bytes.Index(l.b[l.pos:], []byte("EI"))
		if i < 0 {
			l.pos = len(l.b)
			return
		}
		l.pos += i + 2
		if (l.pos >= len(l.b) || !isPDFRegular(l.b[l.pos])) && isPDFSpace(l.b[l.pos-3]) {
			return
		}
	}
}
