package extract_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"searchsvc/integrations/extract"
)

func TestOffice(t *testing.T) {
	tests := []struct {
		name string
		file string
		data []byte
		typ  extract.Type
		want string
	}{
		{"docx", "report.docx", sampleDOCX(t), extract.TypeDOCX, sampleDOCXText},
		{"xlsx", "budget.xlsx", sampleXLSX(t), extract.TypeXLSX, sampleXLSXText},
		{"pptx", "talk.pptx", samplePPTX(t), extract.TypePPTX, samplePPTXText},
		{"odt", "minutes.odt", sampleODT(t), extract.TypeODT, sampleODTText},
		{"docx sniffed", "report", sampleDOCX(t), extract.TypeDOCX, sampleDOCXText},
		{"docx with '>' in attributes and a comment", "q.docx", docx(t, `<!-- a " quote --><w:p w:x="a>b" w:y='>'><w:r><w:t>quoted</w:t></w:r></w:p>`), extract.TypeDOCX, "quoted"},
		{"xlsx sniffed", "budget", sampleXLSX(t), extract.TypeXLSX, sampleXLSXText},
		{"pptx sniffed", "talk", samplePPTX(t), extract.TypePPTX, samplePPTXText},
		{"odt sniffed", "minutes", sampleODT(t), extract.TypeODT, sampleODTText},
		{"pdf", "paper.pdf", samplePDF(t), extract.TypePDF, samplePDFText},
		{"pdf sniffed", "paper", samplePDF(t), extract.TypePDF, samplePDFText},
	}
	x := extract.New(extract.Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := x.Extract(tt.file, tt.data)
			if res.Err != nil || res.Text != tt.want || res.Type != tt.typ {
				t.Errorf("got %q type %q err %v, want %q type %q", res.Text, res.Type, res.Err, tt.want, tt.typ)
			}
		})
	}
}

// bomb is a zip whose one entry inflates to size bytes of zeros.
func bomb(tb testing.TB, name string, size int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	w.Write([]byte(xmlHead + "<w:document " + wNS + "><w:body><w:p><w:r><w:t>"))
	zeros := make([]byte, 1<<20)
	for i := 0; i < size>>20; i++ {
		w.Write(zeros)
	}
	zw.Close()
	return buf.Bytes()
}

// lyingBomb is bomb with the central directory claiming a tiny size, so
// that only the reading limit stops it.
func lyingBomb(tb testing.TB, size int) []byte {
	b := bomb(tb, "word/document.xml", size)
	// The central directory's uncompressed size is at offset 24 of its
	// header; set it to 100.
	i := bytes.LastIndex(b, []byte("PK\x01\x02"))
	b[i+24], b[i+25], b[i+26], b[i+27] = 100, 0, 0, 0
	return b
}

func TestBounded(t *testing.T) {
	deep := docx(t, strings.Repeat("<w:p>", 10000)+strings.Repeat("</w:p>", 10000))
	many := docx(t, strings.Repeat("<w:p><w:r><w:t>x</w:t></w:r></w:p>", 3000))
	var entries []entry
	for i := range 50 {
		entries = append(entries, entry{fmt.Sprintf("f%d", i), ""})
	}
	manyEntries := zipOf(t, append(entries, entry{"word/document.xml", "<a/>"})...)
	tests := []struct {
		name string
		file string
		data []byte
		lim  extract.Limits
		want error
	}{
		{"zip bomb, honest size", "b.docx", bomb(t, "word/document.xml", 20<<20), extract.Limits{}, extract.ErrLimit},
		// archive/zip itself stops an entry that inflates past its size.
		{"zip bomb, lying size", "b.docx", lyingBomb(t, 20<<20), extract.Limits{}, extract.ErrMalformed},
		{"total inflate", "b.xlsx", bigSheets(t, 4, 512<<10), extract.Limits{MaxInflate: 1 << 20, MaxInflateTotal: 1 << 20}, extract.ErrLimit},
		{"deep xml", "d.docx", deep, extract.Limits{}, extract.ErrLimit},
		{"xml tokens", "m.docx", many, extract.Limits{MaxXMLTokens: 1000}, extract.ErrLimit},
		{"an xml tag of many attributes", "a.docx", docx(t, "<w:p "+strings.Repeat(`a=">" `, 20000)+"/>"), extract.Limits{}, extract.ErrLimit},
		{"zip entries", "e.docx", manyEntries, extract.Limits{MaxEntries: 20}, extract.ErrLimit},
		{"docx without document", "e.docx", zipOf(t, entry{"other.xml", "<a/>"}), extract.Limits{}, extract.ErrMalformed},
		{"docx with broken xml", "e.docx", docx(t, "<w:p><w:t>a</w:p>"), extract.Limits{}, extract.ErrMalformed},
		{"docx with an external entity", "e.docx", zipOf(t, entry{"word/document.xml",
			`<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><d><t>&x;</t></d>`}), extract.Limits{}, extract.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := extract.New(tt.lim).Extract(tt.file, tt.data)
			if !errors.Is(res.Err, tt.want) || res.Text != "" {
				t.Errorf("got %q err %v, want no text and %v", clipped(res.Text), res.Err, tt.want)
			}
		})
	}
}

// bigSheets is a workbook of n sheets of about size bytes of XML each.
func bigSheets(tb testing.TB, n, size int) []byte {
	row := `<row><c t="inlineStr"><is><t>some words in a cell</t></is></c></row>`
	sheet := xmlHead + `<worksheet ` + sNS + `><sheetData>` + strings.Repeat(row, size/len(row)) + `</sheetData></worksheet>`
	entries := []entry{{"xl/workbook.xml", "<workbook/>"}}
	for i := range n {
		entries = append(entries, entry{fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1), sheet})
	}
	return zipOf(tb, entries...)
}

func clipped(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// TestBombMemory checks that a bomb costs about the inflate limit, not
// what it would inflate to: the bytes allocated by one extraction stay
// under ten times the limit (a growing buffer allocates about twice what
// it ends with), where inflating the bomb would take 32 times.
func TestBombMemory(t *testing.T) {
	const limit = 1 << 20
	x := extract.New(extract.Limits{MaxInflate: limit})
	tests := []struct {
		name string
		file string
		data []byte
	}{
		{"zip, honest size", "b.docx", bomb(t, "word/document.xml", 32<<20)},
		{"zip, lying size", "b.docx", lyingBomb(t, 32<<20)},
		{"pdf stream", "b.pdf", pdfBomb(t, 32<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res := x.Extract(tt.file, tt.data)
			runtime.ReadMemStats(&after)
			if res.Err == nil || res.Text != "" {
				t.Errorf("got %q %v, want no text and an error", clipped(res.Text), res.Err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 10*limit {
				t.Errorf("a 32 MiB bomb allocated %d bytes, want at most %d", got, 10*limit)
			}
		})
	}
}
