package extract

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"fmt"
	"testing"
)

// objStmBomb builds a PDF of n object streams, each inflating to size
// bytes, the first packing the catalog (object 100) that /Root names.
func objStmBomb(tb testing.TB, n, size int) []byte {
	tb.Helper()
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	for i := range n {
		obj := fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", 200+i)
		head := fmt.Sprintf("%d 0 ", 100+i)
		data := append([]byte(head+obj+"\n"), bytes.Repeat([]byte(" "), size-len(head)-len(obj)-1)...)
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		fmt.Fprintf(&b, "%d 0 obj\n<< /Type /ObjStm /N 1 /First %d /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream\nendobj\n", 1+i, len(head), z.Len(), z.Bytes())
	}
	b.WriteString("trailer\n<< /Root 100 0 R >>\n%%EOF\n")
	return b.Bytes()
}

// TestObjectStreamsKept: five object streams of (nearly) 16 MiB each, in
// a file of about 80 KB, cost at most maxStreamsKept of kept memory, not
// what they inflate to; an object packed in a stream that was let go is
// found by decoding it again, within the inflate limits.
func TestObjectStreamsKept(t *testing.T) {
	const size = 16<<20 - 1024
	data := objStmBomb(t, 5, size)
	tests := []struct {
		name     string
		lim      Limits
		wantRoot bool
	}{
		{"default limits", DefaultLimits(), false}, // the fifth stream and a second decode are past MaxInflateTotal
		{"room to decode again", Limits{MaxInflateTotal: 128 << 20}.withDefaults(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := openPDF(data, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			root := d.dict(d.trailer["Root"])
			var kept int64
			for _, s := range d.streams {
				kept += int64(len(s))
			}
			if kept > maxStreamsKept || d.keptPeak > maxStreamsKept {
				t.Errorf("kept %d bytes of object streams (peak %d), want at most %d", kept, d.keptPeak, maxStreamsKept)
			}
			if got := root["Type"] == pdfName("Catalog"); got != tt.wantRoot {
				t.Errorf("root found: got %v, want %v (%v)", got, tt.wantRoot, root)
			}
		})
	}
	if len(data) > 200<<10 {
		t.Errorf("the file is %d bytes, want about 80 KB", len(data))
	}
}

// TestZipLookupsCount: looking up every entry of an archive of n entries
// looks at n entries in all, not n for each lookup.
func TestZipLookupsCount(t *testing.T) {
	const n = 2000
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		if _, err := zw.Create(fmt.Sprintf("ppt/slides/slide%d.xml", i)); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	a, err := openZip(buf.Bytes(), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if a.file(fmt.Sprintf("ppt/slides/slide%d.xml", i)) == nil {
			t.Fatalf("entry %d not found", i)
		}
	}
	if a.file("missing") != nil {
		t.Fatal("a missing entry was found")
	}
	if a.scanned != n {
		t.Errorf("looked at %d entries for %d lookups, want %d", a.scanned, n+1, n)
	}
}
