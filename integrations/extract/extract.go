// Package extract turns the bytes of a synced file into the plain text the
// search index keeps: txt, md, csv, json, html, eml, docx, xlsx, pptx, odt
// and simple PDF, with the standard library only.
//
// Files are untrusted. Every size is bounded by Limits: the input, what a
// zip entry or a PDF stream may inflate to (each and in total), the zip
// entries, XML nesting and tokens, PDF objects, and the text returned. A
// file that is malformed, hostile or of another type never panics and never
// fails a sync: its Result has no text and an Err saying why, and the
// caller keeps the file's name and path only.
package extract

import (
	"bytes"
	"errors"
	"io"
	"path"
	"strings"
	"unicode/utf8"
)

// Type is a file type Extract knows.
type Type string

// The types Extract reads. Other is everything else: name only.
const (
	TypeText  Type = "txt"
	TypeMD    Type = "md"
	TypeCSV   Type = "csv"
	TypeJSON  Type = "json"
	TypeHTML  Type = "html"
	TypeEML   Type = "eml"
	TypeDOCX  Type = "docx"
	TypeXLSX  Type = "xlsx"
	TypePPTX  Type = "pptx"
	TypeODT   Type = "odt"
	TypePDF   Type = "pdf"
	TypeOther Type = ""
)

// Why a Result has no text. Each is wrapped with details in Result.Err.
var (
	// ErrUnsupported: a type Extract does not read (an image, an archive).
	ErrUnsupported = errors.New("extract: file type not supported")
	// ErrTooLarge: the input is over Limits.MaxInput; it was not read.
	ErrTooLarge = errors.New("extract: file over the size cap")
	// ErrLimit: the file inflates, nests or counts past a limit (a zip
	// bomb, XML nested thousands deep); reading stopped there.
	ErrLimit = errors.New("extract: file exceeds an extraction limit")
	// ErrMalformed: the file is not what its type says, or is damaged.
	ErrMalformed = errors.New("extract: malformed file")
	// ErrNoText: the file is well formed but holds no text Extract can read
	// (an encrypted PDF, a scanned one, fonts without a Unicode map).
	ErrNoText = errors.New("extract: no readable text")
)

// Limits bound what one extraction may cost. Zero fields take the
// defaults of DefaultLimits.
type Limits struct {
	// MaxInput is the largest file read, in bytes (10 MiB).
	MaxInput int64
	// MaxText is the most text returned, in bytes (1 MiB); longer text
	// is cut at a character boundary and Result.Truncated is set.
	MaxText int
	// MaxInflate is the most one zip entry or PDF stream may decompress
	// to, in bytes (16 MiB), and MaxInflateTotal the most all of one
	// file's entries or streams may (64 MiB).
	MaxInflate      int64
	MaxInflateTotal int64
	// MaxEntries is the most entries a zip archive may list (10,000).
	MaxEntries int
	// MaxXMLDepth is the deepest XML nesting read (256), and MaxXMLTokens
	// the most XML tokens of one file (4 Mi).
	MaxXMLDepth  int
	MaxXMLTokens int
	// MaxObjects is the most objects a PDF may hold (100,000).
	MaxObjects int
}

// DefaultLimits returns the limits a zero Limits field takes.
func DefaultLimits() Limits {
	return Limits{
		MaxInput:        10 << 20,
		MaxText:         1 << 20,
		MaxInflate:      16 << 20,
		MaxInflateTotal: 64 << 20,
		MaxEntries:      10000,
		MaxXMLDepth:     256,
		MaxXMLTokens:    4 << 20,
		MaxObjects:      100000,
	}
}

// withDefaults fills l's zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxInput <= 0 {
		l.MaxInput = d.MaxInput
	}
	if l.MaxText <= 0 {
		l.MaxText = d.MaxText
	}
	if l.MaxInflate <= 0 {
		l.MaxInflate = d.MaxInflate
	}
	if l.MaxInflateTotal <= 0 {
		l.MaxInflateTotal = d.MaxInflateTotal
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxXMLDepth <= 0 {
		l.MaxXMLDepth = d.MaxXMLDepth
	}
	if l.MaxXMLTokens <= 0 {
		l.MaxXMLTokens = d.MaxXMLTokens
	}
	if l.MaxObjects <= 0 {
		l.MaxObjects = d.MaxObjects
	}
	return l
}

