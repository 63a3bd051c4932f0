package extract

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// archive is an opened zip file (an Office or OpenDocument file) whose
// entries are read within the limits: what each may inflate to, and all of
// them together.
type archive struct {
	zr       *zip.Reader
	lim      Limits
	inflated int64 // bytes inflated so far, all entries
	// byName indexes the entries by name; scanned counts the entries
	// looked at to build it.
	byName  map[string]*zip.File
	scanned int
}

// openZip opens data as a zip archive. Before archive/zip reads the
// central directory (it allocates for every entry listed), the directory
// is counted by hand, so that a file listing millions of tiny entries is
// refused for the memory it would cost.
func openZip(data []byte, lim Limits) (*archive, error) {
	if err := countEntries(data, lim.MaxEntries); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: zip: %w", ErrMalformed, err)
	}
	if len(zr.File) > lim.MaxEntries {
		return nil, fmt.Errorf("%w: more than %d zip entries", ErrLimit, lim.MaxEntries)
	}
	return &archive{zr: zr, lim: lim}, nil
}

// Zip record signatures and sizes (APPNOTE.TXT 4.3.12, 4.3.16).
const (
	sigDirectory  = 0x02014b50
	sigEndOfDir   = 0x06054b50
	dirHeaderSize = 46
	endOfDirSize  = 22
	maxZipComment = 0xFFFF
	zip64Sentinel = 0xFFFFFFFF
)

// countEntries finds the end of central directory record and walks the
// directory it points to, failing with ErrLimit past max entries. What it
// cannot find is left to archive/zip to refuse.
func countEntries(data []byte, limit int) error {
	from := max(0, len(data)-endOfDirSize-maxZipComment)
	end := -1
	for i := len(data) - endOfDirSize; i >= from; i-- {
		if binary.LittleEndian.Uint32(data[i:]) == sigEndOfDir {
			end = i
			break
		}
	}
	if end < 0 {
		return nil
	}
	if records := int(binary.LittleEndian.Uint16(data[end+10:])); records > limit {
		return fmt.Errorf("%w: more than %d zip entries", ErrLimit, limit)
	}
	off := int64(binary.LittleEndian.Uint32(data[end+16:]))
	if off == zip64Sentinel {
		return nil
	}
	for n := 0; off+dirHeaderSize <= int64(len(data)); n++ {
		h := data[off:]
		if binary.LittleEndian.Uint32(h) != sigDirectory {
			return nil
		}
		if n >= limit {
			return fmt.Errorf("%w: more than %d zip entries", ErrLimit, limit)
		}
		off += dirHeaderSize + int64(binary.LittleEndian.Uint16(h[28:])) +
			int64(binary.LittleEndian.Uint16(h[30:])) + int64(binary.LittleEndian.Uint16(h[32:]))
	}
	return nil
}

// file returns the entry called name, or nil; of entries of the same
// name, the first. The names are indexed on the first lookup, so that a
// hostile file of 10,000 entries costs one pass, not one per lookup.
func (a *archive) file(name string) *zip.File {
	if a.byName == nil {
		a.byName = make(map[string]*zip.File, len(a.zr.File))
		for _, f := range a.zr.File {
			a.scanned++
			if _, dup := a.byName[f.Name]; !dup {
				a.byName[f.Name] = f
			}
		}
	}
	return a.byName[name]
}

// open opens the entry f for reading within the inflate limits. An entry
// that says it is larger than the per-entry limit is refused unread; one
// that lies is stopped when it passes it.
func (a *archive) open(f *zip.File) (io.ReadCloser, error) {
	if f.UncompressedSize64 > uint64(a.lim.MaxInflate) {
		return nil, fmt.Errorf("%w: a zip entry inflates past %d bytes", ErrLimit, a.lim.MaxInflate)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: zip entry: %w", ErrMalformed, err)
	}
	return &inflateReader{rc: rc, a: a, left: a.lim.MaxInflate}, nil
}

// inflateReader reads an entry, failing with ErrLimit once it or the
// archive as a whole inflates past its limit.
type inflateReader struct {
	rc   io.ReadCloser
	a    *archive
	left int64
}

func (r *inflateReader) Read(p []byte) (int, error) {
	if r.left <= 0 || r.a.inflated >= r.a.lim.MaxInflateTotal {
		// One more byte shows whether the entry really goes on.
		var one [1]byte
		n, err := r.rc.Read(one[:])
		if n == 0 {
			if err == nil {
				err = io.ErrNoProgress
			}
			return 0, err
		}
		if r.left <= 0 {
			return 0, fmt.Errorf("%w: a zip entry inflates past %d bytes", ErrLimit, r.a.lim.MaxInflate)
		}
		return 0, fmt.Errorf("%w: zip entries inflate past %d bytes in all", ErrLimit, r.a.lim.MaxInflateTotal)
	}
	p = p[:min(int64(len(p)), r.left, r.a.lim.MaxInflateTotal-r.a.inflated)]
	n, err := r.rc.Read(p)
	r.left -= int64(n)
	r.a.inflated += int64(n)
	if err != nil && err != io.EOF && !errors.Is(err, ErrLimit) {
		err = fmt.Errorf("%w: zip entry: %w", ErrMalformed, err)
	}
	return n, err
}

func (r *inflateReader) Close() error { return r.rc.Close() }

// zipType tells an Office or OpenDocument file by the entries it holds,
// for a file whose name has no known extension.
func zipType(data []byte, lim Limits) Type {
	a, err := openZip(data, lim)
	if err != nil {
		return TypeOther
	}
	for _, probe := range []struct {
		entry string
		typ   Type
	}{
		{"word/document.xml", TypeDOCX},
		{"xl/workbook.xml", TypeXLSX},
		{"ppt/presentation.xml", TypePPTX},
	} {
		if a.file(probe.entry) != nil {
			return probe.typ
		}
	}
	if f := a.file("mimetype"); f != nil && f.UncompressedSize64 < 128 {
		if rc, err := a.open(f); err == nil {
			b, _ := io.ReadAll(rc)
			rc.Close()
			if string(b) == "application/vnd.oasis.opendocument.text" {
				return TypeODT
			}
		}
	}
	return TypeOther
}
