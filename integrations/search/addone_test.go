package search

import (
	"slices"
	"testing"
)

// TestAddBuffersEachBeforeTheNext: an Add of many documents buffers each
// before analysing the next, so that a sync's batch is never held
// analysed all at once (its terms and positions, beside the buffer).
func TestAddBuffersEachBeforeTheNext(t *testing.T) {
	ix := openTest(t, t.TempDir())
	docs := handDocs()
	if len(docs) < 3 {
		t.Fatalf("want at least 3 documents, have %d", len(docs))
	}
	var held []int
	afterAnalyze = func(u *user) {
		u.mu.Lock()
		held = append(held, u.buf.buf.cols.len())
		u.mu.Unlock()
	}
	t.Cleanup(func() { afterAnalyze = nil })
	if err := ix.Add(userA, docs...); err != nil {
		t.Fatal(err)
	}
	want := make([]int, len(docs))
	for i := range want {
		want[i] = i // the documents before this one, buffered
	}
	if !slices.Equal(held, want) {
		t.Fatalf("documents buffered as each was analysed: %v, want %v", held, want)
	}
}
