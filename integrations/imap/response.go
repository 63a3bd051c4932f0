package imap

import (
	"fmt"
	"strings"
	"time"
)

// response is one server response (RFC 3501 section 7), parsed as far as
// the client uses it; other untagged data is read and dropped.
type response struct {
	// Tag is "*" for untagged data, "+" for a continuation request, or the
	// tag of the command the response completes.
	Tag string
	// Status is OK, NO, BAD, BYE or PREAUTH; empty for continuation
	// requests and untagged data.
	Status string
	// Code is the response code of a status ("UIDVALIDITY", "ALERT"),
	// upper case, and CodeArg what follows it inside the brackets.
	Code, CodeArg string
	// Text is the human-readable text of a status or continuation.
	Text string
	// Kind names untagged data, upper case: EXISTS, EXPUNGE, FETCH,
	// CAPABILITY, LIST, SEARCH, ESEARCH, FLAGS, or what the server sent.
	Kind string
	// Num is the number before EXISTS, EXPUNGE, RECENT or FETCH.
	Num uint32
	// Caps are the capabilities of CAPABILITY data or a CAPABILITY code.
	Caps []string
	// Mailbox is LIST data.
	Mailbox *Mailbox
	// Fetch is FETCH data.
	Fetch *fetchData
	// UIDs are SEARCH data, or ESEARCH's ALL, as ranges.
	UIDs UIDSet
}

// fetchData is what a FETCH response says of one message.
type fetchData struct {
	UID   uint32
	Size  int64 // RFC822.SIZE; -1 if absent
	Flags []string
	Date  time.Time // INTERNALDATE; zero if absent
	// Body is BODY[] (or RFC822, BINARY[]) and Header a header section
	// (BODY[HEADER…], RFC822.HEADER); nil if absent or NIL.
	Body, Header []byte
	// BodyDropped is the size of a body over the reader's literal budget,
	// read and thrown away; zero otherwise.
	BodyDropped int64
}

// readResponse reads one response. The lexer's budgets are per response.
func readResponse(l *lexer) (response, error) {
	l.reset()
	tag, err := l.tag()
	if err != nil {
		return response{}, err
	}
	switch tag {
	case "+":
		r := response{Tag: "+"}
		if end, err := l.atEOL(); err != nil || end {
			return r, firstErr(err, l.eol())
		}
		if err := l.sp(); err != nil {
			return response{}, err
		}
		r.Text, err = l.rest()
		return r, err
	case "*":
		if err := l.sp(); err != nil {
			return response{}, err
		}
		return untagged(l)
	}
	if err := l.sp(); err != nil {
		return response{}, err
	}
	word, err := l.atom()
	if err != nil {
		return response{}, err
	}
	r := response{Tag: tag, Status: upper(word)}
	switch r.Status {
	case "OK", "NO", "BAD":
	default:
		return response{}, fmt.Errorf("%w: tagged %s", ErrProtocol, clipText(word))
	}
	return r, l.respText(&r)
}

// tag reads a response's tag: "*", "+" or a command tag (one or more
// ASTRING-CHARs other than '+', RFC 3501 section 9).
func (l *lexer) tag() (string, error) {
	if _, err := l.r.Peek(1); err != nil {
		return "", err // io.EOF: a clean end of stream between responses
	}
	var b []byte
	for {
		c, err := l.peek()
		if err != nil {
			return "", err
		}
		if c == ' ' || c == '\r' || c == '\n' {
			break
		}
		l.readByte()
		b = append(b, c)
		if len(b) > 64 {
			return "", fmt.Errorf("%w: over-long tag", ErrProtocol)
		}
	}
	s := string(b)
	if s == "*" || s == "+" || validTag(s) {
		return s, nil
	}
	return "", fmt.Errorf("%w: bad tag %s", ErrProtocol, clipText(s))
}

// validTag reports whether s is a command tag.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`(){%*"\+`, c) >= 0 {
			return false
		}
	}
	return true
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// untagged reads the rest of an untagged response, after "* ".
func untagged(l *lexer) (response, error) {
	r := response{Tag: "*"}
	c, err := l.peek()
	if err != nil {
		return r, err
	}
	if c >= '0' && c <= '9' {
		n, err := l.number()
		if err != nil {
			return r, err
		}
		if n > 1<<32-1 {
			return r, fmt.Errorf("%w: message number out of range", ErrProtocol)
		}
		r.Num = uint32(n)
		if err := l.sp(); err != nil {
			return r, err
		}
		kind, err := l.atom()
		if err != nil {
			return r, err
		}
		r.Kind = upper(kind)
		if r.Kind == "FETCH" {
			if err := l.sp(); err != nil {
				return r, err
			}
			r.Fetch, err = l.fetch()
			if err != nil {
				return r, err
			}
		}
		return r, l.skipLine()
	}
	word, err := l.atom()
	if err != nil {
		return r, err
	}
	switch w := upper(word); w {
	case "OK", "NO", "BAD", "BYE", "PREAUTH":
		r.Status = w
		return r, l.respText(&r)
	case "CAPABILITY":
		r.Kind = w
		r.Caps, err = l.atoms()
		return r, err
	case "LIST", "LSUB", "XLIST":
		r.Kind = "LIST"
		if err := l.sp(); err != nil {
			return r, err
		}
		r.Mailbox, err = l.mailbox()
		if err != nil {
			return r, err
		}
		return r, l.skipLine()
	case "SEARCH":
		r.Kind = w
		l.longLine()
		r.UIDs, err = l.search()
		return r, err
	case "ESEARCH":
		r.Kind = w
		l.longLine()
		r.UIDs, err = l.esearch()
		return r, err
	default:
		r.Kind = w
		return r, l.skipLine()
	}
}

// respText reads resp-text after a status word: an optional " [CODE arg]"
// and the human-readable text.
func (l *lexer) respText(r *response) error {
	if end, err := l.atEOL(); err != nil || end {
		return firstErr(err, l.eol())
	}
	if err := l.sp(); err != nil {
		return err
	}
	if c, err := l.peek(); err != nil {
		return err
	} else if c == '[' {
		l.readByte()
		code, err := l.atom()
		if err != nil {
			return err
		}
		r.Code = upper(code)
		var arg []byte
		for {
			c, err := l.readByte()
			if err != nil {
				return err
			}
			if c == ']' {
				break
			}
			if c == '\r' || c == '\n' || c == 0 {
				return fmt.Errorf("%w: unterminated response code", ErrProtocol)
			}
			arg = append(arg, c)
		}
		r.CodeArg = strings.TrimSpace(string(arg))
		if r.Code == "CAPABILITY" {
			r.Caps = strings.Fields(r.CodeArg)
		}
		if c, err := l.peek(); err == nil && c == ' ' {
			l.readByte()
		}
	}
	var err error
	r.Text, err = l.rest()
	return err
}

// atoms reads " atom" until the end of the line.
func (l *lexer) atoms() ([]string, error) {
	var out []string
	for {
		end, err := l.atEOL()
		if err != nil {
			return nil, err
		}
		if end {
			return out, l.eol()
		}
		if err := l.sp(); err != nil {
			return nil, err
		}
		if end, _ := l.atEOL(); end { // a trailing space, as some servers send
			continue
		}
		a, err := l.atom()
		if err != nil {
			return nil, err
		}
		if len(out) < 1000 {
			out = append(out, a)
		}
	}
}

// printable returns the server's text fit for an error message: printable
// ASCII only, at most 200 bytes.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 200; i++ {
		if c := s[i]; c >= ' ' && c < 0x7f {
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
