package search

import (
	"encoding/binary"
	"fmt"
)

// reader decodes a plaintext block; the first error sticks and every
// later read returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad varint", ErrCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad varint", ErrCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: length past the end", ErrCorrupt)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) string(limit uint64) string {
	n := r.uvarint()
	if n > limit {
		r.err = fmt.Errorf("%w: string too long", ErrCorrupt)
		return ""
	}
	return string(r.bytes(n))
}

// skipString passes over a string as string reads it, without making
// it: a merge copies stored records whole (skipStored), and a string of
// each of their fields was most of what it allocated.
func (r *reader) skipString(limit uint64) {
	n := r.uvarint()
	if n > limit {
		r.err = fmt.Errorf("%w: string too long", ErrCorrupt)
		return
	}
	r.bytes(n)
}

// count reads a count of items each at least size bytes long, refusing
// one that the rest of the block cannot hold.
func (r *reader) count(size int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/size) {
		r.err = fmt.Errorf("%w: count past the end", ErrCorrupt)
		return 0
	}
	return int(n)
}
