package folder

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WalkLimits bound one listing of a folder, so that a hostile tree (a
// deep one, a huge one, a bind mount of a folder inside itself) costs
// bounded time and memory. What lies past a bound is left out and the
// record says so (see walkResult.status).
type WalkLimits struct {
	// MaxDepth is how many levels of sub-folders are walked (64).
	MaxDepth int
	// MaxFiles is how many files one listing keeps (100,000): about 100
	// bytes of memory each while the sync plans.
	MaxFiles int
	// MaxEntries is how many directory entries, hidden ones and folders
	// included, one listing reads (1,000,000).
	MaxEntries int
}

// DefaultWalkLimits returns the limits a zero WalkLimits field takes.
func DefaultWalkLimits() WalkLimits {
	return WalkLimits{MaxDepth: 64, MaxFiles: 100_000, MaxEntries: 1_000_000}
}

func (l WalkLimits) withDefaults() WalkLimits {
	d := DefaultWalkLimits()
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	return l
}

// maxPathBytes bounds a file's path inside the folder as a provider id
// holds it (escaped, see escapePath); a file with a longer one is left
// out, so that its provider id fits items.MaxProviderID.
const maxPathBytes = 1900

// readDirChunk is how many entries of one directory are read at once.
const readDirChunk = 256

// entry is one regular file as a listing found it.
type entry struct {
	path  string // inside the folder, '/'-separated, as the disk spells it
	key   fileKey
	mtime int64 // modification time, Unix nanoseconds
}

// fileKey is what tells a file's content unchanged without reading it:
// its device and inode (which a rename keeps), size and modification
// time in nanoseconds.
type fileKey struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

// walkResult is a listing: the files found, in path order, and what the
// limits left out.
type walkResult struct {
	files     []entry
	deep      int // folders deeper than MaxDepth, not walked
	long      int // files whose path is longer than maxPathBytes
	unread    int // sub-folders that could not be read
	truncated bool
}

// status is the sentence the record shows of the listing: "ok", or what
// was left out and why. It names no file.
func (w walkResult) status(lim WalkLimits) string {
	var parts []string
	if w.truncated {
		parts = append(parts, "the folder holds more than "+strconv.Itoa(lim.MaxFiles)+" files or "+strconv.Itoa(lim.MaxEntries)+
			" entries; the rest is not searched")
	}
	if w.deep > 0 {
		parts = append(parts, plural(w.deep, "folder nested", "folders nested")+" deeper than "+strconv.Itoa(lim.MaxDepth)+
			" levels "+verb(w.deep)+" not searched")
	}
	if w.long > 0 {
		parts = append(parts, plural(w.long, "file has", "files have")+" a path longer than "+strconv.Itoa(maxPathBytes)+
			" bytes and "+verb(w.long)+" not searched")
	}
	if w.unread > 0 {
		parts = append(parts, plural(w.unread, "sub-folder", "sub-folders")+" could not be read")
	}
	if len(parts) == 0 {
		return "ok"
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func verb(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// walk lists the regular files under root, recursively, in path order.
// Hidden files and folders (a leading '.') are skipped, and so are
// symbolic links (never followed: a link to a file of the folder finds
// it at its own path anyway), devices, pipes and sockets. A folder seen
// twice (a bind mount of a folder inside itself) is walked once. Only
// the folder's own failure to open is an error; a sub-folder that cannot
// be read is counted and left out.
func walk(root *os.Root, lim WalkLimits) (walkResult, error) {
	type dir struct {
		path  string
		depth int
	}
	var (
		res     walkResult
		entries int
		stack   = []dir{{".", 0}}
		seen    = map[[2]uint64]bool{}
	)
	for len(stack) > 0 && !res.truncated {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		list, id, err := readDir(root, d.path, lim.MaxEntries-entries)
		if err != nil {
			if d.path == "." {
				return res, err
			}
			res.unread++
			continue
		}
		if id != ([2]uint64{}) {
			if seen[id] {
				continue
			}
			seen[id] = true
		}
		entries += len(list)
		if entries >= lim.MaxEntries {
			res.truncated = true
		}
		var subs []dir
		for _, e := range list {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			p := name
			if d.path != "." {
				p = d.path + "/" + name
			}
			switch t := e.Type(); {
			case t.IsDir():
				if d.depth+1 > lim.MaxDepth {
					res.deep++
					continue
				}
				subs = append(subs, dir{p, d.depth + 1})
			case t.IsRegular():
				if len(escapePath(p)) > maxPathBytes {
					res.long++
					continue
				}
				info, err := e.Info()
				if err != nil || !info.Mode().IsRegular() {
					continue // gone since, or changed kind
				}
				if len(res.files) == lim.MaxFiles {
					res.truncated = true
					continue
				}
				dev, ino := fileID(info)
				mt := info.ModTime().UnixNano()
				res.files = append(res.files, entry{path: p, mtime: mt, key: fileKey{dev: dev, ino: ino, size: info.Size(), mtime: mt}})
			}
		}
		// Pushed in reverse, so that the stack pops them in name order.
		for i := len(subs) - 1; i >= 0; i-- {
			stack = append(stack, subs[i])
		}
	}
	slices.SortFunc(res.files, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	return res, nil
}

// readDir reads up to max entries of the directory p of root, sorted by
// name, with the directory's device and inode.
func readDir(root *os.Root, p string, max int) ([]fs.DirEntry, [2]uint64, error) {
	f, err := root.Open(p)
	if err != nil {
		return nil, [2]uint64{}, err
	}
	defer f.Close()
	var id [2]uint64
	if info, err := f.Stat(); err == nil {
		if !info.IsDir() {
			return nil, id, errors.New("not a directory")
		}
		id[0], id[1] = fileID(info)
	}
	var out []fs.DirEntry
	for len(out) < max {
		chunk, err := f.ReadDir(min(readDirChunk, max-len(out)))
		out = append(out, chunk...)
		if errors.Is(err, io.EOF) || (err == nil && len(chunk) == 0) {
			break
		}
		if err != nil {
			return nil, id, err
		}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, id, nil
}

// escapePath is a path as provider ids and task payloads hold it: both
// go through JSON, which keeps only valid UTF-8, so a byte that is not
// UTF-8, a control character, '%' and '|' are written %XX. unescapePath
// undoes it.
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); {
		r, size := rune(p[i]), 1
		if p[i] >= 0x80 {
			r, size = utf8.DecodeRuneInString(p[i:])
		}
		if (size == 1 && (p[i] < 0x20 || p[i] == 0x7f || p[i] == '%' || p[i] == '|' || p[i] >= 0x80)) || r == utf8.RuneError {
			for j := range size {
				b.WriteByte('%')
				b.WriteString(hex2(p[i+j]))
			}
		} else {
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unescapePath undoes escapePath; ok is false for a string escapePath
// cannot have given.
func unescapePath(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), true
}

func hex2(c byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// cleanName is a file name or path as it is shown (an item's title and
// path): bytes that are not UTF-8, control characters and the
// characters that reorder text on screen (bidirectional controls, which
// could make "gpj.exe" read as "exe.jpg") become U+FFFD.
func cleanName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == utf8.RuneError, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}
