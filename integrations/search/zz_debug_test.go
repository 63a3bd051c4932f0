package search

import (
	"testing"
	"strings"
)

func TestZZSize(t *testing.T) {
	docs := corpusMails(t)
	dir := t.TempDir()
	ix := openTest(t, dir, func(c *Config){ c.MergeFactor = 100 })
	text := 0
	for _, d := range docs {
		text += len(d.Title) + len(d.From) + len(d.Text)
		for _, to := range d.To { text += len(to) }
	}
	ix.Add(userA, docs...)
	ix.Flush()
	u, _ := ix.getUser(userA, false)
	var pos, dl, wpos, wdl, dict, cols, nterms, nwords, total int64
	for _, p := range u.parts {
		if p.seg == nil { continue }
		s := p.seg
		total += s.size
		for i, k := range s.kinds {
			switch k {
			case kindDict: dict += int64(s.lens[i])
			case kindColumns: cols += int64(s.lens[i])
			}
		}
		it := s.dictFrom(0, &blockMemo{})
		for it.next() {
			if strings.HasPrefix(it.e.term, wordMark) {
				nwords++; wpos += int64(it.e.posLen); wdl += int64(it.e.docLen)
			} else {
				nterms++; pos += int64(it.e.posLen); dl += int64(it.e.docLen)
			}
		}
	}
	t.Logf("text %d total %d (%.1f%%): positions %d docs %d words-docs %d dict %d cols %d; terms %d words %d",
		text, total, 100*float64(total)/float64(text), pos, dl, wdl, dict, cols, nterms, nwords)
	_ = wpos
}

func TestZZMem(t *testing.T) {
	docs := corpusMails(t)
	base := heapInUse()
	ix := openTest(t, t.TempDir(), func(c *Config){ c.FlushBytes = 1<<30 })
	ix.Add(userA, docs...)
	after := heapInUse()
	u, _ := ix.getUser(userA, false)
	t.Logf("heap +%d MB, estimate %d MB, terms %d", (after-base)>>20, u.buf.buf.bytes>>20, len(u.buf.buf.terms))
}
