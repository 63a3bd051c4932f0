package extract_test

import (
	"errors"
	"strings"
	"testing"

	"searchsvc/integrations/extract"
)

func TestTextFormats(t *testing.T) {
	tests := []struct {
		name string
		file string
		data string
		typ  extract.Type
		want string
	}{
		{"utf-8 text", "notes.txt", "Café  au lait\r\nsecond line\n", extract.TypeText, "Café  au lait\nsecond line"},
		{"utf-8 bom", "a.txt", "\xEF\xBB\xBFhello", extract.TypeText, "hello"},
		{"utf-16le bom", "a.txt", "\xFF\xFEh\x00\xE9\x00", extract.TypeText, "hé"},
		{"utf-16be bom", "a.txt", "\xFE\xFF\x00h\x00\xE9", extract.TypeText, "hé"},
		{"latin-1 fallback", "a.txt", "caf\xE9 \x93quoted\x94", extract.TypeText, "café “quoted”"},
		{"control characters", "a.txt", "a\x00b\x07c", extract.TypeText, "a b c"},
		{"markdown kept as written", "README.md", "# Title\n\n- item *one*\n", extract.TypeMD, "# Title\n\n- item *one*"},
		{"csv", "t.csv", "name,city\n\"Smith, Ana\",Lisbon\n", extract.TypeCSV, "name city\nSmith, Ana Lisbon"},
		{"csv quote left open", "t.csv", "a,\"b\nc", extract.TypeCSV, "a b c"},
		{"csv quotes and line breaks in fields", "t.csv", "\"say \"\"hi\"\"\",\"two\r\nlines\"\r\nx,,y\r\n", extract.TypeCSV, "say \"hi\" two lines\nx y"},
		{"json values, not keys", "d.json", `{"title":"Budget","n":3,"tags":["q1","café"],"nested":{"k":"v","t":true}}`, extract.TypeJSON, "Budget\nq1\ncafé\nv"},
		{"html", "p.html", "<html><head><title>T</title><style>p{}</style></head><body><p>Hello <b>W</b>orld</p><p>a&amp;b</p></body></html>", extract.TypeHTML, "Hello World\na&b"},
		{"html latin-1 meta", "p.htm", "<meta charset=\"iso-8859-1\"><p>caf\xE9</p>", extract.TypeHTML, "café"},
		{"eml", "m.eml", "From: Ana <ana@example.org>\r\nSubject: Lunch\r\nContent-Type: text/plain\r\n\r\nSee you at noon.\r\n", extract.TypeEML, "Lunch\nAna <ana@example.org>\nSee you at noon."},
		{"sniffed json", "data", `["x", "y"]`, extract.TypeJSON, "x\ny"},
		{"sniffed html", "page", "<!DOCTYPE html><p>hi</p>", extract.TypeHTML, "hi"},
		{"sniffed text", "LICENSE", "Permission is granted", extract.TypeText, "Permission is granted"},
		{"upper-case extension", "NOTES.TXT", "x", extract.TypeText, "x"},
	}
	x := extract.New(extract.Limits{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := x.Extract(tt.file, []byte(tt.data))
			if res.Err != nil || res.Text != tt.want || res.Type != tt.typ || res.Truncated {
				t.Errorf("got %q type %q err %v truncated %v, want %q type %q", res.Text, res.Type, res.Err, res.Truncated, tt.want, tt.typ)
			}
		})
	}
}

func TestNameOnly(t *testing.T) {
	tests := []struct {
		name string
		file string
		data string
		lim  extract.Limits
		want error
	}{
		{"image", "photo.jpg", "\xFF\xD8\xFF\xE0\x00\x10JFIF\x00", extract.Limits{}, extract.ErrUnsupported},
		{"binary without extension", "blob", "\x00\x01\x02\x03", extract.Limits{}, extract.ErrUnsupported},
		{"over the input cap", "big.txt", strings.Repeat("a", 101), extract.Limits{MaxInput: 100}, extract.ErrTooLarge},
		{"empty text", "empty.txt", "", extract.Limits{}, extract.ErrNoText},
		{"truncated json", "d.json", `{"a": ["x", 2`, extract.Limits{}, extract.ErrMalformed},
		{"malformed json", "d.json", `{"a" "x"}`, extract.Limits{}, extract.ErrMalformed},
		{"json nested too deep", "d.json", strings.Repeat("[", 300) + strings.Repeat("]", 300), extract.Limits{}, extract.ErrLimit},
		{"eml without header", "m.eml", "just text", extract.Limits{}, extract.ErrMalformed},
		{"pdf that is not one", "a.pdf", "hello", extract.Limits{}, extract.ErrMalformed},
		{"docx that is not a zip", "a.docx", "PK\x03\x04garbage", extract.Limits{}, extract.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := extract.New(tt.lim).Extract(tt.file, []byte(tt.data))
			if !errors.Is(res.Err, tt.want) || res.Text != "" {
				t.Errorf("got %q err %v, want no text and %v", res.Text, res.Err, tt.want)
			}
		})
	}
}

func TestTextCap(t *testing.T) {
	x := extract.New(extract.Limits{MaxText: 10})
	tests := []struct {
		file, data, want string
	}{
		{"a.txt", "0123456789abc", "0123456789"},
		{"a.txt", "012345678é", "012345678"}, // é would take bytes 10 and 11
		{"a.json", `["0123456789abc"]`, "0123456789"},
	}
	for _, tt := range tests {
		res := x.Extract(tt.file, []byte(tt.data))
		if res.Err != nil || res.Text != tt.want || !res.Truncated {
			t.Errorf("%s %q: got %q err %v truncated %v, want %q truncated", tt.file, tt.data, res.Text, res.Err, res.Truncated, tt.want)
		}
	}
}

func TestExtractReader(t *testing.T) {
	x := extract.New(extract.Limits{MaxInput: 8})
	if res := x.ExtractReader("a.txt", strings.NewReader("12345678")); res.Text != "12345678" || res.Err != nil {
		t.Errorf("at the cap: got %q %v, want the text", res.Text, res.Err)
	}
	if res := x.ExtractReader("a.txt", strings.NewReader("123456789")); !errors.Is(res.Err, extract.ErrTooLarge) {
		t.Errorf("over the cap: got %q %v, want ErrTooLarge", res.Text, res.Err)
	}
}

func TestTypeOf(t *testing.T) {
	tests := map[string]extract.Type{
		"a/b/Report.DOCX": extract.TypeDOCX, "x.xlsx": extract.TypeXLSX, "x.pptx": extract.TypePPTX,
		"x.odt": extract.TypeODT, "x.pdf": extract.TypePDF, "x.png": extract.TypeOther, "Makefile": extract.TypeOther,
	}
	for name, want := range tests {
		if got := extract.TypeOf(name); got != want {
			t.Errorf("TypeOf(%q) = %q, want %q", name, got, want)
		}
	}
}
