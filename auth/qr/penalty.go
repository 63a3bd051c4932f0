package qr

// penalty scores the symbol by the standard's four rules; the mask with
// the lowest score is the one a reader finds easiest: long runs of one
// colour, 2 × 2 blocks of one colour, patterns that look like a finder,
// and a balance of dark and light far from half.
func (m *matrix) penalty() int {
	p := 0
	at := func(x, y int, transpose bool) bool {
		if transpose {
			x, y = y, x
		}
		return m.dark[y*m.size+x]
	}
	for _, tr := range []bool{false, true} {
		for y := 0; y < m.size; y++ {
			run := 1
			for x := 1; x <= m.size; x++ {
				if x < m.size && at(x, y, tr) == at(x-1, y, tr) {
					run++
					continue
				}
				if run >= 5 {
					p += 3 + run - 5
				}
				run = 1
			}
			for x := 0; x+11 <= m.size; x++ {
				if m.finderLike(x, y, tr, at) {
					p += 40
				}
			}
		}
	}
	dark := 0
	for y := 0; y < m.size; y++ {
		for x := 0; x < m.size; x++ {
			if m.dark[y*m.size+x] {
				dark++
			}
			if x+1 < m.size && y+1 < m.size {
				c := m.dark[y*m.size+x]
				if c == m.dark[y*m.size+x+1] && c == m.dark[(y+1)*m.size+x] && c == m.dark[(y+1)*m.size+x+1] {
					p += 3
				}
			}
		}
	}
	total := m.size * m.size
	p += ((abs(dark*20-total*10)+total-1)/total - 1) * 10
	return p
}

// finderLike reports whether the 11 modules from x on row y (a column
// when transposed) read dark-light-dark×3-light-dark with four light
// modules on one side: 1:1:3:1:1 beside a light run, as a finder looks.
func (m *matrix) finderLike(x, y int, tr bool, at func(x, y int, tr bool) bool) bool {
	const a, b = "10111010000", "00001011101"
	matchA, matchB := true, true
	for i := 0; i < 11; i++ {
		d := at(x+i, y, tr)
		matchA = matchA && d == (a[i] == '1')
		matchB = matchB && d == (b[i] == '1')
	}
	return matchA || matchB
}
