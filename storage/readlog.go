package storage

import (
	"bytes"
	"fmt"
	"io"
)

// lineReader splits a stream on '\n' without a line-length cap, and hands
// back a final unterminated line as incomplete rather than as whole (which is
// what bufio.Scanner would do with a torn last line).
type lineReader struct {
	r        io.Reader
	buf      []byte
	pos, end int   // unread bytes are buf[pos:end]
	off      int64 // file offset of buf[pos]
	eof      bool
}

const readChunk = 64 << 10

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, buf: make([]byte, readChunk)}
}

// newBytesLineReader reads lines out of data, handing back slices of it.
func newBytesLineReader(data []byte) *lineReader {
	return &lineReader{buf: data, end: len(data), eof: true}
}

// next returns the next line without its newline, the line's offset, and
// whether a newline ended it. The line aliases an internal buffer and is valid
// until the next call. ok is false at the end of the stream.
func (lr *lineReader) next() (line []byte, off int64, complete, ok bool, err error) {
	scanned := 0 // bytes of buf[pos:end] known to hold no newline
	for {
		if i := bytes.IndexByte(lr.buf[lr.pos+scanned:lr.end], '\n'); i >= 0 {
			n := scanned + i
			line, off = lr.buf[lr.pos:lr.pos+n], lr.off
			lr.pos += n + 1
			lr.off += int64(n + 1)
			return line, off, true, true, nil
		}
		scanned = lr.end - lr.pos
		if lr.eof {
			if scanned == 0 {
				return nil, lr.off, false, false, nil
			}
			line, off = lr.buf[lr.pos:lr.end], lr.off
			lr.off += int64(scanned)
			lr.pos = lr.end
			return line, off, false, true, nil
		}
		if lr.pos > 0 { // move the partial line to the front
			copy(lr.buf, lr.buf[lr.pos:lr.end])
			lr.end -= lr.pos
			lr.pos = 0
		}
		if lr.end == len(lr.buf) {
			lr.buf = append(lr.buf, make([]byte, len(lr.buf))...)
		}
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if err == io.EOF {
			lr.eof = true
		} else if err != nil {
			return nil, lr.off, false, false, err
		}
	}
}

// fileOffset returns where part, a slice of the line that next last
// returned (at file offset off), starts in the file, or -1 if it is not
// such a slice.
func (lr *lineReader) fileOffset(off int64, part []byte) int64 {
	start := lr.pos - int(lr.off-off) // the line's index in buf
	i := cap(lr.buf) - cap(part)
	if len(part) == 0 || start < 0 || i < start || i >= lr.end || &lr.buf[:cap(lr.buf)][i] != &part[0] {
		return -1
	}
	return off + int64(i-start)
}

// scanResult describes what scanLog read.
type scanResult struct {
	Lines   int    // valid lines passed to the callback
	LastSeq uint64 // sequence number of the last valid line (0: none)
	End     int64  // offset just past the last valid line
	Size    int64  // bytes read in all
	Torn    string // why the tail after End is not a record ("" if Size == End)
}

// TornBytes is the size of the unusable tail after the valid records.
func (r scanResult) TornBytes() int64 { return r.Size - r.End }

// scanLog reads a log file and calls fn, in order, for each line whose
// checksum matches and whose sequence number follows the previous one
// (starting at 1). fn's ops alias a buffer valid only during the call.
// It reads r in chunks, so a log of any size takes little memory.
//
// Only an incomplete last line (no newline after it) is a torn tail: the
// one write a crash can leave half done, never acknowledged. The result
// says where the valid records end. Any complete line that is not a valid
// record, the last one included, is damage, returned as a *CorruptError:
// the store writes whole lines and acknowledges them once synced, so a bad
// complete line is an acknowledged record the disk lost. A line with a
// valid checksum but the wrong sequence number is damage too. An error
// from fn is returned as is.
func scanLog(r io.Reader, name string, fn func(off int64, seq uint64, ops []byte) error) (scanResult, error) {
	return scanLines(newLineReader(r), name, fn)
}

// scanLines is scanLog on a lineReader. With a newBytesLineReader, the ops
// passed to fn are slices of its data.
func scanLines(lr *lineReader, name string, fn func(off int64, seq uint64, ops []byte) error) (scanResult, error) {
	var res scanResult
	for {
		line, off, complete, ok, err := lr.next()
		if err != nil {
			return res, fmt.Errorf("read %s: %w", name, err)
		}
		if !ok {
			break
		}
		res.Size = lr.off
		if !complete {
			res.Torn = "incomplete last line"
			break
		}
		seq, ops, reason := parseLine(line)
		if reason != "" {
			return res, &CorruptError{File: name, Offset: off, Reason: reason}
		}
		if seq != res.LastSeq+1 {
			return res, &CorruptError{File: name, Offset: off,
				Reason: fmt.Sprintf("sequence number %d, want %d", seq, res.LastSeq+1)}
		}
		if err := fn(off, seq, ops); err != nil {
			return res, err
		}
		res.Lines++
		res.LastSeq = seq
		res.End = lr.off
	}
	return res, nil
}

// findValidFrame returns the index, at or after from, of a `{"crc":"` in
// line that starts a frame with a valid checksum running to the end of the
// line, or -1. An unterminated line holds no valid frame: it may be torn.
func findValidFrame(line []byte, complete bool, from int) int {
	if !complete {
		return -1
	}
	for from < len(line) {
		i := bytes.Index(line[from:], []byte(framePrefix))
		if i < 0 {
			return -1
		}
		p := from + i
		if _, _, reason := parseLine(line[p:]); reason == "" {
			return p
		}
		from = p + 1
	}
	return -1
}
