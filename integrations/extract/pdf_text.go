package extract

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
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
	var (
		ops   []any
		cur   *pdfFont
		lastY float64
	)
	show := func(s pdfString) error { return out.WriteString(cur.decode([]byte(s))) }
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
		var err error
		switch v.(pdfOp) {
		case "Tf":
			if len(ops) >= 2 {
				if name, ok := ops[len(ops)-2].(pdfName); ok {
					cur = font(name)
				}
			}
		case "Tj":
			if s, ok := last[pdfString](ops); ok {
				err = show(s)
			}
		case "'", "\"":
			if s, ok := last[pdfString](ops); ok {
				if err = out.newline(); err == nil {
					err = show(s)
				}
			}
		case "TJ":
			arr, _ := last[[]any](ops)
			for _, e := range arr {
				switch e := e.(type) {
				case pdfString:
					err = show(e)
				case float64:
					if e < -200 { // a gap wider than a fifth of an em: a space
						err = out.space()
					}
				}
				if err != nil {
					break
				}
			}
		case "Td", "TD":
			if ty, ok := last[float64](ops); ok && ty != 0 {
				lastY += ty
				err = out.newline()
			} else {
				err = out.space()
			}
		case "T*":
			err = out.newline()
		case "Tm":
			if y, ok := last[float64](ops); ok && len(ops) >= 6 {
				if y != lastY {
					err = out.newline()
				} else {
					err = out.space()
				}
				lastY = y
			}
		case "ET":
			err = out.space()
		case "BI":
			skipInlineImage(l)
		}
		if err != nil {
			return err
		}
		ops = ops[:0]
	}
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

// pdfFont turns a font's character codes into text.
type pdfFont struct {
	cmap     *toUnicode // nil: none
	simple   [256]rune  // a simple font's encoding, 0 for unmapped codes
	twoByte  bool       // a composite font without a map: codes are 2 bytes
	noText   bool       // codes cannot be turned into text
	cmapOnly bool       // composite: only the map gives text
}

// font builds the decoder of a font dictionary (nil: none, read as
// Windows-1252).
func (d *pdfDoc) font(f pdfDict) *pdfFont {
	pf := &pdfFont{simple: winAnsi()}
	if f == nil {
		return pf
	}
	if s, ok := d.resolve(f["ToUnicode"]).(*pdfStream); ok {
		if data, err := d.decode(s); err == nil {
			pf.cmap = parseCMap(data)
		}
	}
	if f["Subtype"] == pdfName("Type0") {
		pf.cmapOnly = true
		pf.noText = pf.cmap == nil
		return pf
	}
	if base, _ := f["BaseFont"].(pdfName); base == "Symbol" || base == "ZapfDingbats" {
		pf.noText = pf.cmap == nil
	}
	switch e := d.resolve(f["Encoding"]).(type) {
	case pdfDict:
		pf.differences(d.resolve(e["Differences"]))
	}
	return pf
}

// differences applies an /Encoding's /Differences: a code, then the glyph
// names of the codes from it on.
func (pf *pdfFont) differences(o any) {
	arr, _ := o.([]any)
	code := -1
	for _, e := range arr {
		switch e := e.(type) {
		case float64:
			code = int(e)
			if e < 0 || e > 255 {
				code = -1
			}
		case pdfName:
			if code >= 0 && code <= 255 {
				pf.simple[code] = glyphRune(string(e))
				code++
			}
		}
	}
}

// decode turns the codes of a shown string into text.
func (pf *pdfFont) decode(b []byte) string {
	if pf == nil {
		return decodeCP1252(b)
	}
	if pf.noText {
		return ""
	}
	var sb strings.Builder
	for len(b) > 0 {
		if pf.cmap != nil {
			if s, n := pf.cmap.lookup(b, pf.cmapOnly); n > 0 {
				sb.WriteString(s)
				b = b[n:]
				continue
			}
		}
		if pf.cmapOnly {
			b = b[min(2, len(b)):]
			continue
		}
		if r := pf.simple[b[0]]; r != 0 {
			sb.WriteRune(r)
		}
		b = b[1:]
	}
	return sb.String()
}

// winAnsi is WinAnsiEncoding, which Windows-1252 is; StandardEncoding and
// MacRomanEncoding agree with it on letters, digits and most punctuation.
func winAnsi() [256]rune {
	var t [256]rune
	for c := 32; c < 256; c++ {
		r, _ := utf8.DecodeRuneInString(decodeCP1252([]byte{byte(c)}))
		t[c] = r
	}
	t[0x7f] = 0
	return t
}

// glyphRune maps a glyph name of the Adobe Glyph List's common part, or
// uniXXXX/uXXXX, to its rune; 0 if unknown.
func glyphRune(name string) rune {
	if len(name) == 1 && name[0] > ' ' && name[0] < 0x7f {
		return rune(name[0])
	}
	for _, prefix := range []string{"uni", "u"} {
		if h, ok := strings.CutPrefix(name, prefix); ok && len(h) >= 4 && len(h) <= 6 {
			var r rune
			valid := true
			for i := 0; i < len(h); i++ {
				v, ok := unhex1(h[i])
				if !ok {
					valid = false
					break
				}
				r = r<<4 | rune(v)
			}
			if valid && utf8.ValidRune(r) {
				return r
			}
		}
	}
	return glyphNames[name]
}

