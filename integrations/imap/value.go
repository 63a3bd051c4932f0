package imap

import (
	"fmt"
	"io"
)

// kind is the type of a parsed value.
type kind uint8

const (
	kAtom   kind = iota // an atom, a number or a flag; BODY[…]<n> included
	kString             // a quoted string or a literal
	kNil                // NIL
	kList               // a parenthesized list
)

// value is one parsed data item of a response.
type value struct {
	kind kind
	str  string  // an atom's or a quoted string's text
	lit  []byte  // a literal's bytes; nil if it was dropped
	size int64   // a literal's announced size
	list []value // a list's items
	// dropped marks a literal larger than the reader's budget: its bytes
	// were read and thrown away.
	dropped bool
	literal bool
}

// bytes returns a string value's content.
func (v value) bytes() []byte {
	if v.literal {
		return v.lit
	}
	return []byte(v.str)
}

// text returns a string or atom value as a string.
func (v value) text() string {
	if v.literal {
		return string(v.lit)
	}
	return v.str
}

// quoted reads a quoted string, its opening quote already peeked.
// Only \\ and \" are escapes; a line break ends it in error.
func (l *lexer) quoted() (string, error) {
	l.readByte()
	var b []byte
	for {
		c, err := l.readByte()
		if err != nil {
			return "", err
		}
		switch c {
		case '"':
			return string(b), nil
		case '\\':
			e, err := l.readByte()
			if err != nil {
				return "", err
			}
			if e != '\\' && e != '"' {
				return "", fmt.Errorf("%w: bad escape \\%c in a quoted string", ErrProtocol, e)
			}
			c = e
		case '\r', '\n', 0:
			return "", fmt.Errorf("%w: %q in a quoted string", ErrProtocol, c)
		}
		b = append(b, c)
	}
}

// literal reads "{n}" CRLF and n bytes (or "~{n}", a literal8), the
// opening byte already peeked. A literal over the remaining budget is
// read and discarded: memory stays bounded whatever the server announces,
// and the stream stays in step.
func (l *lexer) literal() (value, error) {
	c, _ := l.readByte()
	if c == '~' {
		if c, _ = l.readByte(); c != '{' {
			return value{}, fmt.Errorf("%w: '~' without a literal", ErrProtocol)
		}
	}
	var n uint64
	digits := 0
	for {
		c, err := l.readByte()
		if err != nil {
			return value{}, err
		}
		if c == '}' {
			break
		}
		if c == '+' || c == '-' { // non-synchronizing, as a server should not send
			continue
		}
		if c < '0' || c > '9' || digits == 19 {
			return value{}, fmt.Errorf("%w: bad literal size", ErrProtocol)
		}
		n = n*10 + uint64(c-'0')
		digits++
	}
	if digits == 0 || n > 1<<62 {
		return value{}, fmt.Errorf("%w: bad literal size", ErrProtocol)
	}
	if err := l.eol(); err != nil {
		return value{}, err
	}
	v := value{kind: kString, literal: true, size: int64(n)}
	if int64(n) > l.literals-l.lits {
		v.dropped = true
		if _, err := io.CopyN(io.Discard, l.r, int64(n)); err != nil {
			return value{}, eof(err)
		}
		return v, nil
	}
	l.lits += int64(n)
	v.lit = make([]byte, n)
	if _, err := io.ReadFull(l.r, v.lit); err != nil {
		return value{}, eof(err)
	}
	return v, nil
}

// value reads one data item: an atom, NIL, a string or a list.
func (l *lexer) value(depth int) (value, error) {
	if err := l.item(); err != nil {
		return value{}, err
	}
	c, err := l.peek()
	if err != nil {
		return value{}, err
	}
	switch c {
	case '"':
		s, err := l.quoted()
		return value{kind: kString, str: s}, err
	case '{', '~':
		return l.literal()
	case '(':
		return l.list(depth + 1)
	}
	a, err := l.atom()
	if err != nil {
		return value{}, err
	}
	if len(a) == 3 && upper(a) == "NIL" {
		return value{kind: kNil}, nil
	}
	return value{kind: kAtom, str: a}, nil
}

// list reads a parenthesized list, its "(" already peeked.
func (l *lexer) list(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, fmt.Errorf("%w: lists nested too deeply", ErrProtocol)
	}
	l.readByte()
	v := value{kind: kList}
	for {
		c, err := l.peek()
		if err != nil {
			return value{}, err
		}
		switch c {
		case ')':
			l.readByte()
			return v, nil
		case ' ':
			l.readByte()
			continue
		case '\r', '\n':
			return value{}, fmt.Errorf("%w: unterminated list", ErrProtocol)
		}
		item, err := l.value(depth)
		if err != nil {
			return value{}, err
		}
		v.list = append(v.list, item)
	}
}
