package extract_test

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"testing"
)

// This file builds the sample files of the tests, fuzz seeds and
// benchmarks: Office and OpenDocument files written with archive/zip from
// minimal hand-written XML, and PDFs written object by object.

type entry struct{ name, body string }

func zipOf(tb testing.TB, entries ...entry) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

const (
	xmlHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
	wNS     = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`
	aNS     = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`
	sNS     = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"`
	odtNS   = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"`
)

// docx builds a Word document of paragraphs, each given as its XML runs.
func docx(tb testing.TB, body string) []byte {
	return zipOf(tb,
		entry{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`},
		entry{"word/document.xml", xmlHead + `<w:document ` + wNS + `><w:body>` + body + `</w:body></w:document>`},
	)
}

func sampleDOCX(tb testing.TB) []byte {
	return docx(tb, `<w:p><w:r><w:t>Quarterly</w:t></w:r><w:r><w:t xml:space="preserve"> report</w:t></w:r></w:p>`+
		`<w:p><w:r><w:t>Caf&#233;</w:t><w:tab/><w:t>menu</w:t><w:br/><w:t>line two</w:t></w:r></w:p>`+
		`<w:p/><w:tbl><w:tr><w:tc><w:p><w:r><w:t>cell</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`)
}

const sampleDOCXText = "Quarterly report\nCafé menu\nline two\ncell"

func sampleXLSX(tb testing.TB) []byte {
	return zipOf(tb,
		entry{"xl/workbook.xml", xmlHead + `<workbook ` + sNS + `/>`},
		entry{"xl/sharedStrings.xml", xmlHead + `<sst ` + sNS + ` count="3" uniqueCount="3">` +
			`<si><t>Name</t></si><si><r><t>Ana</t></r><r><t xml:space="preserve"> Silva</t></r><rPh><t>ana</t></rPh></si><si><t>Total</t></si></sst>`},
		entry{"xl/worksheets/sheet2.xml", xmlHead + `<worksheet ` + sNS + `><sheetData>` +
			`<row r="1"><c r="A1" t="inlineStr"><is><t>second sheet</t></is></c></row></sheetData></worksheet>`},
		entry{"xl/worksheets/sheet1.xml", xmlHead + `<worksheet ` + sNS + `><sheetData>` +
			`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>2</v></c></row>` +
			`<row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2"><v>42.5</v></c><c r="C2" t="s"><v>99</v></c></row>` +
			`</sheetData></worksheet>`},
	)
}

const sampleXLSXText = "Name Total\nAna Silva 42.5\nsecond sheet"

func slide(text string) string {
	return xmlHead + `<p:sld ` + aNS + `><p:cSld><p:spTree><p:sp><p:txBody>` + text + `</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`
}

func samplePPTX(tb testing.TB) []byte {
	return zipOf(tb,
		entry{"ppt/presentation.xml", xmlHead + `<p:presentation ` + aNS + `/>`},
		entry{"ppt/slides/slide10.xml", slide(`<a:p><a:r><a:t>Tenth</a:t></a:r></a:p>`)},
		entry{"ppt/slides/slide2.xml", slide(`<a:p><a:r><a:t>Second</a:t></a:r><a:br/><a:r><a:t>slide</a:t></a:r></a:p>`)},
		entry{"ppt/slides/slide1.xml", slide(`<a:p><a:r><a:t>Title</a:t></a:r></a:p><a:p><a:r><a:t>Bullet one</a:t></a:r></a:p>`)},
		entry{"ppt/slides/_rels/slide1.xml.rels", `<Relationships/>`},
	)
}

const samplePPTXText = "Title\nBullet one\nSecond\nslide\nTenth"

func sampleODT(tb testing.TB) []byte {
	return zipOf(tb,
		entry{"mimetype", "application/vnd.oasis.opendocument.text"},
		entry{"content.xml", xmlHead + `<office:document-content ` + odtNS + `><office:automatic-styles/><office:body><office:text>` +
			`<text:h text:outline-level="1">Minutes</text:h>` +
			`<text:p>Present:<text:s/>Ana<text:tab/>and <text:span>Bo</text:span></text:p>` +
			`<text:p>first<text:line-break/>second</text:p>` +
			`</office:text></office:body></office:document-content>`},
	)
}

const sampleODTText = "Minutes\nPresent: Ana and Bo\nfirst\nsecond"

// pdfBuilder writes a PDF object by object, with a correct xref table.
type pdfBuilder struct {
	buf     bytes.Buffer
	offsets []int
}

func newPDF() *pdfBuilder {
	p := &pdfBuilder{}
	p.buf.WriteString("%PDF-1.4\n%\xE2\xE3\xCF\xD3\n")
	return p
}

// reserve returns the number of an object written later with set.
func (p *pdfBuilder) reserve() int {
	p.offsets = append(p.offsets, 0)
	return len(p.offsets)
}

// set writes object n.
func (p *pdfBuilder) set(n int, body string) {
	p.offsets[n-1] = p.buf.Len()
	fmt.Fprintf(&p.buf, "%d 0 obj\n%s\nendobj\n", n, body)
}

// obj writes the next object (numbered from 1) and returns its number.
func (p *pdfBuilder) obj(body string) int {
	n := p.reserve()
	p.set(n, body)
	return n
}

// stream writes a stream object, Flate-compressed when flate is set.
func (p *pdfBuilder) stream(dict string, data []byte, flate bool) int {
	if flate {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		data = z.Bytes()
		dict += " /Filter /FlateDecode"
	}
	return p.obj(fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data))
}

