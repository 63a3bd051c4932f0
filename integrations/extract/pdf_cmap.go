package extract

import "slices"

// toUnicode is a ToUnicode CMap: the code space (which byte lengths codes
// have) and the codes' text.
type toUnicode struct {
	spaces [][2][]byte // codespace ranges: low and high, same length
	chars  map[string]string
	ranges []cmapRange
}

type cmapRange struct {
	lo, hi []byte
	base   []rune // text of lo; later codes add to its last rune
	list   []string
}

// maxCMapEntries bounds the mappings of one CMap.
const maxCMapEntries = 1 << 16

// parseCMap reads the codespacerange, bfchar and bfrange sections of a
// ToUnicode CMap; anything else in it is ignored.
func parseCMap(data []byte) *toUnicode {
	cm := &toUnicode{chars: map[string]string{}}
	l := &pdfLexer{b: data}
	var ops []any
	section := ""
	for entries := 0; entries < maxCMapEntries; {
		kind, v := l.token()
		if kind == tokEOF {
			break
		}
		o, err := l.objectFrom(kind, v, false, 0)
		if err != nil {
			ops = ops[:0]
			continue
		}
		op, isOp := o.(pdfOp)
		if !isOp {
			if len(ops) < 3 {
				ops = append(ops, o)
			}
		} else {
			switch op {
			case "begincodespacerange", "beginbfchar", "beginbfrange":
				section = string(op)
			case "endcodespacerange", "endbfchar", "endbfrange":
				section = ""
			}
			ops = ops[:0]
			continue
		}
		switch section {
		case "begincodespacerange":
			if len(ops) == 2 {
				lo, _ := ops[0].(pdfString)
				hi, _ := ops[1].(pdfString)
				if len(lo) == len(hi) && len(lo) > 0 && len(lo) <= 4 {
					cm.spaces = append(cm.spaces, [2][]byte{[]byte(lo), []byte(hi)})
				}
				ops, entries = ops[:0], entries+1
			}
		case "beginbfchar":
			if len(ops) == 2 {
				src, _ := ops[0].(pdfString)
				dst, _ := ops[1].(pdfString)
				if len(src) > 0 && len(src) <= 4 {
					cm.chars[string(src)] = utf16BE([]byte(dst))
				}
				ops, entries = ops[:0], entries+1
			}
		case "beginbfrange":
			if len(ops) == 3 {
				lo, _ := ops[0].(pdfString)
				hi, _ := ops[1].(pdfString)
				if len(lo) == len(hi) && len(lo) > 0 && len(lo) <= 4 {
					r := cmapRange{lo: []byte(lo), hi: []byte(hi)}
					switch dst := ops[2].(type) {
					case pdfString:
						r.base = []rune(utf16BE([]byte(dst)))
					case []any:
						for _, e := range dst {
							s, _ := e.(pdfString)
							r.list = append(r.list, utf16BE([]byte(s)))
						}
						entries += len(dst) // each costs a string: counted against the map's bound
					}
					if len(r.base) > 0 || len(r.list) > 0 {
						cm.ranges = append(cm.ranges, r)
					}
				}
				ops, entries = ops[:0], entries+1
			}
		default:
			if len(ops) >= 3 {
				ops = ops[:0]
			}
		}
	}
	return cm
}

// utf16BE decodes a CMap destination, UTF-16BE.
func utf16BE(b []byte) string { return decodeUTF16(b, true) }

// lookup returns the text of the code at the start of b and its length in
// bytes; 0 when no mapping matches.
func (cm *toUnicode) lookup(b []byte, composite bool) (string, int) {
	lengths := []int{1, 2, 3, 4}
	if len(cm.spaces) > 0 {
		lengths = lengths[:0]
		for _, sp := range cm.spaces {
			n := len(sp[0])
			if n <= len(b) && inRange(b[:n], sp[0], sp[1]) && !slices.Contains(lengths, n) {
				lengths = append(lengths, n)
			}
		}
	} else if composite {
		lengths = []int{2}
	}
	for _, n := range lengths {
		if n > len(b) {
			continue
		}
		code := b[:n]
		if s, ok := cm.chars[string(code)]; ok {
			return s, n
		}
		for _, r := range cm.ranges {
			if len(r.lo) != n || !inRange(code, r.lo, r.hi) {
				continue
			}
			off := codeValue(code) - codeValue(r.lo)
			if r.list != nil {
				if off < uint32(len(r.list)) {
					return r.list[off], n
				}
				continue
			}
			text := slices.Clone(r.base)
			text[len(text)-1] += rune(off)
			return string(text), n
		}
	}
	return "", 0
}

func inRange(code, lo, hi []byte) bool {
	for i := range code {
		if code[i] < lo[i] || code[i] > hi[i] {
			return false
		}
	}
	return true
}

func codeValue(b []byte) uint32 {
	var v uint32
	for _, c := range b {
		v = v<<8 | uint32(c)
	}
	return v
}
