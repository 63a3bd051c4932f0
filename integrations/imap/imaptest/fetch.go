package imaptest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// fetch answers UID FETCH set (items), for the items the client uses.
func (ss *session) fetch(tag string, args []string) error {
	s := ss.s
	if len(args) < 2 || ss.selected == nil {
		ss.line(tag + " BAD UID FETCH what?")
		return nil
	}
	items := strings.ToUpper(strings.Join(args[1:], " "))
	s.mu.Lock()
	highest := uint32(0)
	if n := len(ss.selected.Messages); n > 0 {
		highest = ss.selected.Messages[n-1].UID
	}
	in, ok := parseSet(args[0], highest)
	if !ok {
		s.mu.Unlock()
		ss.line(tag + " BAD Invalid UID set")
		return nil
	}
	type hit struct {
		seq int
		msg message
	}
	var hits []hit
	for i, msg := range ss.selected.Messages {
		if in(msg.UID) {
			hits = append(hits, hit{i + 1, *msg})
		}
	}
	s.mu.Unlock()

	for _, h := range hits {
		var b bytes.Buffer
		fmt.Fprintf(&b, "* %d FETCH (UID %d", h.seq, h.msg.UID)
		if strings.Contains(items, "RFC822.SIZE") {
			fmt.Fprintf(&b, " RFC822.SIZE %d", len(h.msg.Raw))
		}
		if strings.Contains(items, "INTERNALDATE") {
			fmt.Fprintf(&b, " INTERNALDATE %q", h.msg.Date.Format("02-Jan-2006 15:04:05 -0700"))
		}
		if strings.Contains(items, "FLAGS") {
			fmt.Fprintf(&b, " FLAGS (%s)", strings.Join(h.msg.Flags, " "))
		}
		var section string
		var data []byte
		switch {
		case strings.Contains(items, "[HEADER.FIELDS (MESSAGE-ID)]"):
			section, data = "HEADER.FIELDS (MESSAGE-ID)", messageIDField(h.msg.Raw)
			s.count(func(st *Stats) { st.Envelopes++ })
		case strings.Contains(items, "[HEADER]"):
			section, data = "HEADER", header(h.msg.Raw)
			s.count(func(st *Stats) { st.Headers++ })
		case strings.Contains(items, "[]"):
			section, data = "", h.msg.Raw
			s.count(func(st *Stats) { st.Bodies++ })
		}
		if strings.Contains(items, "BODY[") {
			s.count(func(st *Stats) { st.Seen++ })
		}
		if strings.Contains(items, "[") {
			fmt.Fprintf(&b, " BODY[%s] {%d}\r\n", section, len(data))
			ss.w.Write(b.Bytes())
			if section == "" {
				s.mu.Lock()
				cut := s.cutAfter
				s.mu.Unlock()
				if cut > 0 && cut < len(data) {
					ss.w.Write(data[:cut])
					ss.w.Flush()
					return errHangUp
				}
			}
			ss.w.Write(data)
			b.Reset()
		}
		b.WriteString(")")
		ss.line(b.String())
	}
	ss.line(tag + " OK FETCH completed")
	return nil
}

func (s *Server) count(f func(*Stats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.stats)
}

// parseSet parses a UID set, "*" being the highest UID.
func parseSet(set string, highest uint32) (func(uint32) bool, bool) {
	type rng struct{ lo, hi uint32 }
	var rs []rng
	num := func(s string) (uint32, bool) {
		if s == "*" {
			return highest, true
		}
		n, err := strconv.ParseUint(s, 10, 32)
		return uint32(n), err == nil && n > 0
	}
	for _, p := range strings.Split(set, ",") {
		a, b, isRange := strings.Cut(p, ":")
		lo, ok := num(a)
		if !ok {
			return nil, false
		}
		hi := lo
		if isRange {
			if hi, ok = num(b); !ok {
				return nil, false
			}
		}
		rs = append(rs, rng{min(lo, hi), max(lo, hi)})
	}
	return func(u uint32) bool {
		for _, r := range rs {
			if u >= r.lo && u <= r.hi {
				return true
			}
		}
		return false
	}, true
}

// header returns a message's header section, blank line included.
func header(raw []byte) []byte {
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		return raw[:i+4]
	}
	if i := bytes.Index(raw, []byte("\n\n")); i >= 0 {
		return raw[:i+2]
	}
	return raw
}

// messageIDField returns the Message-ID field of a message (with its
// folded lines) and a blank line, as HEADER.FIELDS (MESSAGE-ID) does.
func messageIDField(raw []byte) []byte {
	var out []byte
	in := false
	for _, l := range bytes.SplitAfter(header(raw), []byte("\n")) {
		switch {
		case len(l) > 0 && (l[0] == ' ' || l[0] == '\t'):
			if in {
				out = append(out, l...)
			}
		case len(l) > 11 && bytes.EqualFold(l[:11], []byte("message-id:")):
			in = true
			out = append(out, l...)
		default:
			in = false
		}
	}
	return append(out, "\r\n"...)
}
