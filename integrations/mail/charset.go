package mail

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Character sets Parse decodes. Bodies and encoded words in any other
// charset keep their bytes as they are, with invalid UTF-8 replaced.
const (
	charsetUTF8    = "utf-8"
	charsetASCII   = "us-ascii"
	charsetCP1252  = "windows-1252"
	charsetUnknown = ""
)

// charsetName maps a charset label to one of the names above.
// ISO-8859-1 is read as Windows-1252, its superset, as browsers do
// (WHATWG Encoding): mail labelled Latin-1 often holds curly quotes.
func charsetName(label string) string {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(label), `"'`)) {
	case "utf-8", "utf8":
		return charsetUTF8
	case "us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "":
		return charsetASCII
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1", "cp819",
		"windows-1252", "cp1252", "x-cp1252":
		return charsetCP1252
	}
	return charsetUnknown
}

// charsetReader is the WordDecoder's hook for the charsets it does not know
// itself (it decodes UTF-8, US-ASCII and ISO-8859-1 on its own). Unknown
// charsets pass their bytes through instead of failing the whole field.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	if charsetName(label) != charsetCP1252 {
		return r, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxRawHeader))
	if err != nil {
		return nil, err
	}
	return strings.NewReader(DecodeCP1252(b)), nil
}

// decodeText turns the bytes of a text part in charset label into valid
// UTF-8. Text without a charset, or labelled US-ASCII, that is not valid
// UTF-8 is taken as Windows-1252: mislabelled 8-bit mail is most often that.
func decodeText(b []byte, label string) string {
	switch charsetName(label) {
	case charsetASCII:
		if utf8.Valid(b) {
			return string(b)
		}
		return DecodeCP1252(b)
	case charsetCP1252:
		return DecodeCP1252(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
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

// DecodeCP1252 decodes Windows-1252 (and so Latin-1, which it contains
// but for 0x80-0x9F) into UTF-8; the file extractors use it too.
func DecodeCP1252(b []byte) string {
	out := make([]byte, 0, len(b)+len(b)/4)
	for _, c := range b {
		switch {
		case c < 0x80:
			out = append(out, c)
		case c < 0xA0:
			out = utf8.AppendRune(out, cp1252High[c-0x80])
		default:
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return string(out)
}
