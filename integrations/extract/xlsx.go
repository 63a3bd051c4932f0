package extract

import (
	"archive/zip"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// xlsx writes a workbook's cells, one row per line and cells separated by
// a space, sheet after sheet. Strings live in xl/sharedStrings.xml, which
// cells point into by index; the table is held while the sheets are read,
// bounded by the inflate limit of its entry.
func (x *Extractor) xlsx(a *archive, tokens *int, out *textBuf) error {
	shared, err := x.sharedStrings(a, tokens)
	if err != nil {
		return err
	}
	sheets := numbered(a, "xl/worksheets/sheet", ".xml")
	if len(sheets) == 0 {
		return fmt.Errorf("%w: no worksheets", ErrMalformed)
	}
	for _, name := range sheets {
		if err := x.sheet(a, a.file(name), shared, tokens, out); err != nil {
			return err
		}
		if err := out.newline(); err != nil {
			return err
		}
	}
	return nil
}

// maxSharedStrings bounds the shared string table's index, 4 bytes each.
const maxSharedStrings = 1 << 20

// sharedTable is the shared string table in one buffer: string i is
// buf[ends[i-1]:ends[i]]. An empty <si/> costs 4 bytes, not a string header.
type sharedTable struct {
	buf  []byte
	ends []uint32
}

func (t *sharedTable) get(i int) string {
	if t == nil || i < 0 || i >= len(t.ends) {
		return ""
	}
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	return string(t.buf[start:t.ends[i]])
}

// sharedStrings reads the shared string table: each <si> is one string,
// its <t> runs joined; phonetic runs (<rPh>) are not part of it.
func (x *Extractor) sharedStrings(a *archive, tokens *int) (*sharedTable, error) {
	f := a.file("xl/sharedStrings.xml")
	if f == nil {
		return nil, nil // a workbook of numbers only has none
	}
	rc, err := a.open(f)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	p := newXMLPart(rc, x.limits, tokens)
	var (
		shared      sharedTable
		inT, inPhon bool
		inSI        bool
	)
	for {
		tok, err := p.next()
		if err == io.EOF {
			return &shared, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				inSI = true
			case "t":
				inT = true
			case "rPh":
				inPhon = true
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				if inSI {
					if len(shared.ends) >= maxSharedStrings {
						return nil, fmt.Errorf("%w: more than %d shared strings", ErrLimit, maxSharedStrings)
					}
					shared.ends = append(shared.ends, uint32(len(shared.buf)))
				}
				inSI = false
			case "t":
				inT = false
			case "rPh":
				inPhon = false
			}
		case xml.CharData:
			if inSI && inT && !inPhon {
				shared.buf = append(shared.buf, t...)
			}
		}
	}
}

// sheet writes one worksheet. A cell's type says where its text is: t="s"
// an index into shared, t="inlineStr" its own <is><t>, anything else
// (numbers, booleans, formula strings) its <v> as written.
func (x *Extractor) sheet(a *archive, f *zip.File, shared *sharedTable, tokens *int, out *textBuf) error {
	rc, err := a.open(f)
	if err != nil {
		return err
	}
	defer rc.Close()
	p := newXMLPart(rc, x.limits, tokens)
	var (
		cellType  string
		inV, inIS bool
		inT       bool
		value     strings.Builder
	)
	for {
		tok, err := p.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "c":
				cellType = ""
				for _, at := range t.Attr {
					if at.Name.Local == "t" {
						cellType = at.Value
					}
				}
				value.Reset()
			case "v":
				inV = true
			case "is":
				inIS = true
			case "t":
				inT = true
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v":
				inV = false
			case "is":
				inIS = false
			case "t":
				inT = false
			case "c":
				if err := out.WriteString(cellText(cellType, value.String(), shared)); err != nil {
					return err
				}
				err = out.space()
			case "row":
				err = out.newline()
			}
			if err != nil {
				return err
			}
		case xml.CharData:
			if value.Len() > x.limits.MaxText {
				continue // the cell is past what could be written anyway
			}
			if (cellType == "inlineStr" && inIS && inT) || (cellType != "inlineStr" && inV) {
				value.Write(t)
			}
		}
	}
}

// cellText is what a cell of type typ with value v reads as.
func cellText(typ, v string, shared *sharedTable) string {
	if typ != "s" {
		return v
	}
	i, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return ""
	}
	return shared.get(i)
}
