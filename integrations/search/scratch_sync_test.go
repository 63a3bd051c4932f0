package search

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
)

// TestDocScratchReused: a document analysed in a scratch that analysed
// others before it is analysed as in a fresh one, and analysing one more
// in a warm scratch allocates little beside the analyzer (a first sync
// analysed every mail into fresh maps and arrays, grown term by term:
// most of what it allocated).
func TestDocScratchReused(t *testing.T) {
	docs := []Doc{analyzeDocDoc(), {ID: "empty"}}
	for i, raw := range mailtest.Corpus(t) {
		if i == 200 {
			break
		}
		m, err := mail.Parse(raw)
		if err != nil {
			continue
		}
		docs = append(docs, Doc{ID: "m", Title: m.Subject, From: m.From, To: m.To, Text: m.Text,
			Refs: []string{"https://example.org/x"}, Names: []string{"report.pdf"}, Attached: i%2 == 0})
	}
	var s docScratch
	for _, d := range docs {
		got, want := s.analyze(d), analyzeDoc(d)
		if len(got.terms) == 0 && len(want.terms) == 0 {
			want.terms = got.terms // empty, of whatever room
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("doc %q analysed after others: %+v, want %+v", d.Title, got, want)
		}
		s.reset()
		if s.a.doc.Text != "" || len(s.at) != 0 || len(s.words) != 0 {
			t.Fatalf("after reset the scratch still holds the document: text %d bytes, %d terms, %d words", len(s.a.doc.Text), len(s.at), len(s.words))
		}
	}

	d := analyzeDocDoc()
	analyzer := allocatedPerRun(func() {
		for _, f := range append([]string{d.Title, d.From, d.Text}, d.To...) {
			Analyze(f, func(Token) {})
		}
	})
	warm := allocatedPerRun(func() {
		s.analyze(d)
		s.reset()
	})
	fresh := allocatedPerRun(func() { analyzeDoc(d) })
	t.Logf("bytes allocated: %d by the analyzer, %d analysing in a warm scratch, %d in a fresh one", analyzer, warm, fresh)
	if warm-analyzer > 2048 {
		t.Errorf("analysing a document in a warm scratch allocates %d bytes, %d of them the analyzer's; want at most 2,048 more (a fresh scratch: %d)",
			warm, analyzer, fresh)
	}
}

// allocatedPerRun returns the bytes f allocates, on average over 20 runs.
func allocatedPerRun(f func()) uint64 {
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / 20
}

// TestDocScratchLetsGoOfHugeDocument: after a document of more terms than
// maxScratchTerms, the scratch keeps none of its room.
func TestDocScratchLetsGoOfHugeDocument(t *testing.T) {
	var b strings.Builder
	for i := range maxScratchTerms + 10 {
		b.WriteString("w")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(string(rune('a' + i/26%26)))
		b.WriteString(string(rune('a' + i/676%26)))
		b.WriteString(" ")
	}
	var s docScratch
	a := s.analyze(Doc{ID: "big", Text: b.String()})
	if len(a.terms) <= maxScratchTerms {
		t.Fatalf("the document has %d terms, want over %d", len(a.terms), maxScratchTerms)
	}
	s.reset()
	if s.at != nil || cap(s.a.terms) != 0 || cap(s.occs) != 0 || cap(s.all) != 0 {
		t.Errorf("after a huge document the scratch keeps %d terms' room and %d positions'", cap(s.a.terms), cap(s.all))
	}
}

// TestSkipStoredAllocatesNothing: a merge passes over each stored record
// to copy it whole, without making a string of each of its fields.
func TestSkipStoredAllocatesNothing(t *testing.T) {
	d := Doc{ID: "id-1", Title: "Quarterly report", From: "Alice <alice@example.org>", Kind: "email",
		Text: strings.Repeat("some words of text ", 40), Date: time.Unix(1700000000, 0)}
	rec := appendStored(nil, &d)
	b := append(append([]byte{}, rec...), rec...)
	got, rest, err := skipStored(b)
	if err != nil || len(got) != len(rec) || len(rest) != len(rec) {
		t.Fatalf("skipStored: %d bytes and %d left, %v; want %d and %d", len(got), len(rest), err, len(rec), len(rec))
	}
	if n := testing.AllocsPerRun(50, func() { skipStored(b) }); n != 0 {
		t.Errorf("skipStored allocates %.0f times a record, want 0", n)
	}
}

