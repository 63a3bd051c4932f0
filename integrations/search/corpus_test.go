package search

import (
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
)

// corpusMails returns the test corpus's mails as documents, or skips when
// the corpus is absent (see mailtest.CorpusPath for where it is looked for).
func corpusMails(tb testing.TB) []Doc {
	tb.Helper()
	var docs []Doc
	add := func(raw []byte) {
		m, err := mail.Parse(raw)
		if err != nil {
			return
		}
		docs = append(docs, Doc{
			ID: fmt.Sprintf("m%05d", len(docs)), RecordID: "rec-1", Integration: "imap", Kind: "email",
			Title: m.Subject, From: m.From, To: m.To, Text: m.Text, Date: m.Date,
		})
	}
	for _, raw := range mailtest.Corpus(tb) {
		add(raw)
	}
	return docs
}

// newUUID is a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// TestNothingReadable indexes corpus mails and then looks in every file
// under Dir for any word of eight letters or more of those mails, in the
// mails' spelling or folded to lower case: none may be found.
func TestNothingReadable(t *testing.T) {
	docs := corpusMails(t)[:600]
	dir := t.TempDir()
	ix := openTest(t, dir, func(c *Config) { c.FlushBytes = 256 << 10; c.MergeFactor = 3 })
	for i := 0; i < len(docs); i += 50 {
		ix.Add(userA, docs[i:i+50]...)
	}
	ix.Delete(userA, docs[0].ID)
	ix.SetCheckpoint(99)
	ix.Flush()
	ix.Close()
	words := map[string]bool{}
	for _, d := range docs {
		for _, s := range append([]string{d.Title, d.From, d.Text}, d.To...) {
			for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !isASCIILetter(byte(r)) || r > 127 }) {
				if len(w) >= 8 {
					words[w] = true
					words[strings.ToLower(w)] = true
				}
			}
		}
	}
	if len(words) < 1000 {
		t.Fatalf("only %d words to look for", len(words))
	}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i := 0; i < len(b); {
			if !isASCIILetter(b[i]) {
				i++
				continue
			}
			j := i
			for j < len(b) && isASCIILetter(b[j]) {
				j++
			}
			for s := i; s+8 <= j; s++ {
				for e := s + 8; e <= j && e-s <= 40; e++ {
					if words[string(b[s:e])] {
						t.Errorf("%s holds the word %q at %d", path, b[s:e], s)
					}
				}
			}
			i = j
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Errorf("only %d files under Dir", files)
	}
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
