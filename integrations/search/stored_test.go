package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// storedDocs are documents whose text is longer than StoredTextBytes,
// with a two-byte character across the bound.
func storedDocs() []Doc {
	long := strings.Repeat("a", StoredTextBytes-1) + "é and the rest of a long mail"
	docs := handDocs()
	docs[0].Text = long
	return docs
}

// wantStored is what d keeps: its title, its sender and the start of its
// text, cut before a character the bound splits.
func wantStored(d Doc) Stored {
	text := d.Text
	if len(text) > StoredTextBytes {
		text = text[:StoredTextBytes]
		text = strings.TrimSuffix(text, "\xc3")
	}
	return Stored{Title: d.Title, From: d.From, Text: text}
}

// checkStored runs a query that finds every document of docs and checks
// each hit's stored fields: present (want) or absent.
func checkStored(t *testing.T, ix *Index, docs []Doc, want map[string]bool) {
	t.Helper()
	byID := map[string]Doc{}
	for _, d := range docs {
		byID[d.ID] = d
	}
	res := search(t, ix, userA, Request{Query: Not{Child: qterm("zzzznothing")}, Limit: 100})
	if len(res.Hits) != len(want) {
		t.Fatalf("hits: got %d, want %d", len(res.Hits), len(want))
	}
	for _, h := range res.Hits {
		if h.HasStored != want[h.ID] {
			t.Errorf("%s: HasStored %v, want %v", h.ID, h.HasStored, want[h.ID])
			continue
		}
		if !h.HasStored {
			if h.Stored != (Stored{}) {
				t.Errorf("%s: stored fields %+v without HasStored", h.ID, h.Stored)
			}
			continue
		}
		if w := wantStored(byID[h.ID]); h.Stored != w {
			t.Errorf("%s: stored\n got %+v\nwant %+v", h.ID, h.Stored, w)
		}
	}
}

// TestStoredFields: a hit carries its document's title, sender and the
// start of its text, bounded, from the buffer, a flushed segment, a
// merged one and after a reopen.
func TestStoredFields(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir, mergeBy2)
	docs := storedDocs()
	all := map[string]bool{}
	for _, d := range docs {
		all[d.ID] = true
	}
	if err := ix.Add(userA, docs[:3]...); err != nil {
		t.Fatal(err)
	}
	checkStored(t, ix, docs, map[string]bool{"d1": true, "d2": true, "d3": true})
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(userA, docs[3:]...); err != nil {
		t.Fatal(err)
	}
	checkStored(t, ix, docs, all)
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	checkStored(t, ix, docs, all)
	waitMerged(t, ix)
	checkStored(t, ix, docs, all)
	ix.Close()
	ix = openTest(t, dir, mergeBy2)
	checkStored(t, ix, docs, all)
}

// TestStoredFieldsOlderSegments: a segment written before stored fields
// (footer F1) opens and is searched; its hits have none, also after a
// merge with a newer segment, whose hits do.
func TestStoredFieldsOlderSegments(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir, mergeBy2)
	docs := storedDocs()
	ix.f1 = true
	if err := ix.Add(userA, docs[:2]...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix = openTest(t, dir, mergeBy2)
	old := map[string]bool{"d1": false, "d2": false}
	checkStored(t, ix, docs, old)
	if err := ix.Add(userA, docs[2:]...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	mixed := map[string]bool{"d1": false, "d2": false, "d3": true, "d4": true, "d5": true}
	checkStored(t, ix, docs, mixed)
	waitMerged(t, ix)
	checkStored(t, ix, docs, mixed)
}

// TestStoredDamage: a stored block that does not open leaves the hit
// without stored fields, the search answers, and the segment is dropped
// for a rebuild.
func TestStoredDamage(t *testing.T) {
	ix := openTest(t, t.TempDir())
	docs := storedDocs()
	if err := ix.Add(userA, docs...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	seg := ix.userList()[0].parts[0].seg
	f, err := os.OpenFile(filepath.Join(ix.userList()[0].dir, segName(seg.seq)), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xff}, seg.offs[seg.storedBlocks[0]]+20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res := search(t, ix, userA, Request{Query: Not{Child: qterm("zzzznothing")}, Limit: 100})
	n := 0
	for _, h := range res.Hits {
		if !h.HasStored {
			n++
		}
	}
	if len(res.Hits) != 5 || n != 5 {
		t.Fatalf("hits %d, without stored fields %d; want 5 and 5", len(res.Hits), n)
	}
	if got := ix.NeedsRebuild(); len(got) != 1 || got[0] != userA {
		t.Errorf("NeedsRebuild %v, want [%s]", got, userA)
	}
}

func mergeBy2(c *Config) { c.MergeFactor = 2 }
