// Package mailtest gives tests and benchmarks the project's test corpus:
// 6,046 real mails of the Apache SpamAssassin public corpus, kept beside
// the repository (shared/corpora/spamassassin.mbox.gz), never in it.
package mailtest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// CorpusPath finds the corpus: shared/corpora beside the repository root
// (the folder holding go.mod) or beside one of its parents, where a git
// worktree is nested deeper. It skips the test when the corpus is absent.
func CorpusPath(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the package")
		}
		dir = parent
	}
	rel := filepath.Join("shared", "corpora", "spamassassin.mbox.gz")
	for d := dir; ; {
		p := filepath.Join(d, "..", rel)
		if _, err := os.Stat(p); err == nil {
			return p
		} else if !errors.Is(err, fs.ErrNotExist) {
			tb.Fatal(err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			tb.Skipf("the test corpus ../%s is absent beside %s and its parents", rel, dir)
		}
		d = parent
	}
}

// Corpus returns the corpus's mails, raw, in mbox order.
func Corpus(tb testing.TB) [][]byte {
	tb.Helper()
	f, err := os.Open(CorpusPath(tb))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 64<<20)
	var msg bytes.Buffer
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte("From ")) && msg.Len() > 0 {
			out = append(out, bytes.Clone(msg.Bytes()))
			msg.Reset()
		}
		msg.Write(line)
		msg.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return append(out, bytes.Clone(msg.Bytes()))
}
