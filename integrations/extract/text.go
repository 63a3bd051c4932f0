package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"searchsvc/integrations/mail"
)

// Byte order marks.
var (
	utf8BOM    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// decodeText turns the bytes of a text file into UTF-8: a BOM says UTF-8
// or UTF-16; without one, valid UTF-8 is taken as it is and anything else
// as Windows-1252, the superset of Latin-1 that files called Latin-1
// mostly are.
func decodeText(b []byte) string {
	switch {
	case bytes.HasPrefix(b, utf8BOM):
		return string(b[len(utf8BOM):]) // invalid bytes become U+FFFD when written
	case bytes.HasPrefix(b, bomUTF16LE):
		return decodeUTF16(b[2:], false)
	case bytes.HasPrefix(b, bomUTF16BE):
		return decodeUTF16(b[2:], true)
	case utf8.Valid(b):
		return string(b)
	}
	return mail.DecodeCP1252(b)
}

// decodeUTF16 decodes UTF-16 without its BOM; an odd last byte is dropped
// and unpaired surrogates become U+FFFD.
func decodeUTF16(b []byte, bigEndian bool) string {
	units := make([]uint16, len(b)/2)
	for i := range units {
		if bigEndian {
			units[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			units[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	return string(utf16.Decode(units))
}

// plain writes a txt or md file as it is, keeping its spacing.
func plain(data []byte, out *textBuf) error {
	out.raw = true
	return out.WriteString(decodeText(data))
}

// csvText writes a CSV file (RFC 4180) one record per line, fields
// separated by a space, quotes removed ("" is a quote). It reads in one
// pass without holding a record, so a line of millions of fields costs
// no more than its bytes; a quote left open runs to the end, line breaks
// in it read as spaces.
func csvText(data []byte, out *textBuf) error {
	text := decodeText(data)
	quoted := false
	start := 0 // of the run of plain characters still to write
	flush := func(end int) error {
		err := out.WriteString(text[start:end])
		start = end + 1
		return err
	}
	for i := 0; i < len(text); i++ {
		var err error
		switch c := text[i]; {
		case c == '"':
			if err = flush(i); err != nil {
				break
			}
			if quoted && i+1 < len(text) && text[i+1] == '"' {
				err = out.WriteString(`"`)
				i++
				start = i + 1
			} else {
				quoted = !quoted
			}
		case c == ',' && !quoted:
			if err = flush(i); err == nil {
				err = out.space()
			}
		case (c == '\n' || c == '\r') && quoted:
			if err = flush(i); err == nil {
				err = out.space()
			}
		}
		if err != nil {
			return err
		}
	}
	return out.WriteString(text[start:])
}

// jsonText writes the string values of a JSON document, one per line;
// keys, numbers and literals are structure, not text.
func jsonText(data []byte, out *textBuf, lim Limits) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(decodeText(data))))
	dec.UseNumber()
	// frames are the open objects and arrays; in an object, key says the
	// next token is a key.
	type frame struct{ object, key bool }
	var frames []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF && len(frames) > 0 {
			err = io.ErrUnexpectedEOF
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: json: %w", ErrMalformed, err)
		}
		var top *frame
		if len(frames) > 0 {
			top = &frames[len(frames)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			frames = frames[:len(frames)-1]
			continue
		}
		if top != nil && top.object {
			if top.key {
				top.key = false
				continue
			}
			top.key = true // after this value, a key
		}
		switch v := tok.(type) {
		case json.Delim:
			if len(frames) >= lim.MaxXMLDepth {
				return fmt.Errorf("%w: json nested deeper than %d", ErrLimit, lim.MaxXMLDepth)
			}
			frames = append(frames, frame{object: v == '{', key: v == '{'})
		case string:
			if err := out.WriteString(v); err != nil {
				return err
			}
			if err := out.newline(); err != nil {
				return err
			}
		}
	}
}

// htmlText writes the text of an HTML document. Its charset is the BOM's,
// else a meta charset naming UTF-8 or Latin-1, else UTF-8 if valid, else
// Windows-1252.
func htmlText(data []byte, out *textBuf) error {
	var s string
	switch metaCharset(data) {
	case "utf-8":
		s = string(data)
	case "windows-1252":
		s = mail.DecodeCP1252(data)
	default:
		s = decodeText(data)
	}
	return out.WriteString(mail.HTMLText(s))
}

// metaCharset finds charset= in the first KiB of an HTML document without
// a BOM and returns "utf-8", "windows-1252" or "" (not said, or another).
func metaCharset(data []byte) string {
	if bytes.HasPrefix(data, utf8BOM) || bytes.HasPrefix(data, bomUTF16LE) || bytes.HasPrefix(data, bomUTF16BE) {
		return ""
	}
	head := bytes.ToLower(data[:min(len(data), 1024)])
	i := bytes.Index(head, []byte("charset="))
	if i < 0 {
		return ""
	}
	v := bytes.TrimLeft(head[i+len("charset="):], `"' `)
	end := bytes.IndexAny(v, `"'; />`)
	if end >= 0 {
		v = v[:end]
	}
	switch string(v) {
	case "utf-8", "utf8":
		return "utf-8"
	case "iso-8859-1", "latin1", "windows-1252", "cp1252", "us-ascii":
		return "windows-1252"
	}
	return ""
}

// emlText writes a message's subject, sender and body text, read by the
// mail package as for a synced email.
func emlText(data []byte, out *textBuf) error {
	m, err := mail.Parse(data)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	for _, s := range []string{m.Subject, m.From, m.Text} {
		if s == "" {
			continue
		}
		if err := out.WriteString(s); err != nil {
			return err
		}
		if err := out.newline(); err != nil {
			return err
		}
	}
	return nil
}