// finish writes the xref table and the trailer, the catalog being root.
func (p *pdfBuilder) finish(root int, extra string) []byte {
	xref := p.buf.Len()
	fmt.Fprintf(&p.buf, "xref\n0 %d\n0000000000 65535 f \n", len(p.offsets)+1)
	for _, off := range p.offsets {
		fmt.Fprintf(&p.buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&p.buf, "trailer\n<< /Size %d /Root %d 0 R %s >>\nstartxref\n%d\n%%%%EOF\n", len(p.offsets)+1, root, extra, xref)
	return p.buf.Bytes()
}

// simplePDF builds a PDF of pages, each the given content stream, with
// Helvetica as /F1 and, as /F2, a Type0 font whose ToUnicode maps
// two-byte codes.
func simplePDF(tb testing.TB, pages ...string) []byte {
	p := newPDF()
	cmap := `/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
2 beginbfchar
<0001> <0048>
<0002> <00E9>
endbfchar
1 beginbfrange
<0010> <0012> <0061>
endbfrange
1 beginbfrange
<0020> <0021> [<0078> <D83DDE00>]
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end`
	pagesAt := p.reserve()
	catalog := p.obj(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesAt))
	font1 := p.obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	tu := p.stream("", []byte(cmap), true)
	font2 := p.obj(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Noto /Encoding /Identity-H /ToUnicode %d 0 R >>", tu))
	var kids []string
	for _, content := range pages {
		c := p.stream("", []byte(content), true)
		pg := p.obj(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R >>", pagesAt, c))
		kids = append(kids, fmt.Sprintf("%d 0 R", pg))
	}
	p.set(pagesAt, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d /Resources << /Font << /F1 %d 0 R /F2 %d 0 R >> >> >>",
		strings.Join(kids, " "), len(kids), font1, font2))
	return p.finish(catalog, "")
}

const samplePDFPage1 = `BT /F1 12 Tf 72 720 Td (Hello, PDF world) Tj 0 -14 Td [(Kern)-50(ed) -400 (words)] TJ ET
BT /F1 12 Tf 1 0 0 1 72 600 Tm (caf\351 \(paren\)) Tj T* (next) ' ET`

const samplePDFPage2 = `q 1 0 0 1 0 0 cm BI /W 1 /H 1 /BPC 8 /CS /G ID ` + "\x00\xFF(" + ` EI Q
BT /F2 10 Tf 1 0 0 1 72 700 Tm <00010002> Tj 1 0 0 1 72 680 Tm <001000110012> Tj <00200021> Tj ET`

const samplePDFText = "Hello, PDF world\nKerned words\ncafé (paren)\nnext\nHé\nabcx😀"

func samplePDF(tb testing.TB) []byte { return simplePDF(tb, samplePDFPage1, samplePDFPage2) }
