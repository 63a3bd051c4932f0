package extract_test

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"strings"
	"testing"

	"searchsvc/integrations/extract"
)

// objStmPDF keeps the catalog, the page tree and the font in an object
// stream and has no classic trailer: a cross-reference stream holds /Root,
// as PDF 1.5 writers do.
func objStmPDF(tb testing.TB) []byte {
	p := newPDF()
	content := p.stream("", []byte("BT /F1 11 Tf 10 10 Td (packed objects) Tj ET"), true)
	page := p.obj(fmt.Sprintf("<< /Type /Page /Parent 11 0 R /Contents %d 0 R >>", content))
	objs := []string{
		"<< /Type /Catalog /Pages 11 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 /Resources << /Font << /F1 12 0 R >> >> >>", page),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>",
	}
	var head, body strings.Builder
	for i, o := range objs {
		fmt.Fprintf(&head, "%d %d ", 10+i, body.Len())
		body.WriteString(o + "\n")
	}
	p.stream(fmt.Sprintf("/Type /ObjStm /N %d /First %d", len(objs), head.Len()), []byte(head.String()+body.String()), true)
	p.obj("<< /Type /XRef /Root 10 0 R /Size 13 /W [1 2 1] >>")
	p.buf.WriteString("startxref\n0\n%%EOF\n")
	return p.buf.Bytes()
}

// differencesPDF uses a simple font whose /Differences remap codes.
func differencesPDF(tb testing.TB) []byte {
	p := newPDF()
	pagesAt := p.reserve()
	catalog := p.obj(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesAt))
	font := p.obj("<< /Type /Font /Subtype /Type1 /BaseFont /Custom /Encoding << /Differences [1 /H /i /space /uni00E9 /fi] >> >>")
	c := p.stream("", []byte("BT /F1 9 Tf 0 0 Td <0102030405> Tj ET"), false)
	page := p.obj(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /Contents [%d 0 R] /Resources << /Font << /F1 %d 0 R >> >> >>", pagesAt, c, font))
	p.set(pagesAt, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	return p.finish(catalog, "")
}

// pdfBomb has a content stream that inflates to size bytes of spaces.
func pdfBomb(tb testing.TB, size int) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	for range size >> 20 {
		zw.Write(spaces)
	}
	zw.Close()
	p := newPDF()
	pagesAt := p.reserve()
	catalog := p.obj(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesAt))
	c := p.obj(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes()))
	page := p.obj(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /Contents %d 0 R >>", pagesAt, c))
	p.set(pagesAt, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	return p.finish(catalog, "")
}

// selfLengthPDF has a content stream whose /Length refers to itself.
func selfLengthPDF(tb testing.TB) []byte {
	p := newPDF()
	pagesAt := p.reserve()
	catalog := p.obj(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesAt))
	c := p.reserve()
	p.set(c, fmt.Sprintf("<< /Length %d 0 R >>\nstream\nBT (self) Tj ET\nendstream", c))
	page := p.obj(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /Contents %d 0 R >>", pagesAt, c))
	p.set(pagesAt, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	return p.finish(catalog, "")
}

func TestPDF(t *testing.T) {
	twoPages := simplePDF(t, "BT /F1 1 Tf (one) Tj ET", "BT /F1 1 Tf (two) Tj ET")
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"two pages in order", twoPages, "one\ntwo"},
		{"object streams and an xref stream", objStmPDF(t), "packed objects"},
		{"differences encoding", differencesPDF(t), "Hi éﬁ"},
		{"wrong /Length", bytes.Replace(simplePDF(t, "BT (kept) Tj ET"), []byte("/Length 2"), []byte("/Length 9999"), 1), "kept"},
		{"no trailer: the catalog is found", bytes.Split(twoPages, []byte("trailer"))[0], "one\ntwo"},
		{"a /Length that is its own stream", selfLengthPDF(t), "self"},
		{"kids loop back to the root", bytes.Replace(twoPages, []byte("/Kids ["), []byte("/Kids [1 0 R "), 1), "one\ntwo"},
		{"page font without ToUnicode or Identity", simplePDF(t, "BT /F9 1 Tf (plain) Tj ET"), "plain"},
	}
	x := extract.New(extract.Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := x.Extract("f.pdf", tt.data)
			if res.Err != nil || res.Text != tt.want {
				t.Errorf("got %q err %v, want %q", res.Text, res.Err, tt.want)
			}
		})
	}
}

func TestPDFNoText(t *testing.T) {
	encrypted := newPDF()
	encrypted.obj("<< /Type /Catalog /Pages 2 0 R >>")
	encrypted.obj("<< /Filter /Standard /V 2 /R 3 >>")
	type0 := newPDF()
	pagesAt := type0.reserve()
	cat := type0.obj(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesAt))
	font := type0.obj("<< /Type /Font /Subtype /Type0 /Encoding /Identity-H >>")
	c := type0.stream("", []byte("BT /F1 9 Tf <00410042> Tj ET"), false)
	page := type0.obj(fmt.Sprintf("<< /Type /Page /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> >>", c, font))
	type0.set(pagesAt, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] >>", page))
	lzw := bytes.Replace(simplePDF(t, "BT (x) Tj ET"), []byte("/Filter /FlateDecode"), []byte("/Filter /LZWDecode"), -1)
	tests := []struct {
		name string
		data []byte
		lim  extract.Limits
		want error
	}{
		{"encrypted", encrypted.finish(1, "/Encrypt 2 0 R"), extract.Limits{}, extract.ErrNoText},
		{"type0 font without a map", type0.finish(cat, ""), extract.Limits{}, extract.ErrNoText},
		{"images only", simplePDF(t, "q 10 0 0 10 0 0 cm /Im1 Do Q"), extract.Limits{}, extract.ErrNoText},
		{"unsupported filter", lzw, extract.Limits{}, extract.ErrNoText},
		{"flate bomb", pdfBomb(t, 20<<20), extract.Limits{}, extract.ErrLimit},
		{"flate total", simplePDF(t, strings.Repeat("BT (a) Tj ET ", 1000)), extract.Limits{MaxInflateTotal: 5000}, extract.ErrLimit},
		{"objects", simplePDF(t, "BT (a) Tj ET"), extract.Limits{MaxObjects: 3}, extract.ErrLimit},
		{"no catalog", []byte("%PDF-1.4\n1 0 obj\n<< /A 1 >>\nendobj\n"), extract.Limits{}, extract.ErrMalformed},
		{"truncated", samplePDF(t)[:200], extract.Limits{}, extract.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := extract.New(tt.lim).Extract("f.pdf", tt.data)
			if !errors.Is(res.Err, tt.want) || res.Text != "" {
				t.Errorf("got %q err %v, want no text and %v", clipped(res.Text), res.Err, tt.want)
			}
		})
	}
}
