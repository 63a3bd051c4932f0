package qr

// eccPerBlock is the number of error correction codewords in each block,
// by level (L, M, Q, H) and version (index 0 unused).
var eccPerBlock = [4][41]int{
	{0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28, 28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30},
	{0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28},
	{0, 13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30, 28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30},
	{0, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28, 30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30},
}

// eccBlocks is the number of blocks the codewords are split in, by level
// and version.
var eccBlocks = [4][41]int{
	{0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25},
	{0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49},
	{0, 1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20, 23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68},
	{0, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25, 25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81},
}

// rawModules is the number of modules of version v that hold codewords:
// the symbol less its finder, timing and alignment patterns and its
// format and version information.
func rawModules(v int) int {
	n := (16*v+128)*v + 64
	if v >= 2 {
		align := v/7 + 2
		n -= (25*align-10)*align - 55
		if v >= 7 {
			n -= 36
		}
	}
	return n
}

// dataCodewords is the number of data codewords of version v at lvl.
func dataCodewords(v int, lvl Level) int {
	return rawModules(v)/8 - eccPerBlock[lvl][v]*eccBlocks[lvl][v]
}

// addECC splits data in the version's blocks (the short ones first, each
// long one a codeword longer), computes each block's Reed-Solomon
// codewords, and interleaves: the blocks' data codewords column by
// column, then their error correction codewords.
func addECC(data []byte, v int, lvl Level) []byte {
	nBlocks, eccLen := eccBlocks[lvl][v], eccPerBlock[lvl][v]
	raw := rawModules(v) / 8
	nShort := nBlocks - raw%nBlocks
	shortLen := raw/nBlocks - eccLen // data codewords in a short block
	gen := generator(eccLen)
	type block struct{ data, ecc []byte }
	blocks := make([]block, nBlocks)
	for i, k := 0, 0; i < nBlocks; i++ {
		n := shortLen
		if i >= nShort {
			n++
		}
		blocks[i] = block{data[k : k+n], remainder(data[k:k+n], gen)}
		k += n
	}
	out := make([]byte, 0, raw)
	for col := 0; col <= shortLen; col++ {
		for _, b := range blocks {
			if col < len(b.data) {
				out = append(out, b.data[col])
			}
		}
	}
	for col := 0; col < eccLen; col++ {
		for _, b := range blocks {
			out = append(out, b.ecc[col])
		}
	}
	return out
}

// gfMul multiplies in GF(2⁸) modulo x⁸+x⁴+x³+x²+1 (0x11D).
func gfMul(a, b byte) byte {
	var p byte
	for ; b != 0; b >>= 1 {
		if b&1 != 0 {
			p ^= a
		}
		carry := a & 0x80
		a <<= 1
		if carry != 0 {
			a ^= 0x1D
		}
	}
	return p
}

// generator returns the coefficients, highest degree first without its
// leading 1, of (x − α⁰)(x − α¹)…(x − α^(n−1)).
func generator(n int) []byte {
	g := make([]byte, n)
	g[n-1] = 1 // the polynomial 1
	root := byte(1)
	for i := 0; i < n; i++ {
		// Multiply by (x − root): shift, then add root × the old terms.
		for j := 0; j < n; j++ {
			g[j] = gfMul(g[j], root)
			if j+1 < n {
				g[j] ^= g[j+1]
			}
		}
		root = gfMul(root, 2)
	}
	return g
}

// remainder is data × x^len(gen) modulo the generator: the block's error
// correction codewords.
func remainder(data, gen []byte) []byte {
	r := make([]byte, len(gen))
	for _, b := range data {
		factor := b ^ r[0]
		copy(r, r[1:])
		r[len(r)-1] = 0
		for i, g := range gen {
			r[i] ^= gfMul(g, factor)
		}
	}
	return r
}