// glyphNames are the glyph names of letters and punctuation beyond single
// letters that /Differences arrays commonly use.
var glyphNames = map[string]rune{
	"space": ' ', "exclam": '!', "quotedbl": '"', "numbersign": '#', "dollar": '$', "percent": '%',
	"ampersand": '&', "quotesingle": '\'', "quoteright": '’', "quoteleft": '‘', "parenleft": '(',
	"parenright": ')', "asterisk": '*', "plus": '+', "comma": ',', "hyphen": '-', "period": '.',
	"slash": '/', "zero": '0', "one": '1', "two": '2', "three": '3', "four": '4', "five": '5',
	"six": '6', "seven": '7', "eight": '8', "nine": '9', "colon": ':', "semicolon": ';',
	"less": '<', "equal": '=', "greater": '>', "question": '?', "at": '@', "bracketleft": '[',
	"backslash": '\\', "bracketright": ']', "underscore": '_', "quotedblleft": '“',
	"quotedblright": '”', "endash": '–', "emdash": '—', "bullet": '•', "ellipsis": '…',
	"fi": 'ﬁ', "fl": 'ﬂ', "eacute": 'é', "egrave": 'è', "agrave": 'à', "ccedilla": 'ç',
	"udieresis": 'ü', "odieresis": 'ö', "adieresis": 'ä', "germandbls": 'ß', "Eacute": 'É',
}

// toUnicode is a ToUnicode CMap: the code space (which byte lengths codes
// have) and the codes' text.
type toUnicode struct {
	spaces [][2][]byte // codespace ranges: low and high, same length
	chars  map[string]string
	ranges []cmapRange
}

type cmapRange struct {
	lo, hi []byte
	base   []rune // text of lo; later codes add to its last rune
	list   []string
}

// maxCMapEntries bounds the mappings of one CMap.
const maxCMapEntries = 1 << 16

// parseCMap reads the codespacerange, bfchar and bfrange sections of a
// ToUnicode CMap; anything else in it is ignored.
func parseCMap(data []byte) *toUnicode {
	cm := &toUnicode{chars: map[string]string{}}
	l := &pdfLexer{b: data}
	var ops []any
	section := ""
	for entries := 0; entries < maxCMapEntries; {
		kind, v := l.token()
		if kind == tokEOF {
			break
		}
		o, err := l.objectFrom(kind, v, false, 0)
		if err != nil {
			ops = ops[:0]
			continue
		}
		op, isOp := o.(pdfOp)
		if !isOp {
			if len(ops) < 3 {
				ops = append(ops, o)
			}
		} else {
			switch op {
			case "begincodespacerange", "beginbfchar", "beginbfrange":
				section = string(op)
			case "endcodespacerange", "endbfchar", "endbfrange":
				section = ""
			}
			ops = ops[:0]
			continue
		}
		switch section {
		case "begincodespacerange":
			if len(ops) == 2 {
				lo, _ := ops[0].(pdfString)
				hi, _ := ops[1].(pdfString)
				if len(lo) == len(hi) && len(lo) > 0 && len(lo) <= 4 {
					cm.spaces = append(cm.spaces, [2][]byte{[]byte(lo), []byte(hi)})
				}
				ops, entries = ops[:0], entries+1
			}
		case "beginbfchar":
			if len(ops) == 2 {
				src, _ := ops[0].(pdfString)
				dst, _ := ops[1].(pdfString)
				if len(src) > 0 && len(src) <= 4 {
					cm.chars[string(src)] = utf16BE([]byte(dst))
				}
				ops, entries = ops[:0], entries+1
			}
		case "beginbfrange":
			if len(ops) == 3 {
				lo, _ := ops[0].(pdfString)
				hi, _ := ops[1].(pdfString)
				if len(lo) == len(hi) && len(lo) > 0 && len(lo) <= 4 {
					r := cmapRange{lo: []byte(lo), hi: []byte(hi)}
					switch dst := ops[2].(type) {
					case pdfString:
						r.base = []rune(utf16BE([]byte(dst)))
					case []any:
						for _, e := range dst {
							s, _ := e.(pdfString)
							r.list = append(r.list, utf16BE([]byte(s)))
						}
						entries += len(dst) // each costs a string: counted against the map's bound
					}
					if len(r.base) > 0 || len(r.list) > 0 {
						cm.ranges = append(cm.ranges, r)
					}
				}
				ops, entries = ops[:0], entries+1
			}
		default:
			if len(ops) >= 3 {
				ops = ops[:0]
			}
		}
	}
	return cm
}

// utf16BE decodes a CMap destination, UTF-16BE.
func utf16BE(b []byte) string { return decodeUTF16(b, true) }

// lookup returns the text of the code at the start of b and its length in
// bytes; 0 when no mapping matches.
func (cm *toUnicode) lookup(b []byte, composite bool) (string, int) {
	lengths := []int{1, 2, 3, 4}
	if len(cm.spaces) > 0 {
		lengths = lengths[:0]
		for _, sp := range cm.spaces {
			n := len(sp[0])
			if n <= len(b) && inRange(b[:n], sp[0], sp[1]) && !slices.Contains(lengths, n) {
				lengths = append(lengths, n)
			}
		}
	} else if composite {
		lengths = []int{2}
	}
	for _, n := range lengths {
		if n > len(b) {
			continue
		}
		code := b[:n]
		if s, ok := cm.chars[string(code)]; ok {
			return s, n
		}
		for _, r := range cm.ranges {
			if len(r.lo) != n || !inRange(code, r.lo, r.hi) {
				continue
			}
			off := codeValue(code) - codeValue(r.lo)
			if r.list != nil {
				if off < uint32(len(r.list)) {
					return r.list[off], n
				}
				continue
			}
			text := slices.Clone(r.base)
			text[len(text)-1] += rune(off)
			return string(text), n
		}
	}
	return "", 0
}

func inRange(code, lo, hi []byte) bool {
	for i := range code {
		if code[i] < lo[i] || code[i] > hi[i] {
			return false
		}
	}
	return true
}

func codeValue(b []byte) uint32 {
	var v uint32
	for _, c := range b {
		v = v<<8 | uint32(c)
	}
	return v
}
