package imap

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// UIDSet is a set of UIDs as sorted, disjoint, non-adjacent ranges, so
// that a folder's UIDs cost memory by the gaps between them, not by their
// number. Its String is an IMAP sequence set ("1:4,7,9:12").
type UIDSet []UIDRange

// UIDRange is the UIDs from Lo to Hi, both included.
type UIDRange struct{ Lo, Hi uint32 }

// maxSetRanges bounds the ranges ParseUIDSet accepts.
const maxSetRanges = 1 << 20

var errBadSet = errors.New("imap: bad UID set")

// ParseUIDSet parses an IMAP sequence set of UIDs ("1:4,7"); "*" is
// refused, as it names no fixed UID. Ranges may come in any order.
func ParseUIDSet(s string) (UIDSet, error) {
	if s == "" {
		return nil, nil
	}
	var rs []UIDRange
	for part := range strings.SplitSeq(s, ",") {
		if len(rs) == maxSetRanges {
			return nil, errBadSet
		}
		lo, hi, isRange := strings.Cut(part, ":")
		a, err := parseUID(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = parseUID(hi); err != nil {
				return nil, err
			}
		}
		rs = append(rs, UIDRange{min(a, b), max(a, b)})
	}
	return normalize(rs), nil
}

func parseUID(s string) (uint32, error) {
	if s == "" || s[0] == '+' {
		return 0, errBadSet
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 {
		return 0, errBadSet
	}
	return uint32(n), nil
}

// normalize sorts and merges ranges.
func normalize(rs []UIDRange) UIDSet {
	slices.SortFunc(rs, func(a, b UIDRange) int { return cmpUint(a.Lo, b.Lo) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && uint64(r.Lo) <= uint64(out[n-1].Hi)+1 {
			out[n-1].Hi = max(out[n-1].Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return UIDSet(out)
}

func cmpUint(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// NewUIDSet returns the set of uids, in any order.
func NewUIDSet(uids ...uint32) UIDSet {
	var b setBuilder
	for _, u := range uids {
		if u != 0 {
			b.add(u)
		}
	}
	return b.set()
}

// String returns s as an IMAP sequence set; "" for the empty set.
func (s UIDSet) String() string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(r.Lo), 10))
		if r.Hi != r.Lo {
			b.WriteByte(':')
			b.WriteString(strconv.FormatUint(uint64(r.Hi), 10))
		}
	}
	return b.String()
}

// Len returns how many UIDs s holds.
func (s UIDSet) Len() int {
	n := 0
	for _, r := range s {
		n += int(r.Hi-r.Lo) + 1
	}
	return n
}

// Contains reports whether uid is in s.
func (s UIDSet) Contains(uid uint32) bool {
	i, _ := slices.BinarySearchFunc(s, uid, func(r UIDRange, u uint32) int {
		if r.Hi < u {
			return -1
		}
		if r.Lo > u {
			return 1
		}
		return 0
	})
	return i < len(s) && s[i].Lo <= uid && uid <= s[i].Hi
}

// All calls yield for each UID of s in ascending order until it returns
// false.
func (s UIDSet) All(yield func(uint32) bool) {
	for _, r := range s {
		for u := uint64(r.Lo); u <= uint64(r.Hi); u++ {
			if !yield(uint32(u)) {
				return
			}
		}
	}
}

// Max returns the largest UID of s, 0 if s is empty.
func (s UIDSet) Max() uint32 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1].Hi
}

// setBuilder builds a UIDSet from UIDs given mostly in ascending order,
// as a server lists them.
type setBuilder struct {
	rs     []UIDRange
	sorted bool // false once a UID came out of order
}

func (b *setBuilder) add(u uint32) {
	if n := len(b.rs); n > 0 {
		last := &b.rs[n-1]
		switch {
		case u >= last.Lo && u <= last.Hi:
			return
		case uint64(u) == uint64(last.Hi)+1:
			last.Hi = u
			return
		case u < last.Lo:
			b.sorted = false
		}
	} else {
		b.sorted = true
	}
	b.rs = append(b.rs, UIDRange{u, u})
}

func (b *setBuilder) set() UIDSet {
	if len(b.rs) == 0 {
		return nil
	}
	if b.sorted {
		return UIDSet(b.rs)
	}
	return normalize(b.rs)
}
