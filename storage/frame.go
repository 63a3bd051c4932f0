package storage

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
	"unicode/utf8"
)

// A log line is one JSON object, so jq can read the log:
//
//	{"crc":"1a2b3c4d","d":{"seq":7,"ops":[{"t":"users","id":"u1","v":{...}},{"t":"sessions","id":"s9","del":true}]}}\n
//
// The checksum is CRC32C (Castagnoli) of exactly the bytes of the "d" value,
// as 8 lower-case hex digits. The layout around "d" is fixed, so the checksum
// is verified by slicing (d = line[22:len(line)-1]) before any JSON parsing.
const (
	framePrefix = `{"crc":"`
	frameMid    = `","d":`
	dataStart   = len(framePrefix) + 8 + len(frameMid) // 22
	seqPrefix   = `{"seq":`
	opsPrefix   = `,"ops":`
)

// castagnoli is read-only after package initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// lineBuilder assembles one log line of ops into a reusable buffer.
type lineBuilder struct {
	buf  []byte
	nops int
}

// reset starts a new line with sequence number seq.
func (lb *lineBuilder) reset(seq uint64) {
	lb.buf = append(lb.buf[:0], framePrefix...)
	lb.buf = append(lb.buf, "00000000"...)
	lb.buf = append(lb.buf, frameMid...)
	lb.buf = append(lb.buf, seqPrefix...)
	lb.buf = strconv.AppendUint(lb.buf, seq, 10)
	lb.buf = append(lb.buf, opsPrefix...)
	lb.buf = append(lb.buf, '[')
	lb.nops = 0
}

// mark returns the current length, for truncating back to it with rollback.
func (lb *lineBuilder) mark() (int, int) { return len(lb.buf), lb.nops }

// rollback forgets every op added after mark.
func (lb *lineBuilder) rollback(n, nops int) { lb.buf, lb.nops = lb.buf[:n], nops }

// addPut appends a put op, the record's whole value, and returns where
// the value starts in the line.
func (lb *lineBuilder) addPut(table, id string, value []byte) int {
	lb.opStart(table, id)
	lb.buf = append(lb.buf, `,"v":`...)
	at := len(lb.buf)
	lb.buf = append(lb.buf, value...)
	lb.buf = append(lb.buf, '}')
	return at
}

// addDelete appends a delete op.
func (lb *lineBuilder) addDelete(table, id string) {
	lb.opStart(table, id)
	lb.buf = append(lb.buf, `,"del":true}`...)
}

func (lb *lineBuilder) opStart(table, id string) {
	if lb.nops > 0 {
		lb.buf = append(lb.buf, ',')
	}
	lb.nops++
	lb.buf = append(lb.buf, `{"t":`...)
	lb.buf = appendJSONString(lb.buf, table)
	lb.buf = append(lb.buf, `,"id":`...)
	lb.buf = appendJSONString(lb.buf, id)
}

// finish closes the line, fills in the checksum and returns the line,
// newline included. The result aliases the builder's buffer.
func (lb *lineBuilder) finish() []byte {
	lb.buf = append(lb.buf, "]}}\n"...)
	d := lb.buf[dataStart : len(lb.buf)-2]
	putHex32(lb.buf[len(framePrefix):], crc32.Checksum(d, castagnoli))
	return lb.buf
}

const hexDigits = "0123456789abcdef"

func putHex32(dst []byte, v uint32) {
	for i := 7; i >= 0; i-- {
		dst[i] = hexDigits[v&0xf]
		v >>= 4
	}
}

func parseHex32(b []byte) (uint32, bool) {
	var v uint32
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uint32(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// appendJSONString appends s as a JSON string. s must be valid UTF-8 (the
// store rejects ids that are not); only the escapes JSON requires are used.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, `\u00`...)
			dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// validID reports whether id can be logged and read back unchanged.
func validID(id string) bool { return id != "" && utf8.ValidString(id) }

// parseLine checks one line (without its newline): the fixed frame, the
// checksum and the sequence number. It returns the sequence number and the
// bytes of the ops array, or a reason the line is bad. Only a line with a
// matching checksum can yield ops.
func parseLine(line []byte) (seq uint64, ops []byte, reason string) {
	if len(line) < dataStart+len(seqPrefix)+len(opsPrefix)+4 {
		return 0, nil, "line too short"
	}
	if string(line[:len(framePrefix)]) != framePrefix ||
		string(line[len(framePrefix)+8:dataStart]) != frameMid ||
		line[len(line)-1] != '}' {
		return 0, nil, "bad frame"
	}
	want, ok := parseHex32(line[len(framePrefix) : len(framePrefix)+8])
	if !ok {
		return 0, nil, "bad checksum digits"
	}
	d := line[dataStart : len(line)-1]
	if got := crc32.Checksum(d, castagnoli); got != want {
		return 0, nil, fmt.Sprintf("checksum mismatch: got %08x, want %08x", got, want)
	}
	// The checksum matched, so these bytes are what the store wrote; the
	// checks below only guard against a writer bug.
	if !bytes.HasPrefix(d, []byte(seqPrefix)) {
		return 0, nil, "bad record header"
	}
	rest := d[len(seqPrefix):]
	n := 0
	for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
		if n == 19 || (n > 0 && seq == 0) { // at most 19 digits, no leading zero
			return 0, nil, "bad sequence number"
		}
		seq = seq*10 + uint64(rest[n]-'0')
		n++
	}
	if n == 0 {
		return 0, nil, "bad sequence number"
	}
	rest = rest[n:]
	if !bytes.HasPrefix(rest, []byte(opsPrefix)) || rest[len(rest)-1] != '}' {
		return 0, nil, "bad record header"
	}
	ops = rest[len(opsPrefix) : len(rest)-1]
	if len(ops) < 2 || ops[0] != '[' || ops[len(ops)-1] != ']' {
		return 0, nil, "bad ops array"
	}
	return seq, ops, ""
}
