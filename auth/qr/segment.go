package qr

import "strings"

// mode is how a segment's characters become bits.
type mode int

const (
	numeric      mode = iota // digits, three in 10 bits
	alphanumeric             // alnumChars, two in 11 bits
	byteMode                 // any byte, in 8 bits
)

// alnumChars are the 45 characters of alphanumeric mode, by value.
const alnumChars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"

// indicator is the mode's four bits at the head of a segment.
func (m mode) indicator() uint32 { return [...]uint32{1, 2, 4}[m] }

// countBits is the width of the character count for version v.
func (m mode) countBits(v int) int {
	i := 0
	switch {
	case v >= 27:
		i = 2
	case v >= 10:
		i = 1
	}
	return [...][3]int{{10, 12, 14}, {9, 11, 13}, {8, 16, 16}}[m][i]
}

// segment is the whole text in the one mode that holds it in fewest bits.
type segment struct {
	mode mode
	data []byte
}

func newSegment(data []byte) segment {
	m := numeric
	for _, b := range data {
		switch {
		case b >= '0' && b <= '9':
		case strings.IndexByte(alnumChars, b) >= 0:
			m = max(m, alphanumeric)
		default:
			m = byteMode
		}
	}
	return segment{mode: m, data: data}
}

// bitLen is the segment's length in bits at version v, and false when its
// character count does not fit the count field.
func (s segment) bitLen(v int) (int, bool) {
	n := len(s.data)
	if n >= 1<<s.mode.countBits(v) {
		return 0, false
	}
	bits := 4 + s.mode.countBits(v)
	switch s.mode {
	case numeric:
		bits += n/3*10 + [...]int{0, 4, 7}[n%3]
	case alphanumeric:
		bits += n/2*11 + n%2*6
	default:
		bits += n * 8
	}
	return bits, true
}

// codewords returns the data codewords of version v: the segment, a
// terminator of up to four zero bits, zeros to a byte boundary, then the
// pad bytes 0xEC and 0x11 in turn up to capBits.
func (s segment) codewords(v, capBits int) []byte {
	var b bitBuffer
	b.put(s.mode.indicator(), 4)
	b.put(uint32(len(s.data)), s.mode.countBits(v))
	switch s.mode {
	case numeric:
		for i := 0; i < len(s.data); i += 3 {
			group := s.data[i:min(i+3, len(s.data))]
			n := uint32(0)
			for _, d := range group {
				n = n*10 + uint32(d-'0')
			}
			b.put(n, len(group)*3+1)
		}
	case alphanumeric:
		for i := 0; i < len(s.data); i += 2 {
			n := uint32(strings.IndexByte(alnumChars, s.data[i]))
			if i+1 < len(s.data) {
				b.put(n*45+uint32(strings.IndexByte(alnumChars, s.data[i+1])), 11)
			} else {
				b.put(n, 6)
			}
		}
	default:
		for _, c := range s.data {
			b.put(uint32(c), 8)
		}
	}
	b.put(0, min(4, capBits-b.n))
	b.put(0, (8-b.n%8)%8)
	for pad := uint32(0xEC); b.n < capBits; pad ^= 0xEC ^ 0x11 {
		b.put(pad, 8)
	}
	return b.bytes
}

// bitBuffer appends bits, most significant first.
type bitBuffer struct {
	bytes []byte
	n     int // bits written
}

func (b *bitBuffer) put(v uint32, width int) {
	for i := width - 1; i >= 0; i-- {
		if b.n%8 == 0 {
			b.bytes = append(b.bytes, 0)
		}
		if v>>i&1 == 1 {
			b.bytes[b.n/8] |= 0x80 >> (b.n % 8)
		}
		b.n++
	}
}
