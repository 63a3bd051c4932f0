package extract_test

import (
	"errors"
	"testing"
	"unicode/utf8"

	"searchsvc/integrations/extract"
)

// fuzzLimits are small, so that the fuzzer reaches every limit.
var fuzzLimits = extract.Limits{MaxInput: 1 << 20, MaxText: 4 << 10, MaxInflate: 256 << 10,
	MaxInflateTotal: 512 << 10, MaxEntries: 64, MaxXMLDepth: 32, MaxXMLTokens: 20000, MaxObjects: 2000}

// checkResult holds for every input: no panic (the fuzzer sees it), valid
// UTF-8 within the cap, and no text with an error that is one of ours.
func checkResult(t *testing.T, res extract.Result) {
	t.Helper()
	if !utf8.ValidString(res.Text) || len(res.Text) > fuzzLimits.MaxText {
		t.Fatalf("text of %d bytes, valid UTF-8 %v", len(res.Text), utf8.ValidString(res.Text))
	}
	if res.Err == nil {
		return
	}
	if res.Text != "" {
		t.Fatalf("error %v with text", res.Err)
	}
	for _, want := range []error{extract.ErrUnsupported, extract.ErrTooLarge, extract.ErrLimit, extract.ErrMalformed, extract.ErrNoText} {
		if errors.Is(res.Err, want) {
			return
		}
	}
	t.Fatalf("error %v is none of the package's", res.Err)
}

func fuzzFormat(f *testing.F, name string, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	x := extract.New(fuzzLimits)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkResult(t, x.Extract(name, data))
	})
}

func FuzzDOCX(f *testing.F) {
	fuzzFormat(f, "f.docx", sampleDOCX(f), docx(f, "<w:p><w:p><w:t>x"), bomb(f, "word/document.xml", 1<<20))
}

func FuzzXLSX(f *testing.F) { fuzzFormat(f, "f.xlsx", sampleXLSX(f), bigSheets(f, 2, 4<<10)) }

func FuzzPPTX(f *testing.F) { fuzzFormat(f, "f.pptx", samplePPTX(f)) }

func FuzzODT(f *testing.F) { fuzzFormat(f, "f.odt", sampleODT(f)) }

func FuzzPDF(f *testing.F) {
	fuzzFormat(f, "f.pdf", samplePDF(f), objStmPDF(f), differencesPDF(f), pdfBomb(f, 1<<20),
		[]byte("%PDF-1.7\n1 0 obj << /Kids [1 0 R] /Pages 1 0 R /Type /Catalog >> endobj trailer << /Root 1 0 R >>"),
		[]byte("%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj 2 0 obj << /Kids [3 0 R] >> endobj\n"+
			"3 0 obj << /Contents 4 0 R >> endobj 4 0 obj << /Length 4 0 R >> stream\nBT (x) Tj ET\nendstream endobj trailer << /Root 1 0 R >>"))
}

// FuzzText covers the formats read as text, chosen by the first byte.
func FuzzText(f *testing.F) {
	names := []string{"f.txt", "f.csv", "f.json", "f.html", "f.eml", "noextension"}
	for i, s := range []string{"Café\r\n", "a,\"b\",c\n1,2", `{"a":["b",{"c":"d"}]}`, "<p>x<script>y</script>", "Subject: s\n\nbody", "\xFF\xFEa\x00"} {
		f.Add(byte(i), []byte(s))
	}
	x := extract.New(fuzzLimits)
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		checkResult(t, x.Extract(names[int(which)%len(names)], data))
	})
}