// Result is what Extract made of one file.
type Result struct {
	// Type is the type the file was read as; TypeOther when none fits.
	Type Type
	// Text is the file's text, valid UTF-8, at most Limits.MaxText bytes;
	// empty when Err is set.
	Text string
	// Truncated says Text stopped at Limits.MaxText.
	Truncated bool
	// Err says why there is no text: it wraps one of ErrUnsupported,
	// ErrTooLarge, ErrLimit, ErrMalformed or ErrNoText. Its text names no
	// content of the file.
	Err error
}

// Extractor extracts text within its limits. It holds no state between
// calls and is safe for concurrent use.
type Extractor struct {
	limits Limits
}

// New returns an Extractor with limits, zero fields taking the defaults.
func New(limits Limits) *Extractor {
	return &Extractor{limits: limits.withDefaults()}
}

// Limits returns the extractor's limits, defaults filled in.
func (x *Extractor) Limits() Limits { return x.limits }

// extensions maps a lower-case file extension to its type.
var extensions = map[string]Type{
	".txt": TypeText, ".text": TypeText, ".log": TypeText,
	".md": TypeMD, ".markdown": TypeMD,
	".csv":  TypeCSV,
	".json": TypeJSON,
	".html": TypeHTML, ".htm": TypeHTML, ".xhtml": TypeHTML,
	".eml":  TypeEML,
	".docx": TypeDOCX, ".xlsx": TypeXLSX, ".pptx": TypePPTX, ".odt": TypeODT,
	".pdf": TypePDF,
}

// TypeOf returns the type a file name's extension says, TypeOther if none.
// A caller can skip downloading a file of TypeOther: Extract would sniff
// its content, but what it finds in a file named otherwise is rare.
func TypeOf(name string) Type {
	return extensions[strings.ToLower(path.Ext(name))]
}

// Extract reads data, the content of the file name (a base name or a
// path), and returns its text. The type comes from the extension, checked
// against the content: a ".pdf" that does not start like a PDF is
// malformed, and a name without a known extension is sniffed.
func (x *Extractor) Extract(name string, data []byte) Result {
	typ := TypeOf(name)
	if int64(len(data)) > x.limits.MaxInput {
		return Result{Type: typ, Err: ErrTooLarge}
	}
	if typ == TypeOther {
		typ = sniff(data, x.limits)
	}
	res := Result{Type: typ}
	if typ == TypeOther {
		res.Err = ErrUnsupported
		return res
	}
	out := newTextBuf(x.limits.MaxText)
	var err error
	switch typ {
	case TypeText, TypeMD:
		err = plain(data, out)
	case TypeCSV:
		err = csvText(data, out)
	case TypeJSON:
		err = jsonText(data, out, x.limits)
	case TypeHTML:
		err = htmlText(data, out)
	case TypeEML:
		err = emlText(data, out)
	case TypeDOCX, TypeXLSX, TypePPTX, TypeODT:
		err = x.office(typ, data, out)
	case TypePDF:
		err = x.pdf(data, out)
	}
	if err != nil && !errors.Is(err, errFull) {
		res.Err = err
		return res
	}
	res.Text, res.Truncated = out.String(), out.full
	if res.Text == "" {
		res.Err = ErrNoText
	}
	return res
}

// ExtractReader is Extract on what r holds, reading at most
// Limits.MaxInput bytes: a longer input gives ErrTooLarge without reading
// the rest.
func (x *Extractor) ExtractReader(name string, r io.Reader) Result {
	data, err := io.ReadAll(io.LimitReader(r, x.limits.MaxInput+1))
	if err != nil {
		return Result{Type: TypeOf(name), Err: errors.Join(ErrMalformed, err)}
	}
	return x.Extract(name, data)
}

// sniff guesses the type of data from its first bytes.
func sniff(data []byte, lim Limits) Type {
	head := data[:min(len(data), 512)]
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return TypePDF
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return zipType(data, lim)
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	lower := bytes.ToLower(trimmed)
	switch {
	case bytes.HasPrefix(lower, []byte("<!doctype html")), bytes.HasPrefix(lower, []byte("<html")):
		return TypeHTML
	case len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '['):
		return TypeJSON
	case looksLikeText(head):
		return TypeText
	}
	return TypeOther
}

// looksLikeText reports whether b reads as text: UTF-16 with a BOM, or
// no NUL and few control characters.
func looksLikeText(b []byte) bool {
	if bytes.HasPrefix(b, bomUTF16LE) || bytes.HasPrefix(b, bomUTF16BE) {
		return true
	}
	if len(b) == 0 {
		return false
	}
	control := 0
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r == 0 {
			return false
		}
		if r < ' ' && r != '\n' && r != '\r' && r != '\t' && r != '\f' {
			control++
		}
	}
	return control < 4
}
