package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCopyFilesTwice: backup copies the item packs before the main store
// and again after it. The second copy adds what is new, copies again a
// pack that grew, leaves one of the same size, and keeps what the first
// copied of a pack removed meanwhile (a compaction), which the copied
// log may still name.
func TestCopyFilesTwice(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "items")
	rec := filepath.Join(src, "r1")
	os.MkdirAll(rec, 0o700)
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(rec, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("pack-1", "aaa")
	write("pack-2", "bbb")
	if n, err := copyFiles(src, dst); n != 2 || err != nil {
		t.Fatalf("first copy: %d files, %v; want 2", n, err)
	}
	f, _ := os.OpenFile(filepath.Join(rec, "pack-2"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("BBB")
	f.Close()
	write("pack-3", "ccc")
	os.Remove(filepath.Join(rec, "pack-1"))
	if n, err := copyFiles(src, dst); n != 1 || err != nil {
		t.Fatalf("second copy: %d new files, %v; want 1", n, err)
	}
	for name, want := range map[string]string{"pack-1": "aaa", "pack-2": "bbbBBB", "pack-3": "ccc"} {
		b, err := os.ReadFile(filepath.Join(dst, "r1", name))
		if err != nil || string(b) != want {
			t.Errorf("%s in the backup: %q, %v; want %q", name, b, err, want)
		}
	}
}
