// Package qr draws QR codes (ISO/IEC 18004 model 2) as SVG, so that the
// second factor's enrolment shows its otpauth:// address as a code a phone
// can scan, made by the service itself with nothing fetched or linked.
//
// It encodes in numeric, alphanumeric or byte mode (the smallest that
// holds the text), at error correction level M (15% of a symbol may be
// lost), in the smallest of the 40 versions that fits, with the mask the
// standard's penalty rules prefer. It imports only the standard library.
package qr

import (
	"errors"
	"fmt"
)

// Level is an error correction level.
type Level int

// The error correction levels, by the share of a symbol they recover.
const (
	L Level = iota // about 7%
	M              // about 15%, the default of Encode
	Q              // about 25%
	H              // about 30%
)

// formatBits is the level's two bits in the format information.
func (l Level) formatBits() int { return [...]int{1, 0, 3, 2}[l] }

// ErrTooLong is returned for text that no version holds at the level.
var ErrTooLong = errors.New("qr: text too long for a QR code")

// Code is a QR symbol: Size × Size modules, dark or light, without the
// quiet zone around it.
type Code struct {
	Version int // 1 to 40
	Size    int // 17 + 4 × Version
	Level   Level
	Mask    int // 0 to 7
	dark    []bool
}

// Dark reports whether the module at column x, row y is dark.
func (c *Code) Dark(x, y int) bool { return c.dark[y*c.Size+x] }

// Encode returns text as a QR code at level M.
func Encode(text string) (*Code, error) { return EncodeLevel([]byte(text), M) }

// EncodeLevel returns data as a QR code at level lvl, in the smallest
// version that holds it.
func EncodeLevel(data []byte, lvl Level) (*Code, error) {
	if lvl < L || lvl > H {
		return nil, fmt.Errorf("qr: unknown level %d", lvl)
	}
	seg := newSegment(data)
	for v := 1; v <= 40; v++ {
		capBits := dataCodewords(v, lvl) * 8
		if n, ok := seg.bitLen(v); ok && n <= capBits {
			cw := seg.codewords(v, capBits)
			return build(v, lvl, addECC(cw, v, lvl)), nil
		}
	}
	return nil, ErrTooLong
}

// build lays out the function patterns and the codewords, then keeps the
// mask with the lowest penalty.
func build(version int, lvl Level, codewords []byte) *Code {
	m := newMatrix(version)
	m.drawFunctions(lvl)
	m.drawCodewords(codewords)
	best, bestPenalty := 0, -1
	for mask := 0; mask < 8; mask++ {
		m.applyMask(mask)
		m.drawFormat(lvl, mask)
		if p := m.penalty(); bestPenalty < 0 || p < bestPenalty {
			best, bestPenalty = mask, p
		}
		m.applyMask(mask) // XOR again: undone
	}
	m.applyMask(best)
	m.drawFormat(lvl, best)
	return &Code{Version: version, Size: m.size, Level: lvl, Mask: best, dark: m.dark}
}
