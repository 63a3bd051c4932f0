package imap

import (
	"fmt"
	"strings"
	"time"
)

// mailbox reads LIST data: (attributes) delimiter name.
func (l *lexer) mailbox() (*Mailbox, error) {
	attrs, err := l.value(0)
	if err != nil {
		return nil, err
	}
	if attrs.kind != kList {
		return nil, fmt.Errorf("%w: LIST without attributes", ErrProtocol)
	}
	m := &Mailbox{}
	for _, a := range attrs.list {
		if a.kind != kAtom {
			return nil, fmt.Errorf("%w: LIST attribute is not an atom", ErrProtocol)
		}
		m.Attrs = append(m.Attrs, a.str)
	}
	if err := l.sp(); err != nil {
		return nil, err
	}
	delim, err := l.value(0)
	if err != nil {
		return nil, err
	}
	switch {
	case delim.kind == kString && len(delim.text()) == 1:
		m.Delim = delim.text()
	case delim.kind != kNil:
		return nil, fmt.Errorf("%w: LIST delimiter", ErrProtocol)
	}
	if err := l.sp(); err != nil {
		return nil, err
	}
	name, err := l.value(0)
	if err != nil {
		return nil, err
	}
	if (name.kind != kAtom && name.kind != kString) || name.dropped || name.text() == "" {
		return nil, fmt.Errorf("%w: LIST mailbox name", ErrProtocol)
	}
	m.Name = name.text()
	if strings.EqualFold(m.Name, "INBOX") {
		m.Name = "INBOX"
	}
	return m, nil
}

// search reads SEARCH data: " n" until the end of the line (a trailing
// "(MODSEQ n)" of RFC 7162 is skipped).
func (l *lexer) search() (UIDSet, error) {
	var b setBuilder
	for {
		end, err := l.atEOL()
		if err != nil {
			return nil, err
		}
		if end {
			return b.set(), l.eol()
		}
		if err := l.sp(); err != nil {
			return nil, err
		}
		c, err := l.peek()
		if err != nil {
			return nil, err
		}
		if c == '(' {
			if _, err := l.value(0); err != nil {
				return nil, err
			}
			continue
		}
		if c == '\r' || c == '\n' {
			continue
		}
		n, err := l.nz32()
		if err != nil {
			return nil, err
		}
		b.add(n)
	}
}

// esearch reads ESEARCH data (RFC 4731): an optional (TAG "x"), an
// optional UID, then name value pairs, of which ALL is kept.
func (l *lexer) esearch() (UIDSet, error) {
	var set UIDSet
	for {
		end, err := l.atEOL()
		if err != nil {
			return nil, err
		}
		if end {
			return set, l.eol()
		}
		if err := l.sp(); err != nil {
			return nil, err
		}
		v, err := l.value(0)
		if err != nil {
			return nil, err
		}
		if v.kind != kAtom || upper(v.str) == "UID" {
			continue
		}
		if err := l.sp(); err != nil {
			return nil, err
		}
		arg, err := l.value(0)
		if err != nil {
			return nil, err
		}
		if upper(v.str) == "ALL" {
			if arg.kind != kAtom {
				return nil, fmt.Errorf("%w: ESEARCH ALL", ErrProtocol)
			}
			if set, err = ParseUIDSet(arg.str); err != nil {
				return nil, fmt.Errorf("%w: ESEARCH ALL: %w", ErrProtocol, err)
			}
		}
	}
}

// fetch reads the parenthesized list of a FETCH response.
func (l *lexer) fetch() (*fetchData, error) {
	v, err := l.value(0)
	if err != nil {
		return nil, err
	}
	if v.kind != kList || len(v.list)%2 != 0 {
		return nil, fmt.Errorf("%w: FETCH data is not name value pairs", ErrProtocol)
	}
	f := &fetchData{Size: -1}
	for i := 0; i < len(v.list); i += 2 {
		name, val := v.list[i], v.list[i+1]
		if name.kind != kAtom {
			return nil, fmt.Errorf("%w: FETCH item name", ErrProtocol)
		}
		item := upper(name.str)
		if err := f.set(item, val); err != nil {
			return nil, fmt.Errorf("%w: FETCH %s: %w", ErrProtocol, clipText(item), err)
		}
	}
	return f, nil
}

// set records one FETCH item.
func (f *fetchData) set(item string, v value) error {
	switch {
	case item == "UID":
		n, err := atomNumber(v)
		if err != nil || n == 0 || n > 1<<32-1 {
			return fmt.Errorf("bad UID")
		}
		f.UID = uint32(n)
	case item == "RFC822.SIZE":
		n, err := atomNumber(v)
		if err != nil {
			return err
		}
		f.Size = int64(n)
	case item == "FLAGS":
		if v.kind != kList {
			return fmt.Errorf("FLAGS is not a list")
		}
		for _, fl := range v.list {
			if fl.kind == kAtom {
				f.Flags = append(f.Flags, fl.str)
			}
		}
	case item == "INTERNALDATE":
		if v.kind != kString {
			return fmt.Errorf("INTERNALDATE is not a string")
		}
		f.Date = internalDate(v.text())
	case item == "RFC822.HEADER" || strings.HasPrefix(item, "BODY[HEADER") || strings.HasPrefix(item, "BINARY[HEADER"):
		if v.kind == kString && !v.dropped {
			f.Header = v.bytes()
		}
	case item == "RFC822" || strings.HasPrefix(item, "BODY[]") || strings.HasPrefix(item, "BINARY[]"):
		switch {
		case v.kind == kString && v.dropped:
			f.BodyDropped = v.size
		case v.kind == kString:
			f.Body = v.bytes()
		case v.kind != kNil:
			return fmt.Errorf("body is not a string")
		}
	}
	return nil
}

// atomNumber reads a number that a list held as an atom.
func atomNumber(v value) (uint64, error) {
	if v.kind != kAtom || v.str == "" || len(v.str) > 19 {
		return 0, fmt.Errorf("not a number")
	}
	var n uint64
	for i := 0; i < len(v.str); i++ {
		c := v.str[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a number")
		}
		n = n*10 + uint64(c-'0')
	}
	return n, nil
}

// internalDate parses an INTERNALDATE ("17-Jul-1996 02:44:25 -0700", the
// day possibly space-padded); garbage gives the zero time.
func internalDate(s string) time.Time {
	t, err := time.Parse("_2-Jan-2006 15:04:05 -0700", strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}
