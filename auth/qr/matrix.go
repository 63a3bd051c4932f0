package qr

// matrix is a symbol being drawn: its modules, and which of them belong
// to function patterns (finders, timing, alignment, format and version
// information), which neither codewords nor masks touch.
type matrix struct {
	version, size int
	dark, fixed   []bool
}

func newMatrix(version int) *matrix {
	size := 17 + 4*version
	return &matrix{version: version, size: size, dark: make([]bool, size*size), fixed: make([]bool, size*size)}
}

// set draws a function module at column x, row y.
func (m *matrix) set(x, y int, dark bool) {
	m.dark[y*m.size+x] = dark
	m.fixed[y*m.size+x] = true
}

// drawFunctions draws every function pattern and reserves the format
// information's modules (drawn for each mask in drawFormat).
func (m *matrix) drawFunctions(lvl Level) {
	for i := 0; i < m.size; i++ { // timing patterns
		m.set(6, i, i%2 == 0)
		m.set(i, 6, i%2 == 0)
	}
	m.drawFinder(3, 3)
	m.drawFinder(m.size-4, 3)
	m.drawFinder(3, m.size-4)
	pos := alignmentPositions(m.version)
	for i, y := range pos {
		for j, x := range pos {
			// Not where a finder is.
			if (i == 0 && j == 0) || (i == 0 && j == len(pos)-1) || (i == len(pos)-1 && j == 0) {
				continue
			}
			m.drawAlignment(x, y)
		}
	}
	m.drawFormat(lvl, 0)
	m.drawVersion()
}

// drawFinder draws a finder pattern centred on x, y with its light
// separator, clipped to the symbol.
func (m *matrix) drawFinder(x, y int) {
	for dy := -4; dy <= 4; dy++ {
		for dx := -4; dx <= 4; dx++ {
			xx, yy := x+dx, y+dy
			if xx < 0 || xx >= m.size || yy < 0 || yy >= m.size {
				continue
			}
			d := max(abs(dx), abs(dy)) // rings: 0–1 dark, 2 light, 3 dark, 4 light
			m.set(xx, yy, d != 2 && d != 4)
		}
	}
}

// drawAlignment draws a 5 × 5 alignment pattern centred on x, y.
func (m *matrix) drawAlignment(x, y int) {
	for dy := -2; dy <= 2; dy++ {
		for dx := -2; dx <= 2; dx++ {
			m.set(x+dx, y+dy, max(abs(dx), abs(dy)) != 1)
		}
	}
}

// alignmentPositions returns the rows (and columns) of version v's
// alignment patterns: 6, then evenly spaced by an even step to size − 7.
func alignmentPositions(v int) []int {
	if v == 1 {
		return nil
	}
	n := v/7 + 2
	step := 26
	if v != 32 {
		step = (v*4 + n*2 + 1) / (n*2 - 2) * 2
	}
	pos := make([]int, n)
	pos[0] = 6
	for i, p := n-1, v*4+10; i >= 1; i, p = i-1, p-step {
		pos[i] = p
	}
	return pos
}

// drawFormat draws the 15 format bits (level, mask, BCH check) in both
// copies, and the dark module beside the lower-left finder.
func (m *matrix) drawFormat(lvl Level, mask int) {
	data := lvl.formatBits()<<3 | mask
	rem := data
	for i := 0; i < 10; i++ {
		rem = rem<<1 ^ (rem>>9)*0x537
	}
	bits := (data<<10 | rem) ^ 0x5412
	bit := func(i int) bool { return bits>>i&1 == 1 }
	for i := 0; i <= 5; i++ {
		m.set(8, i, bit(i))
	}
	m.set(8, 7, bit(6))
	m.set(8, 8, bit(7))
	m.set(7, 8, bit(8))
	for i := 9; i < 15; i++ {
		m.set(14-i, 8, bit(i))
	}
	for i := 0; i < 8; i++ {
		m.set(m.size-1-i, 8, bit(i))
	}
	for i := 8; i < 15; i++ {
		m.set(8, m.size-15+i, bit(i))
	}
	m.set(8, m.size-8, true)
}

// drawVersion draws the 18 version bits (version 7 and up) beside the
// upper-right and lower-left finders.
func (m *matrix) drawVersion() {
	if m.version < 7 {
		return
	}
	rem := m.version
	for i := 0; i < 12; i++ {
		rem = rem<<1 ^ (rem>>11)*0x1F25
	}
	bits := m.version<<12 | rem
	for i := 0; i < 18; i++ {
		dark := bits>>i&1 == 1
		a, b := m.size-11+i%3, i/3
		m.set(a, b, dark)
		m.set(b, a, dark)
	}
}

// drawCodewords places the codewords' bits in the modules no function
// pattern holds: in columns two wide from the right, up then down,
// skipping the vertical timing pattern. Remainder modules stay light.
func (m *matrix) drawCodewords(cw []byte) {
	i := 0
	for right := m.size - 1; right >= 1; right -= 2 {
		if right == 6 {
			right = 5
		}
		for vert := 0; vert < m.size; vert++ {
			for j := 0; j < 2; j++ {
				x := right - j
				y := vert
				if (right+1)&2 == 0 { // upward
					y = m.size - 1 - vert
				}
				if m.fixed[y*m.size+x] || i >= len(cw)*8 {
					continue
				}
				m.dark[y*m.size+x] = cw[i/8]>>(7-i%8)&1 == 1
				i++
			}
		}
	}
}

// applyMask flips the non-function modules that mask selects; applying
// it twice undoes it.
func (m *matrix) applyMask(mask int) {
	for y := 0; y < m.size; y++ {
		for x := 0; x < m.size; x++ {
			if m.fixed[y*m.size+x] {
				continue
			}
			var flip bool
			switch mask {
			case 0:
				flip = (x+y)%2 == 0
			case 1:
				flip = y%2 == 0
			case 2:
				flip = x%3 == 0
			case 3:
				flip = (x+y)%3 == 0
			case 4:
				flip = (x/3+y/2)%2 == 0
			case 5:
				flip = x*y%2+x*y%3 == 0
			case 6:
				flip = (x*y%2+x*y%3)%2 == 0
			case 7:
				flip = ((x+y)%2+x*y%3)%2 == 0
			}
			if flip {
				m.dark[y*m.size+x] = !m.dark[y*m.size+x]
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
