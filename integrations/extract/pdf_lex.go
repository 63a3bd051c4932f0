package extract

import (
	"errors"
	"strconv"
)

// PDF objects (ISO 32000-1 §7.3) as the parser returns them: nil, bool,
// float64 (every number), pdfName, pdfString (the bytes), []any, pdfDict,
// pdfRef, *pdfStream; and, in content streams, pdfOp.
type (
	pdfName   string
	pdfString string
	pdfOp     string
	pdfDict   map[pdfName]any
	pdfRef    struct{ num, gen int }
	pdfStream struct {
		dict pdfDict
		raw  []byte // still encoded
	}
)

// Bounds of one object: arrays and dictionaries inside each other, the
// elements of an array and the keys of a dictionary. An object past them
// is a syntax error: its elements would cost several times their bytes.
const (
	maxPDFNesting = 32
	maxPDFArray   = 1 << 16
	maxPDFDict    = 1 << 12
)

var errPDFSyntax = errors.New("pdf syntax")

// Token kinds of the lexer.
const (
	tokEOF = iota
	tokValue
	tokKeyword
	tokArrayStart
	tokArrayEnd
	tokDictStart
	tokDictEnd
)

// pdfLexer reads PDF tokens from b, starting at pos.
type pdfLexer struct {
	b   []byte
	pos int
}

func isPDFSpace(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

func isPDFDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func isPDFRegular(c byte) bool { return !isPDFSpace(c) && !isPDFDelim(c) }

// skipSpace skips white space and comments.
func (l *pdfLexer) skipSpace() {
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		switch {
		case isPDFSpace(c):
			l.pos++
		case c == '%':
			for l.pos < len(l.b) && l.b[l.pos] != '\n' && l.b[l.pos] != '\r' {
				l.pos++
			}
		default:
			return
		}
	}
}

// token returns the next token: its kind and, for a value, the value; for
// a keyword, the keyword as a pdfOp.
func (l *pdfLexer) token() (int, any) {
	l.skipSpace()
	if l.pos >= len(l.b) {
		return tokEOF, nil
	}
	c := l.b[l.pos]
	switch {
	case c == '/':
		l.pos++
		return tokValue, l.name()
	case c == '(':
		l.pos++
		return tokValue, l.literal()
	case c == '<':
		if l.pos+1 < len(l.b) && l.b[l.pos+1] == '<' {
			l.pos += 2
			return tokDictStart, nil
		}
		l.pos++
		return tokValue, l.hex()
	case c == '>':
		l.pos++
		if l.pos < len(l.b) && l.b[l.pos] == '>' {
			l.pos++
		}
		return tokDictEnd, nil
	case c == '[':
		l.pos++
		return tokArrayStart, nil
	case c == ']':
		l.pos++
		return tokArrayEnd, nil
	case c == ')' || c == '{' || c == '}':
		l.pos++
		return tokKeyword, pdfOp(c)
	case c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9':
		start := l.pos
		for l.pos < len(l.b) && isPDFRegular(l.b[l.pos]) {
			l.pos++
		}
		f, err := strconv.ParseFloat(string(l.b[start:l.pos]), 64)
		if err != nil {
			return tokKeyword, pdfOp(l.b[start:l.pos])
		}
		return tokValue, f
	}
	start := l.pos
	for l.pos < len(l.b) && isPDFRegular(l.b[l.pos]) {
		l.pos++
	}
	switch w := string(l.b[start:l.pos]); w {
	case "true":
		return tokValue, true
	case "false":
		return tokValue, false
	case "null":
		return tokValue, nil
	default:
		return tokKeyword, pdfOp(w)
	}
}

// name reads a name after its '/', decoding #xx escapes.
func (l *pdfLexer) name() pdfName {
	var out []byte
	for l.pos < len(l.b) && isPDFRegular(l.b[l.pos]) {
		c := l.b[l.pos]
		if c == '#' && l.pos+2 < len(l.b) {
			if v, ok := unhex2(l.b[l.pos+1], l.b[l.pos+2]); ok {
				out = append(out, v)
				l.pos += 3
				continue
			}
		}
		out = append(out, c)
		l.pos++
	}
	return pdfName(out)
}

// literal reads a (string) after its '(': balanced parentheses, escapes.
func (l *pdfLexer) literal() pdfString {
	var out []byte
	depth := 1
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		l.pos++
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return pdfString(out)
			}
		case '\\':
			if l.pos >= len(l.b) {
				return pdfString(out)
			}
			e := l.b[l.pos]
			l.pos++
			switch e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if l.pos < len(l.b) && l.b[l.pos] == '\n' {
					l.pos++
				}
				continue
			case '\n':
				continue
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for i := 0; i < 2 && l.pos < len(l.b) && l.b[l.pos] >= '0' && l.b[l.pos] <= '7'; i++ {
						v = v*8 + int(l.b[l.pos]-'0')
						l.pos++
					}
					c = byte(v)
				} else {
					c = e
				}
			}
		}
		out = append(out, c)
	}
	return pdfString(out)
}

// hex reads a <hex string> after its '<'; an odd last digit counts as
// followed by 0.
func (l *pdfLexer) hex() pdfString {
	var out []byte
	hi, half := byte(0), false
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		l.pos++
		if c == '>' {
			break
		}
		v, ok := unhex1(c)
		if !ok {
			continue
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		out = append(out, hi<<4)
	}
	return pdfString(out)
}

func unhex1(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func unhex2(a, b byte) (byte, bool) {
	x, ok1 := unhex1(a)
	y, ok2 := unhex1(b)
	return x<<4 | y, ok1 && ok2
}

// object parses one object. refs says "n g R" is a reference (in a file's
// body; content streams have none). A stray keyword is returned as a
// pdfOp: the caller decides.
func (l *pdfLexer) object(refs bool, depth int) (any, error) {
	kind, v := l.token()
	return l.objectFrom(kind, v, refs, depth)
}

func (l *pdfLexer) objectFrom(kind int, v any, refs bool, depth int) (any, error) {
	if depth > maxPDFNesting {
		return nil, errPDFSyntax
	}
	switch kind {
	case tokEOF:
		return nil, errPDFSyntax
	case tokArrayStart:
		var arr []any
		for {
			k, v := l.token()
			if k == tokArrayEnd {
				return arr, nil
			}
			if k == tokEOF || k == tokDictEnd {
				return nil, errPDFSyntax
			}
			o, err := l.objectFrom(k, v, refs, depth+1)
			if err != nil || len(arr) >= maxPDFArray {
				return nil, errPDFSyntax
			}
			arr = append(arr, o)
		}
	case tokDictStart:
		d := pdfDict{}
		for {
			k, v := l.token()
			if k == tokDictEnd {
				return d, nil
			}
			key, ok := v.(pdfName)
			if k != tokValue || !ok {
				return nil, errPDFSyntax
			}
			o, err := l.object(refs, depth+1)
			if err != nil || len(d) >= maxPDFDict {
				return nil, errPDFSyntax
			}
			d[key] = o
		}
	case tokValue:
		if f, ok := v.(float64); ok && refs && f >= 0 && f == float64(int(f)) {
			save := l.pos
			if k2, g := l.token(); k2 == tokValue {
				if gf, ok := g.(float64); ok && gf >= 0 && gf == float64(int(gf)) {
					if k3, r := l.token(); k3 == tokKeyword && r == pdfOp("R") {
						return pdfRef{int(f), int(gf)}, nil
					}
				}
			}
			l.pos = save
		}
		return v, nil
	case tokKeyword:
		return v, nil
	}
	return nil, errPDFSyntax
}
