package dropbox_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"searchsvc/integrations/dropbox"
	"searchsvc/integrations/dropbox/dropboxtest"
	"searchsvc/integrations/extract"
)

// benchCap is the size cap of the benchmark: lower than the default 10
// MiB so that its 200 files over the cap fit in the fake's memory; those
// files are never downloaded either way.
const benchCap = 256 << 10

// benchZip is a zip of one XML entry, an Office or OpenDocument file.
func benchZip(b *testing.B, name, body string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create(name)
	w.Write([]byte(body))
	zw.Close()
	return buf.Bytes()
}

// benchFiles is a Dropbox of n files of eleven types, every fifth over
// benchCap.
func benchFiles(b *testing.B, n int) map[string][]byte {
	para := strings.Repeat("The quarterly figures are in the shared folder. ", 20)
	pdf := "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] >> endobj\n" +
		"3 0 obj << /Type /Page /Contents 4 0 R >> endobj\n4 0 obj << /Length 60 >>\nstream\nBT /F1 12 Tf 72 700 Td (" + para[:200] + ") Tj ET\nendstream endobj\ntrailer << /Root 1 0 R >>\n"
	kinds := []struct {
		ext  string
		data []byte
	}{
		{"txt", []byte(para)},
		{"md", []byte("# Notes\n\n" + para)},
		{"csv", []byte("name,amount\n" + strings.Repeat("Ana,12.5\nBo,7\n", 50))},
		{"json", []byte(`{"title":"report","body":"` + para + `"}`)},
		{"html", []byte("<html><body><h1>Report</h1><p>" + para + "</p></body></html>")},
		{"eml", []byte("From: a@example.org\r\nSubject: report\r\n\r\n" + para)},
		{"docx", benchZip(b, "word/document.xml", `<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>`+para+`</w:t></w:r></w:p></w:body></w:document>`)},
		{"pptx", benchZip(b, "ppt/slides/slide1.xml", `<p:sld xmlns:p="p" xmlns:a="a"><a:p><a:r><a:t>`+para+`</a:t></a:r></a:p></p:sld>`)},
		{"odt", benchZip(b, "content.xml", `<office:document-content xmlns:office="o" xmlns:text="t"><text:p>`+para+`</text:p></office:document-content>`)},
		{"pdf", []byte(pdf)},
		{"png", []byte("\x89PNG\r\n\x1a\n" + para)},
	}
	big := bytes.Repeat([]byte("x"), benchCap+1)
	files := make(map[string][]byte, n)
	for i := range n {
		k := kinds[i%len(kinds)]
		data := k.data
		if i%5 == 4 {
			data = big
		}
		files[fmt.Sprintf("/Folder%d/file%04d.%s", i%10, i, k.ext)] = data
	}
	return files
}

// BenchmarkDropbox1000Files lists a Dropbox of 1,000 files from the fake
// (pages of 500), downloads those of a type the extractor reads and
// within the cap, and extracts their text; an op is the whole Dropbox.
func BenchmarkDropbox1000Files(b *testing.B) {
	ctx := context.Background()
	srv := dropboxtest.New(b, dropboxtest.Options{Files: benchFiles(b, 1000), PageSize: 500})
	c := dropbox.NewClient(srv.Client(), srv.URL, srv.Token, nil)
	x := extract.New(extract.Limits{MaxInput: benchCap})
	var downloads, extracted, nameOnly int
	b.ReportAllocs()
	for b.Loop() {
		downloads, extracted, nameOnly = 0, 0, 0
		page, err := c.ListFolder(ctx, "")
		for {
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range page.Entries {
				if e.Tag != dropbox.TagFile {
					continue
				}
				if e.Size > benchCap || extract.TypeOf(e.Name) == extract.TypeOther {
					nameOnly++
					continue
				}
				_, data, err := c.Download(ctx, e.ID, benchCap)
				if err != nil {
					b.Fatal(err)
				}
				downloads++
				if res := x.Extract(e.Name, data); res.Err == nil {
					extracted++
				}
			}
			if !page.HasMore {
				break
			}
			page, err = c.ListFolderContinue(ctx, page.Cursor)
		}
	}
	if downloads+nameOnly != 1000 || extracted != downloads {
		b.Fatalf("got %d downloads, %d extracted, %d name only; want 1,000 files, every download extracted", downloads, extracted, nameOnly)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/1000files")
	b.ReportMetric(float64(downloads), "downloads/op")
}
