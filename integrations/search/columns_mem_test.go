package search

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// TestColumnsBytesPerDocument: an open segment of UUID-named documents
// holds at most 41 bytes of columns a document (16 of id, 8 of date, 3 of
// the id order, 3 of kind, integration and record, 8 of field lengths,
// and the small tables): what a large index keeps in memory per item
// after a restart. With 4-byte numbers, indexes and lengths it was 56.
func TestColumnsBytesPerDocument(t *testing.T) {
	const n = 20_000
	var in columns
	for i := range n {
		in.ids = append(in.ids, fmt.Sprintf("0b9f7a2e-1111-4c6e-9a57-%012x", i*7919))
		in.dates = append(in.dates, int64(i))
		in.kind.add(tableIndex(&in.kinds, "email"))
		in.integ.add(tableIndex(&in.integs, "gmail"))
		in.record.add(tableIndex(&in.records, fmt.Sprint("r", i%3)))
		in.lens = append(in.lens, fieldLens{5, 3, 2, uint16(i)})
	}
	enc := encodeColumns(&in)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := decodeColumns(enc)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(&c)
	runtime.KeepAlive(enc)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%.1f bytes a document", per)
	if per > 41 {
		t.Errorf("columns hold %.1f bytes a document, want at most 41", per)
	}
}

// TestCodesWiden: a column of table indexes is a byte each until one is
// over 255, then every index so far reads back the same, as 4 bytes.
func TestCodesWiden(t *testing.T) {
	var c codes
	for i := range uint32(300) {
		c.add(i * 7 % 301)
		if (c.wide != nil) != (i >= 37) { // 37*7 = 259 is the first over 255
			t.Fatalf("after %d: wide %v", i, c.wide != nil)
		}
	}
	for i := range uint32(300) {
		if got := c.at(i); got != i*7%301 {
			t.Fatalf("at(%d): got %d, want %d", i, got, i*7%301)
		}
	}
	if c.len() != 300 {
		t.Errorf("len: got %d, want 300", c.len())
	}
}

// TestFieldLensClamp: a field longer than maxFieldLen tokens is kept as
// maxFieldLen, in the buffer and read back from a segment alike.
func TestFieldLensClamp(t *testing.T) {
	got := clampLens([numFields]uint32{1, maxFieldLen, maxFieldLen + 1, 1 << 31})
	if want := (fieldLens{1, maxFieldLen, maxFieldLen, maxFieldLen}); got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestDocOrder: document numbers up to 3 bytes read back as they were.
func TestDocOrder(t *testing.T) {
	in := []uint32{0, 1<<24 - 1, 70_000, 255, 256, 65_536}
	o := newDocOrder(slices.Clone(in))
	if o.wide != nil || o.len() != len(in) {
		t.Fatalf("got wide %v, len %d", o.wide != nil, o.len())
	}
	for i, d := range in {
		if got := o.at(i); got != d {
			t.Errorf("at(%d): got %d, want %d", i, got, d)
		}
	}
}
