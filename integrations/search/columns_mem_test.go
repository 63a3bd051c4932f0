package search

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
)

// TestColumnsBytesPerDocument: an open segment of UUID-named documents
// holds at most 36 bytes of columns a document (16 of id, 6 of date, 3 of
// the id order, 1 of kind, integration and record together, 8 of field
// lengths, and the small tables): what a large index keeps in memory per
// item after a restart. With 4-byte numbers, indexes and lengths it was
// 56; with 8 bytes of date and a byte each of kind, integration and
// record, 41.
func TestColumnsBytesPerDocument(t *testing.T) {
	const n = 20_000
	var in columns
	for i := range n {
		in.ids = append(in.ids, fmt.Sprintf("0b9f7a2e-1111-4c6e-9a57-%012x", i*7919))
		in.dates.add(int64(i))
		in.addNames("email", "gmail", fmt.Sprint("r", i%3))
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
	if per > 36 {
		t.Errorf("columns hold %.1f bytes a document, want at most 36", per)
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

// TestDateColumn: dates read back as they were, in 6 bytes each while
// every one is within ±2^47 ms of the first, and as 8 once one is not
// (a date of year 1, or 9999, beside today's), every date so far too.
func TestDateColumn(t *testing.T) {
	now := int64(1_795_000_000_000) // 2026, in ms
	near := []int64{now, now - 1, now + 1, 0, -62_135_596_800_000, now + dateSpan, now - dateSpan}
	var c dateColumn
	for _, v := range near {
		c.add(v)
	}
	if c.wide != nil || len(c.narrow) != 6*len(near) {
		t.Fatalf("near dates: wide %v, %d bytes; want narrow, %d", c.wide != nil, len(c.narrow), 6*len(near))
	}
	all := append(slices.Clone(near), now+dateSpan+1, math.MinInt64, math.MaxInt64, 5)
	for _, v := range all[len(near):] {
		c.add(v)
	}
	if c.wide == nil || c.len() != len(all) {
		t.Fatalf("far dates: wide %v, len %d; want wide, %d", c.wide != nil, c.len(), len(all))
	}
	for d, v := range all {
		if got := c.at(uint32(d)); got != v {
			t.Errorf("at(%d): got %d, want %d", d, got, v)
		}
	}
	var o dateColumn
	for _, v := range []int64{math.MaxInt64, math.MinInt64} {
		o.add(v)
	}
	if o.wide == nil || o.at(0) != math.MaxInt64 || o.at(1) != math.MinInt64 {
		t.Errorf("overflowing distance: wide %v, got %d, %d", o.wide != nil, o.at(0), o.at(1))
	}
}

// TestTags: a document's kind, integration and record are one code of a
// byte into a table of triples, found by a scan and, from manyTags on, by
// a map; past 255 triples the code is 4 bytes; every document's three
// read back as they were, through a segment's encoding too.
func TestTags(t *testing.T) {
	var in columns
	type names struct{ kind, integ, record string }
	var want []names
	for i := range 700 {
		n := names{fmt.Sprint("k", i%3), fmt.Sprint("i", i%2), fmt.Sprint("r", i/2%150)}
		if i < 400 {
			n.record = fmt.Sprint("r", i%7) // few triples: a byte each
		}
		want = append(want, n)
		in.addNames(n.kind, n.integ, n.record)
		if i == 399 && (in.tag.wide != nil || len(in.tags) != 42 || in.tagIdx == nil) {
			t.Fatalf("400 documents: wide %v, %d tags, map %v; want a byte each, 42, a map", in.tag.wide != nil, len(in.tags), in.tagIdx != nil)
		}
		in.ids = append(in.ids, fmt.Sprint("d", i))
		in.dates.add(int64(i))
		in.lens = append(in.lens, fieldLens{})
	}
	if in.tag.wide == nil {
		t.Errorf("%d tags: a byte each, want 4", len(in.tags))
	}
	out, err := decodeColumns(encodeColumns(&in))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*columns{&in, &out} {
		for d, n := range want {
			got := names{c.kindAt(uint32(d)), c.integAt(uint32(d)), c.records[c.recordAt(uint32(d))]}
			if got != n {
				t.Fatalf("document %d: got %v, want %v", d, got, n)
			}
		}
	}
}
