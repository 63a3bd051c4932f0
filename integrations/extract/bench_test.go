package extract_test

import (
	"testing"

	"searchsvc/integrations/extract"
)

// BenchmarkExtractMixed extracts one file of each type; files/s and MB/s
// are of that mix.
func BenchmarkExtractMixed(b *testing.B) {
	files := []struct {
		name string
		data []byte
	}{
		{"a.txt", []byte("plain text, a line of it\n")},
		{"a.csv", []byte("name,city\nAna,Lisbon\nBo,Oslo\n")},
		{"a.json", []byte(`{"title":"Budget","tags":["q1","q2"]}`)},
		{"a.html", []byte("<html><body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>")},
		{"a.eml", []byte("From: a@example.org\r\nSubject: Hi\r\n\r\nBody\r\n")},
		{"a.docx", sampleDOCX(b)},
		{"a.xlsx", bigSheets(b, 2, 64<<10)},
		{"a.pptx", samplePPTX(b)},
		{"a.odt", sampleODT(b)},
		{"a.pdf", samplePDF(b)},
	}
	var size int64
	for _, f := range files {
		size += int64(len(f.data))
	}
	x := extract.New(extract.Limits{})
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		for _, f := range files {
			if res := x.Extract(f.name, f.data); res.Err != nil {
				b.Fatalf("%s: %v", f.name, res.Err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(files))/b.Elapsed().Seconds(), "files/s")
}
