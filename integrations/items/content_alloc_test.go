package items

import (
	"runtime"
	"strings"
	"testing"
)

// TestDecodeContentAllocates: reading back a 1 KB text allocates about
// the text, not a new 40 KB inflater each time (a search page reads up
// to 100 texts for its snippets; docs/search.md, fair shares). Bytes
// allocated are counted, as testing.AllocsPerRun counts allocations:
// no clock. Each decode allocated over 40 KB.
func TestDecodeContentAllocates(t *testing.T) {
	text := strings.Repeat("kakan memon tutan rakin ", 40) // 960 bytes
	p := encodeContent(text)
	if got, err := decodeContent(p); err != nil || got != text {
		t.Fatalf("round trip: %d bytes, %v", len(got), err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const runs = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := decodeContent(p); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// The text, its reader, and now and then an inflater again after a
	// collection emptied the pool: about 1 KB a decode. The race
	// detector (make test) drops a quarter of what is put in a pool, on
	// purpose: about 12 KB a decode then. A new inflater each time is
	// over 40 KB.
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 24<<10 {
		t.Fatalf("a decode of %d bytes allocated %d bytes, want at most %d", len(text), per, 24<<10)
	}
}
