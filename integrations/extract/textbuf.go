package extract

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// errFull stops an extractor once its text reached Limits.MaxText; it is
// not a failure: the text so far is kept, marked Truncated.
var errFull = errors.New("extract: text cap reached")

// textBuf collects extracted text up to a cap. In tidy mode (every format
// but plain text) it collapses runs of white space to one space, trims
// lines and drops empty ones, so that markup's layout does not leak into
// the text; in raw mode it keeps the text's own spacing. Either way
// control characters other than tab and newline become spaces and the
// result is valid UTF-8.
type textBuf struct {
	b    strings.Builder
	max  int
	full bool
	raw  bool

	lineStart    bool // nothing written on the current line yet (tidy)
	pendingSpace bool
	pendingLine  bool
}

func newTextBuf(max int) *textBuf { return &textBuf{max: max, lineStart: true} }

// String returns the text so far, without trailing white space.
func (t *textBuf) String() string {
	return strings.TrimRightFunc(t.b.String(), unicode.IsSpace)
}

// WriteString adds s. It returns errFull once the cap is reached; what
// did not fit is dropped.
func (t *textBuf) WriteString(s string) error {
	if t.full {
		return errFull
	}
	for _, r := range s {
		if err := t.rune(r); err != nil {
			return err
		}
	}
	return nil
}

// space separates words, newline lines.
func (t *textBuf) space() error   { return t.WriteString(" ") }
func (t *textBuf) newline() error { return t.WriteString("\n") }

func (t *textBuf) rune(r rune) error {
	if r == '\r' {
		return nil // CRLF and CR-only line ends: the LF or the next line counts
	}
	if r != '\n' && r != '\t' && (r < ' ' || r >= 0x7f && r < 0xa0) {
		r = ' '
	}
	if t.raw {
		return t.emit(r)
	}
	switch {
	case r == '\n':
		if !t.lineStart {
			t.pendingLine, t.pendingSpace = true, false
		}
		return nil
	case unicode.IsSpace(r):
		if !t.lineStart {
			t.pendingSpace = true
		}
		return nil
	}
	if t.pendingLine {
		if err := t.emit('\n'); err != nil {
			return err
		}
	} else if t.pendingSpace {
		if err := t.emit(' '); err != nil {
			return err
		}
	}
	t.pendingLine, t.pendingSpace, t.lineStart = false, false, false
	return t.emit(r)
}

func (t *textBuf) emit(r rune) error {
	if t.b.Len()+utf8.RuneLen(r) > t.max {
		t.full = true
		return errFull
	}
	t.b.WriteRune(r)
	if r == '\n' {
		t.lineStart = true
	}
	return nil
}
