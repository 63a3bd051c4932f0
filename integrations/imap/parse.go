package imap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Bounds of the response reader. A server is untrusted: none of them can be
// exceeded by what it sends.
const (
	// maxLine bounds the text of a SEARCH or ESEARCH response, literals
	// excluded (bytes): it lists every UID of a folder on one line, and
	// the client keeps only UID ranges of it, never a value per UID.
	maxLine = 8 << 20
	// maxResponseLine bounds the text of every other response once logged
	// in. RFC 7162 asks clients to accept lines of 8192 octets; a FETCH
	// of many flags, or a LIST of a long name, stays far below this.
	maxResponseLine = 64 << 10
	// maxItems bounds the data items (atoms, strings, lists) that one
	// response may hold, whatever its length: each parsed item costs
	// about 80 bytes of memory, so a line of "a a a …" must not become
	// millions of them.
	maxItems = 1 << 16
	// maxGreetingLine bounds the lines read before logging in, when the
	// peer has still to show that it is an IMAP server.
	maxGreetingLine = 8192
	// maxDepth bounds how deeply parenthesized lists nest.
	maxDepth = 32
)

// Errors of the response reader.
var (
	// ErrLineTooLong means the server sent a response whose text is
	// longer than the reader accepts.
	ErrLineTooLong = errors.New("imap: server sent an over-long line")
	// ErrProtocol means the server did not answer as an IMAP server does.
	ErrProtocol = errors.New("imap: server did not answer as an IMAP server")
)

// lexer reads the syntax of server responses (RFC 3501 section 9) from a
// buffered stream, counting what it reads against its bounds.
type lexer struct {
	r *bufio.Reader
	// line is the text budget of one response, long that of a SEARCH or
	// ESEARCH response (zero: line); limit is the budget of the response
	// being read and n what was used of it.
	line, long, limit, n int
	// items counts the data items of the response, up to maxItems.
	items int
	// literals is the literal budget of one response (bytes kept); lits
	// what was used of it. A literal over the remaining budget is dropped.
	literals, lits int64
}

// reset starts a new response.
func (l *lexer) reset() { l.n, l.lits, l.items, l.limit = 0, 0, 0, l.line }

// longLine gives the response being read the budget of a UID list.
func (l *lexer) longLine() { l.limit = max(l.line, l.long) }

// item counts one data item against the response's budget.
func (l *lexer) item() error {
	if l.items++; l.items > maxItems {
		return fmt.Errorf("%w: more than %d data items in one response", ErrProtocol, maxItems)
	}
	return nil
}

func (l *lexer) readByte() (byte, error) {
	if l.n >= l.limit {
		return 0, ErrLineTooLong
	}
	c, err := l.r.ReadByte()
	if err != nil {
		return 0, eof(err)
	}
	l.n++
	return c, nil
}

// peek returns the next byte without reading it. It fails as readByte
// does at the end of the budget, so that no loop that peeks before it
// reads can go on past it.
func (l *lexer) peek() (byte, error) {
	if l.n >= l.limit {
		return 0, ErrLineTooLong
	}
	b, err := l.r.Peek(1)
	if err != nil {
		return 0, eof(err)
	}
	return b[0], nil
}

