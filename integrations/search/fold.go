package search

import (
	"unicode"
	"unicode/utf8"
)

// Folding makes "Café", "CAFE" and "cafe" the same term: lower case, and
// the Latin letters' accents removed (a decomposition to the base letter,
// as NFKD followed by dropping the marks would give). Greek loses its
// tonos and dialytika, Cyrillic ё becomes е, full-width Latin letters and
// digits become ASCII. Other scripts are only lower-cased.

// latinBase maps U+00C0 to U+024F (Latin-1 Supplement, Latin Extended-A
// and -B) to the base letter; '.' marks a letter folded by foldSpecial or
// by lower-casing alone.
const latinBase = "aaaaaa.ceeeeiiii.nooooo..uuuuy..aaaaaa.ceeeeiiii.nooooo..uuuuy.y" +
	"aaaaaaccccccccdd..eeeeeeeeeegggggggghh..iiiiiiiii...jjkk.llllll." +
	"...nnnnnn...oooooo..rrrrrrsssssssstttt..uuuuuuuuuuuuwwyyyzzzzzzs" +
	"................................oo.............uu..............." +
	".............aaiioouuuuuuuuuu.aaaa....ggkkoooo..j...gg..nnaa...." +
	"aaaaeeeeiiiioooorrrruuuusstt..hh......aaeeooooooooyy............" +
	"................"

// latinExtraBase maps U+1E00 to U+1EFF (Latin Extended Additional:
// Vietnamese and others) the same way.
const latinExtraBase = "aabbbbbbccddddddddddeeeeeeeeeeffgghhhhhhhhhhiiiikkkkkkllllllllmm" +
	"mmmmnnnnnnnnoooooooopppprrrrrrrrssssssssssttttttttuuuuuuuuuuvvvv" +
	"wwwwwwwwwwxxxxyyzzzzzzhtwy.s....aaaaaaaaaaaaaaaaaaaaaaaaeeeeeeee" +
	"eeeeeeeeiiiioooooooooooooooooooooooouuuuuuuuuuuuuuyyyyyyyy......"

// foldMode says which punctuation appendFold keeps.
type foldMode uint8

const (
	foldWord     foldMode = iota // letters, digits and marks only
	foldNumber                   // digits and '.', the thousands ',' dropped
	foldVerbatim                 // everything: addresses, "c++"
)

// appendFold appends the folded form of s to dst.
func appendFold(dst []byte, s string, mode foldMode) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'A' <= c && c <= 'Z':
				dst = append(dst, c+'a'-'A')
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				dst = append(dst, c)
			case mode == foldVerbatim, mode == foldNumber && c == '.':
				dst = append(dst, c)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r == utf8.RuneError || (mode != foldVerbatim && !isWordRune(r)) {
			continue
		}
		dst = appendFoldRune(dst, r)
	}
	return dst
}

// appendFoldRune appends the folded form of one non-ASCII rune.
func appendFoldRune(dst []byte, r rune) []byte {
	switch {
	case 0x300 <= r && r <= 0x36F:
		return dst // a combining accent of decomposed text
	case 0xC0 <= r && r <= 0x24F:
		if b := latinBase[r-0xC0]; b != '.' {
			return append(dst, b)
		}
	case 0x1E00 <= r && r <= 0x1EFF:
		if b := latinExtraBase[r-0x1E00]; b != '.' {
			return append(dst, b)
		}
	case 0xFF10 <= r && r <= 0xFF19:
		return append(dst, byte(r-0xFF10+'0'))
	case 0xFF21 <= r && r <= 0xFF3A:
		return append(dst, byte(r-0xFF21+'a'))
	case 0xFF41 <= r && r <= 0xFF5A:
		return append(dst, byte(r-0xFF41+'a'))
	}
	if s := foldSpecial(r); s != "" {
		return append(dst, s...)
	}
	return utf8.AppendRune(dst, unicode.ToLower(r))
}

// foldSpecial folds the letters that decompose to no single base letter.
func foldSpecial(r rune) string {
	switch r {
	case 'Æ', 'æ', 'Ǣ', 'ǣ', 'Ǽ', 'ǽ':
		return "ae"
	case 'Œ', 'œ':
		return "oe"
	case 'ß', 'ẞ':
		return "ss"
	case 'Þ', 'þ':
		return "th"
	case 'Ð', 'ð', 'Đ', 'đ':
		return "d"
	case 'Ø', 'ø', 'Ǿ', 'ǿ':
		return "o"
	case 'Ł', 'ł', 'Ŀ', 'ŀ':
		return "l"
	case 'Ħ', 'ħ':
		return "h"
	case 'ı':
		return "i"
	case 'Ĳ', 'ĳ':
		return "ij"
	case 'ŉ', 'Ŋ', 'ŋ':
		return "n"
	case 'Ŧ', 'ŧ':
		return "t"
	case 'ƀ', 'Ƀ':
		return "b"
	case 'ĸ':
		return "k"
	case 'Ǆ', 'ǅ', 'ǆ', 'Ǳ', 'ǲ', 'ǳ':
		return "dz"
	case 'Ǉ', 'ǈ', 'ǉ':
		return "lj"
	case 'Ǌ', 'ǋ', 'ǌ':
		return "nj"
	// Greek: tonos and dialytika dropped, final sigma as sigma.
	case 'Ά', 'ά':
		return "α"
	case 'Έ', 'έ':
		return "ε"
	case 'Ή', 'ή':
		return "η"
	case 'Ί', 'ί', 'Ϊ', 'ϊ', 'ΐ':
		return "ι"
	case 'Ό', 'ό':
		return "ο"
	case 'Ύ', 'ύ', 'Ϋ', 'ϋ', 'ΰ':
		return "υ"
	case 'Ώ', 'ώ':
		return "ω"
	case 'ς':
		return "σ"
	case 'Ё', 'ё':
		return "е"
	// Latin ligatures of typeset text (PDFs).
	case 'ﬀ':
		return "ff"
	case 'ﬁ':
		return "fi"
	case 'ﬂ':
		return "fl"
	case 'ﬃ':
		return "ffi"
	case 'ﬄ':
		return "ffl"
	case 'ﬅ', 'ﬆ':
		return "st"
	}
	return ""
}
