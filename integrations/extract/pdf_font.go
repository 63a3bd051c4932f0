package extract

import (
	"strings"
	"unicode/utf8"

	"searchsvc/integrations/mail"
)

// pdfFont turns a font's character codes into text.
type pdfFont struct {
	cmap     *toUnicode // nil: none
	simple   [256]rune  // a simple font's encoding, 0 for unmapped codes
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
		return mail.DecodeCP1252(b)
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
		r, _ := utf8.DecodeRuneInString(mail.DecodeCP1252([]byte{byte(c)}))
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
