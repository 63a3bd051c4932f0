package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// rawOp is one op as logged. Its byte slices may alias the line they were
// decoded from.
type rawOp struct {
	T   []byte
	ID  []byte
	V   []byte // the record's JSON; nil for a delete
	At  int    // where V starts in the ops array; -1 if not known
	Del bool
}

// jsonOp is the shape of an op for encoding/json.
type jsonOp struct {
	T   string          `json:"t"`
	ID  string          `json:"id"`
	V   json.RawMessage `json:"v"`
	Del bool            `json:"del"`
}

// decodeOps decodes and checks the ops array of a line into ops[:0]. The
// fast path reads the exact layout lineBuilder writes without copying;
// anything else valid as JSON goes through encoding/json. Either way the
// values are left for the caller to decode, which validates them.
func decodeOps(data []byte, ops []rawOp) ([]rawOp, error) {
	ops, ok := parseOps(data, ops[:0])
	if !ok {
		var js []jsonOp
		if err := json.Unmarshal(data, &js); err != nil {
			return nil, fmt.Errorf("decode ops: %w", err)
		}
		ops = ops[:0]
		for _, o := range js {
			ops = append(ops, rawOp{T: []byte(o.T), ID: []byte(o.ID), V: o.V, At: -1, Del: o.Del})
		}
	}
	if len(ops) == 0 {
		return nil, errors.New("no ops")
	}
	for i, o := range ops {
		if !validName(o.T) || !validName(o.ID) || (len(o.V) > 0) == o.Del {
			return nil, fmt.Errorf("op %d: bad table, id, value or delete", i)
		}
	}
	return ops, nil
}

// validName is validID for bytes.
func validName(b []byte) bool { return len(b) > 0 && utf8.Valid(b) }

// parseOps reads `[op,op,...]` where each op is exactly
// {"t":"…","id":"…","v":…} or {"t":"…","id":"…","del":true} with strings
// free of escapes. It reports false for anything else.
func parseOps(b []byte, ops []rawOp) ([]rawOp, bool) {
	if len(b) < 2 || b[0] != '[' {
		return ops, false
	}
	p := 1
	for {
		o := rawOp{At: -1}
		var ok bool
		if p, ok = expect(b, p, `{"t":`); !ok {
			return ops, false
		}
		if o.T, p, ok = plainString(b, p); !ok {
			return ops, false
		}
		if p, ok = expect(b, p, `,"id":`); !ok {
			return ops, false
		}
		if o.ID, p, ok = plainString(b, p); !ok {
			return ops, false
		}
		if q, ok := expect(b, p, `,"del":true}`); ok {
			o.Del, p = true, q
		} else {
			if p, ok = expect(b, p, `,"v":`); !ok {
				return ops, false
			}
			end := skipValue(b, p)
			if end < 0 {
				return ops, false
			}
			o.V, o.At = b[p:end:end], p
			if p, ok = expect(b, end, `}`); !ok {
				return ops, false
			}
		}
		ops = append(ops, o)
		if p < len(b) && b[p] == ',' {
			p++
			continue
		}
		return ops, p == len(b)-1 && b[p] == ']'
	}
}

func expect(b []byte, p int, s string) (int, bool) {
	if len(b)-p < len(s) || string(b[p:p+len(s)]) != s {
		return p, false
	}
	return p + len(s), true
}

// plainString reads a JSON string with no escapes and no control bytes.
func plainString(b []byte, p int) ([]byte, int, bool) {
	if p >= len(b) || b[p] != '"' {
		return nil, p, false
	}
	for i := p + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			s := b[p+1 : i : i]
			return s, i + 1, utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, p, false
		}
	}
	return nil, p, false
}

// skipValue returns the end of the JSON value starting at p, or -1. It
// only finds the extent; the value is validated when it is decoded.
func skipValue(b []byte, p int) int {
	if p >= len(b) {
		return -1
	}
	switch b[p] {
	case '{', '[':
		depth := 0
		for i := p; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case '"':
		return skipString(b, p)
	}
	i := p // a number, true, false or null
	for i < len(b) && (b[i] == '-' || b[i] == '+' || b[i] == '.' ||
		'0' <= b[i] && b[i] <= '9' || 'a' <= b[i] && b[i] <= 'z' || 'A' <= b[i] && b[i] <= 'Z') {
		i++
	}
	if i == p {
		return -1
	}
	return i
}

// skipString returns the end of the JSON string starting at p, or -1.
func skipString(b []byte, p int) int {
	for i := p + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