// TestMergeReadsBlocksInPlace: a merge's input opens each postings block
// in the arrays of the one before, with the same bytes as a block opened
// afresh, and allocates next to nothing for it once it has them (a
// block's arrays are 64 KiB and more; the decompressor's own allocations
// remain, more of them under the race detector, whose pools drop some
// of what they are given).
func TestMergeReadsBlocksInPlace(t *testing.T) {
	ix := openTest(t, t.TempDir())
	if err := ix.Add(userA, streamDocs()...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	seg := onlySegment(t, ix)
	if len(seg.post) < 2 {
		t.Fatalf("got %d postings blocks, want several", len(seg.post))
	}
	memo := blockMemo{reuse: true}
	for range 2 {
		for _, n := range seg.post {
			got, err := seg.block(n, &memo)
			if err != nil {
				t.Fatal(err)
			}
			want, err := seg.openBlock(n, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("block %d opened in place differs from the block opened afresh", n)
			}
		}
	}
	i := 0
	inPlace := allocatedPerRun(func() {
		seg.block(seg.post[i%len(seg.post)], &memo)
		i++
	})
	afresh := allocatedPerRun(func() {
		seg.block(seg.post[i%len(seg.post)], &blockMemo{})
		i++
	})
	t.Logf("opening a postings block allocates %d bytes in place, %d afresh", inPlace, afresh)
	if inPlace > afresh/8 {
		t.Errorf("opening a postings block in place allocates %d bytes, want at most an eighth of the %d afresh", inPlace, afresh)
	}
}

// TestMergeInputWalkAllocates: a merge's walk of an input, every term and
// its postings, opens the dictionary's and the postings' blocks in
// arrays it keeps, where a fresh pair of arrays for every block was
// more than four times the blocks' bytes.
func TestMergeInputWalkAllocates(t *testing.T) {
	ix := openTest(t, t.TempDir())
	var docs []Doc
	for i, raw := range mailtest.Corpus(t) {
		if i == 1500 {
			break
		}
		if m, err := mail.Parse(raw); err == nil {
			docs = append(docs, Doc{ID: fmt.Sprint("m", i), Title: m.Subject, From: m.From, To: m.To, Text: m.Text})
		}
	}
	if err := ix.Add(userA, docs...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	seg := onlySegment(t, ix)
	var terms, termBytes int
	walk := func() {
		var docBuf, posBuf, docCopy []byte
		m := newMergeIn(&part{seg: seg})
		terms, termBytes = 0, 0
		for m.next() {
			terms++
			termBytes += len(m.term)
			if _, _, err := m.postings(&docBuf, &posBuf, &docCopy); err != nil {
				t.Fatal(err)
			}
		}
		if m.err != nil {
			t.Fatal(m.err)
		}
	}
	got := allocatedPerRun(walk)
	plain := int(plainSize(ix))
	// About 80 bytes a term (its string, the walk's own; 120 under the
	// race detector), and the arrays of two walks (raw and inflated, 64
	// KiB and more each): 2.7 MB on these 1,500 mails, where fresh arrays
	// for each block were 12 MB, more than four times the blocks' plain
	// bytes.
	want := 150*terms + 4*(maxInflated+postBlock)
	t.Logf("a walk of %d terms allocates %d bytes; the blocks' plain bytes: %d", terms, got, plain)
	if int(got) > want {
		t.Errorf("a walk of %d terms (%d bytes of them) allocates %d bytes, want at most %d (the blocks: %d bytes)", terms, termBytes, got, want, plain)
	}
}
