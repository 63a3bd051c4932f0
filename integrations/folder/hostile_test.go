package folder_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"searchsvc/integrations/folder"
)

// TestHostileTree: a tree deeper than the limit, a symbolic link loop, a
// link to the folder's parent, names with control, bidirectional and
// non-UTF-8 bytes, and an extractor bomb. The sync ends, stores what is
// within the limits, shows every name with the dangerous characters
// replaced, reads what the names point to once each, and says on the
// record what it left out.
func TestHostileTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "share")
	deep := dir
	for i := range 8 {
		deep = filepath.Join(deep, "d"+string(rune('0'+i)))
	}
	write(t, filepath.Join(deep, "too-deep.txt"), "never read", day)
	write(t, filepath.Join(dir, "d0", "d1", "shallow.txt"), "within the limit", day)
	for _, l := range []struct{ target, name string }{{".", "loop"}, {"..", "parent"}, {"loop", "loop2"}} {
		if err := os.Symlink(l.target, filepath.Join(dir, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	names := map[string]string{
		"\x1b[31mred.txt":      "\uFFFD[31mred.txt",
		"\u202Egpj.exe.txt":    "\uFFFDgpj.exe.txt",
		"bad\xff\xfename.txt":  "bad\uFFFDname.txt",
		"new\nline|pipe%.txt":  "new\uFFFDline|pipe%.txt",
		"ok \u00e9t\u00e9.txt": "ok \u00e9t\u00e9.txt",
	}
	for name := range names {
		write(t, filepath.Join(dir, name), "content of "+name, day)
	}
	// A zip bomb named .docx: the extractor's limits stop it.
	write(t, filepath.Join(dir, "bomb.docx"), "PK\x03\x04"+strings.Repeat("\x00", 4096), day)

	r := newRig(t, dir, folder.Config{Walk: folder.WalkLimits{MaxDepth: 4}})
	opened := r.sync()
	got := r.byPath()
	if _, ok := got["d0/d1/shallow.txt"]; !ok {
		t.Errorf("d0/d1/shallow.txt not stored; got %d items", len(got))
	}
	for p, it := range got {
		if strings.HasPrefix(p, "loop") || strings.HasPrefix(p, "parent") || strings.Contains(p, "too-deep") {
			t.Errorf("stored %q through a link or past the depth limit", p)
		}
		if !utf8.ValidString(it.Title) || strings.ContainsAny(it.Title, "\x1b\n\u202E") {
			t.Errorf("title %q keeps a dangerous character", it.Title)
		}
	}
	for _, want := range names {
		if it, ok := got[want]; !ok || it.Title != want {
			t.Errorf("name %q: got %+v (ok %v)", want, it, ok)
		}
	}
	if _, ok := got["bomb.docx"]; !ok {
		t.Errorf("bomb.docx not stored by name")
	}
	// shallow.txt, the five names and the bomb: each opened once.
	if opened != 7 {
		t.Errorf("opened %d files, want 7", opened)
	}
	kept, err := r.fx.Syncer.KeptState(r.fx.Record(r.rec))
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 folder nested deeper than 4 levels is not searched"; kept["status"] != want {
		t.Errorf("record status: got %q, want %q", kept["status"], want)
	}
	// The names survive a rescan: the escaped paths read back.
	if n := r.sync(); n != 0 {
		t.Errorf("rescan opened %d files, want 0", n)
	}
	if len(r.byPath()) != len(got) {
		t.Errorf("rescan: %d items, want %d", len(r.byPath()), len(got))
	}
}

// TestTooManyFiles: a folder with more files than MaxFiles keeps the
// first ones, in path order, and says so on the record.
func TestTooManyFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "many")
	for i := range 12 {
		write(t, filepath.Join(dir, string(rune('a'+i))+".txt"), "x", day)
	}
	r := newRig(t, dir, folder.Config{Walk: folder.WalkLimits{MaxFiles: 10}})
	r.sync()
	if n := len(r.byPath()); n != 10 {
		t.Errorf("got %d items, want 10", n)
	}
	kept, err := r.fx.Syncer.KeptState(r.fx.Record(r.rec))
	if err != nil {
		t.Fatal(err)
	}
	if want := "the folder holds more than 10 files or 1000000 entries; the rest is not searched"; kept["status"] != want {
		t.Errorf("record status: got %q, want %q", kept["status"], want)
	}
}