// eof makes an end of stream inside a response an unexpected one.
func eof(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// sp reads one space.
func (l *lexer) sp() error {
	c, err := l.readByte()
	if err != nil {
		return err
	}
	if c != ' ' {
		return fmt.Errorf("%w: want a space, got %q", ErrProtocol, c)
	}
	return nil
}

// atEOL reports whether the next bytes end the line.
func (l *lexer) atEOL() (bool, error) {
	c, err := l.peek()
	if err != nil {
		return false, err
	}
	return c == '\r' || c == '\n', nil
}

// eol reads the end of a line: CRLF, or a bare LF.
func (l *lexer) eol() error {
	c, err := l.readByte()
	if err != nil {
		return err
	}
	if c == '\r' {
		if c, err = l.readByte(); err != nil {
			return err
		}
	}
	if c != '\n' {
		return fmt.Errorf("%w: want the end of the line, got %q", ErrProtocol, c)
	}
	return nil
}

// rest reads the text up to the end of the line, and the end of line.
func (l *lexer) rest() (string, error) {
	var b []byte
	for {
		c, err := l.readByte()
		if err != nil {
			return "", err
		}
		switch c {
		case '\n':
			if n := len(b); n > 0 && b[n-1] == '\r' {
				b = b[:n-1]
			}
			return string(b), nil
		case 0:
			return "", fmt.Errorf("%w: NUL in a line", ErrProtocol)
		}
		b = append(b, c)
	}
}

// skipLine reads and discards the rest of the line, literals included.
func (l *lexer) skipLine() error {
	for {
		end, err := l.atEOL()
		if err != nil {
			return err
		}
		if end {
			return l.eol()
		}
		c, _ := l.peek()
		if c == ' ' {
			l.readByte()
			continue
		}
		if _, err := l.value(0); err != nil {
			return err
		}
	}
}

// isAtomEnd reports whether c ends an atom: a space, a parenthesis, a
// quote, a bracket closing a response code, or a control character.
func isAtomEnd(c byte) bool {
	return c <= ' ' || c == 0x7f || c == '(' || c == ')' || c == '"' || c == ']' || c == '{'
}

// atom reads an atom. Brackets inside it (BODY[HEADER.FIELDS (X)]) and
// a partial <origin> after them belong to it, so a fetch item's name is
// one atom. Bytes above 0x7f are accepted, as servers send 8-bit names.
func (l *lexer) atom() (string, error) {
	var b []byte
	for {
		c, err := l.peek()
		if err != nil {
			return "", err
		}
		if c == '[' {
			sec, err := l.section()
			if err != nil {
				return "", err
			}
			b = append(b, sec...)
			continue
		}
		if isAtomEnd(c) {
			break
		}
		l.readByte()
		b = append(b, c)
	}
	if len(b) == 0 {
		c, _ := l.peek()
		return "", fmt.Errorf("%w: want an atom, got %q", ErrProtocol, c)
	}
	return string(b), nil
}

// section reads "[…]" and an optional "<n>" after it, as raw text: the
// brackets may hold a parenthesized list of header names, quoted or not.
func (l *lexer) section() ([]byte, error) {
	var b []byte
	quoted := false
	for {
		c, err := l.readByte()
		if err != nil {
			return nil, err
		}
		if c == '\r' || c == '\n' || c == 0 {
			return nil, fmt.Errorf("%w: unterminated section", ErrProtocol)
		}
		b = append(b, c)
		switch {
		case quoted && c == '\\':
			e, err := l.readByte()
			if err != nil {
				return nil, err
			}
			b = append(b, e)
		case c == '"':
			quoted = !quoted
		case !quoted && c == ']':
			if p, err := l.peek(); err == nil && p == '<' {
				return l.partial(b)
			}
			return b, nil
		}
	}
}

// partial appends a partial fetch's "<origin>" to b.
func (l *lexer) partial(b []byte) ([]byte, error) {
	l.readByte()
	b = append(b, '<')
	for {
		c, err := l.readByte()
		if err != nil {
			return nil, err
		}
		b = append(b, c)
		switch {
		case c == '>':
			return b, nil
		case c != '.' && (c < '0' || c > '9'):
			return nil, fmt.Errorf("%w: bad partial origin", ErrProtocol)
		}
	}
}

// number reads a number (RFC 3501 number64 at most).
func (l *lexer) number() (uint64, error) {
	a, err := l.atom()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(a, 10, 63)
	if err != nil || a[0] == '+' {
		return 0, fmt.Errorf("%w: want a number, got %q", ErrProtocol, clipText(a))
	}
	return n, nil
}

// nz32 reads a non-zero 32-bit number: a UID, a message number, a
// UIDVALIDITY.
func (l *lexer) nz32() (uint32, error) {
	n, err := l.number()
	if err != nil {
		return 0, err
	}
	if n == 0 || n > 1<<32-1 {
		return 0, fmt.Errorf("%w: number %d out of range", ErrProtocol, n)
	}
	return uint32(n), nil
}

// upper returns s in ASCII upper case.
func upper(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// clipText shortens what the server sent for an error message.
func clipText(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}
