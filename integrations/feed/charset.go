package feed

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"searchsvc/integrations/textguard"
)

// charsetReader lets encoding/xml read the single-byte encodings feeds
// still use. ISO-8859-1 is read as Windows-1252, its superset, as browsers
// do (WHATWG Encoding); US-ASCII is a subset of both.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8":
		return r, nil
	case "us-ascii", "ascii", "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1", "windows-1252", "cp1252":
		return &cp1252Reader{r: r}, nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", strings.ToValidUTF8(textguard.Truncate(label, 40), ""))
}

// cp1252High maps bytes 0x80-0x9F of Windows-1252; the five it leaves
// undefined map to the same C1 code points, as WHATWG does. Bytes 0xA0-0xFF
// are Latin-1 and map to themselves.
var cp1252High = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// cp1252Reader decodes Windows-1252 into UTF-8.
type cp1252Reader struct {
	r       io.Reader
	in      [2048]byte
	out     []byte
	pending []byte
}

func (c *cp1252Reader) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		n, err := c.r.Read(c.in[:])
		if n == 0 {
			return 0, err
		}
		c.out = c.out[:0]
		for _, b := range c.in[:n] {
			r := rune(b)
			if b >= 0x80 && b < 0xA0 {
				r = cp1252High[b-0x80]
			}
			c.out = utf8.AppendRune(c.out, r)
		}
		c.pending = c.out
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
