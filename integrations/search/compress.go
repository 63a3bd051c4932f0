package search

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"
)

// Postings and dictionary blocks are compressed before they are sealed
// (compressing after sealing gains nothing): a codec byte, then either the
// block itself (codecRaw) or its DEFLATE stream (codecFlate), whichever
// is shorter. Level 3 takes nearly all that level 6 would, in half the
// time. Varints of small numbers leave much
// for DEFLATE to take; the cache keeps blocks decompressed, so a query
// pays for it only on a cache miss.
const (
	codecRaw   = 0
	codecFlate = 1
	flateLevel = 3
	// maxInflated bounds a decompressed block: a postings block is
	// postBlock bytes, a dictionary block a little over dictBlock.
	maxInflated = postBlock + 64<<10
)

// compressor compresses blocks for one segment writer.
type compressor struct {
	w   *flate.Writer
	buf bytes.Buffer
}

// compress returns the codec byte and block, in a buffer reused by the
// next call.
func (c *compressor) compress(plain []byte) []byte {
	c.buf.Reset()
	c.buf.WriteByte(codecFlate)
	if c.w == nil {
		c.w, _ = flate.NewWriter(&c.buf, flateLevel)
	} else {
		c.w.Reset(&c.buf)
	}
	c.w.Write(plain)
	c.w.Close()
	if c.buf.Len() >= len(plain)+1 {
		c.buf.Reset()
		c.buf.WriteByte(codecRaw)
		c.buf.Write(plain)
	}
	return c.buf.Bytes()
}

// inflaters keeps DEFLATE readers for reuse.
type inflaters struct{ pool sync.Pool }

// decompress undoes compress, into dst's array when it is large enough
// (a block stored raw is returned as a slice of b); a hostile block is an
// error, and never inflates beyond maxInflated.
func (f *inflaters) decompress(dst, b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty block", ErrCorrupt)
	}
	switch b[0] {
	case codecRaw:
		return b[1:], nil
	case codecFlate:
	default:
		return nil, fmt.Errorf("%w: unknown codec", ErrCorrupt)
	}
	src := bytes.NewReader(b[1:])
	r, _ := f.pool.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	defer f.pool.Put(r)
	out := dst[:0]
	if cap(out) == 0 {
		out = make([]byte, 0, min(maxInflated, 4*len(b)+1024))
	}
	out, err := readAllLimit(r, out, maxInflated)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return out, nil
}

func readAllLimit(r io.Reader, out []byte, limit int) ([]byte, error) {
	for {
		if len(out) == cap(out) {
			if len(out) > limit {
				return nil, fmt.Errorf("block inflates beyond %d bytes", limit)
			}
			out = append(out, 0)[:len(out)]
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if err == io.EOF {
			if len(out) > limit {
				return nil, fmt.Errorf("block inflates beyond %d bytes", limit)
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
