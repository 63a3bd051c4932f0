package folder

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzProviderID: any path, as a disk may spell it (any bytes), makes a
// provider id that is valid UTF-8 (it goes through JSON), holds no
// control character, and parses back to the same path and key; and no
// string makes parseProviderID panic.
func FuzzProviderID(f *testing.F) {
	for _, s := range []string{"a.txt", "sub/b.md", "\x1b[31m.txt", "\u202Eexe.txt", "bad\xff.txt", "100%|x", "", "%", "%zz", "file|1:2|3|4|a%2"} {
		f.Add(s, uint64(2049), uint64(77), int64(12), int64(1700000000123456789))
	}
	f.Fuzz(func(t *testing.T, p string, dev, ino uint64, size, mtime int64) {
		if p != "" {
			k := fileKey{dev: dev, ino: ino, size: size, mtime: mtime}
			pid := providerID(p, k)
			if !utf8.ValidString(pid) || strings.ContainsFunc(pid, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("provider id %q of %q is not clean text", pid, p)
			}
			gp, gk, ok := parseProviderID(pid)
			if !ok || gp != p || gk != k {
				t.Fatalf("%q: parsed back %q %+v %v, want %q %+v", pid, gp, gk, ok, p, k)
			}
			if c := cleanName(p); !utf8.ValidString(c) || strings.ContainsAny(c, "\x00\n\r\x1b\u202e\u2066") {
				t.Fatalf("cleanName(%q) = %q keeps a dangerous character", p, c)
			}
		}
		parseProviderID(p) // any string: no panic
	})
}
