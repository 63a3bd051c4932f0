package search

import (
	"bytes"
	"strings"
	"testing"
)

// TestSkipStoredCopiesNothing: walking past the stored records before a
// hit's own in its block splits the block and copies nothing.
func TestSkipStoredCopiesNothing(t *testing.T) {
	a := appendStored(nil, &Doc{Title: "a title", From: "ann@example.org", Text: strings.Repeat("text ", 300), Thread: "t1"})
	b := appendStored(nil, &Doc{Title: "another", From: "bob@example.org", Text: "short"})
	block := append(append(append([]byte{}, a...), b...), noStored...)
	rec, rest, err := skipStored(block)
	if err != nil || !bytes.Equal(rec, a) || !bytes.Equal(rest, block[len(a):]) {
		t.Fatalf("skipStored: rec %d bytes, rest %d bytes, %v; want %d, %d, nil", len(rec), len(rest), err, len(a), len(block)-len(a))
	}
	allocs := testing.AllocsPerRun(100, func() {
		for b := block; len(b) > 0; {
			_, b, _ = skipStored(b)
		}
	})
	if allocs != 0 {
		t.Errorf("skipStored allocates %.0f times a block, want 0", allocs)
	}
}
