package imaptest

import (
	"bufio"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// specialUse are the attributes a server without SPECIAL-USE leaves out.
var specialUse = []string{`\All`, `\Archive`, `\Drafts`, `\Flagged`, `\Junk`, `\Sent`, `\Trash`, `\Important`}

// session is one client connection.
type session struct {
	s        *Server
	c        net.Conn
	r        *bufio.Reader
	w        *bufio.Writer
	authed   bool
	selected *mailbox
}

var errHangUp = errors.New("hang up")

func (ss *session) run() {
	ss.s.mu.Lock()
	caps := strings.Join(ss.s.caps, " ")
	ss.s.mu.Unlock()
	ss.line("* OK [CAPABILITY " + caps + "] imaptest ready")
	for {
		if ss.w.Flush() != nil {
			return
		}
		tag, name, args, err := ss.command()
		if err != nil {
			return
		}
		ss.s.mu.Lock()
		if ss.s.stats.Commands == nil {
			ss.s.stats.Commands = map[string]int{}
		}
		ss.s.stats.Commands[name]++
		stall := ss.s.stall == name
		ss.s.mu.Unlock()
		if stall {
			select {
			case ss.s.stalled <- name:
			default:
			}
			io.Copy(io.Discard, ss.c) // until the client hangs up
			return
		}
		if err := ss.handle(tag, name, args); err != nil {
			ss.w.Flush()
			return
		}
	}
}

// line writes one response line, after the server's delay.
func (ss *session) line(s string) {
	if d := time.Duration(ss.s.delay.Load()); d > 0 {
		ss.w.Flush()
		time.Sleep(d)
	}
	if ss.s.hold.Load() {
		ss.w.WriteString(s[:len(s)/2])
		ss.w.Flush()
		io.Copy(io.Discard, ss.c) // until the client hangs up
		ss.c.Close()              // and the session ends at its next flush
		return
	}
	ss.w.WriteString(s + "\r\n")
}

func (ss *session) handle(tag, name string, args []string) error {
	if !ss.authed && name != "CAPABILITY" && name != "LOGIN" && name != "AUTHENTICATE" && name != "LOGOUT" && name != "NOOP" {
		ss.line(tag + " BAD Log in first")
		return nil
	}
	switch name {
	case "CAPABILITY":
		ss.s.mu.Lock()
		caps := strings.Join(ss.s.caps, " ")
		ss.s.mu.Unlock()
		ss.line("* CAPABILITY " + caps)
		ss.line(tag + " OK CAPABILITY completed")
	case "NOOP":
		ss.line(tag + " OK NOOP completed")
	case "LOGIN":
		ss.s.mu.Lock()
		disabled := ss.s.loginDisa
		ss.s.mu.Unlock()
		switch {
		case disabled:
			ss.line(tag + " NO [PRIVACYREQUIRED] LOGIN is disabled")
		case len(args) == 2 && args[0] == Username && args[1] == Password:
			ss.authed = true
			ss.line(tag + " OK Logged in")
		default:
			ss.line(tag + " NO [AUTHENTICATIONFAILED] Authentication failed.")
		}
	case "AUTHENTICATE":
		return ss.authenticate(tag, args)
	case "LOGOUT":
		ss.line("* BYE Logging out")
		ss.line(tag + " OK Logout completed.")
		return errHangUp
	case "LIST":
		ss.list(tag, args)
	case "EXAMINE", "SELECT":
		ss.examine(tag, name, args)
	case "UID SEARCH":
		ss.search(tag, args)
	case "UID FETCH":
		return ss.fetch(tag, args)
	default:
		ss.line(tag + " BAD Unknown command")
	}
	return nil
}

func (ss *session) authenticate(tag string, args []string) error {
	if len(args) == 0 || !strings.EqualFold(args[0], "PLAIN") {
		ss.line(tag + " NO Unsupported mechanism")
		return nil
	}
	resp := ""
	if len(args) > 1 {
		resp = args[1]
	} else {
		ss.line("+ ")
		ss.w.Flush()
		l, err := ss.r.ReadString('\n')
		if err != nil {
			return err
		}
		resp = strings.TrimRight(l, "\r\n")
	}
	raw, err := base64.StdEncoding.DecodeString(resp)
	if err == nil && string(raw) == "\x00"+Username+"\x00"+Password {
		ss.authed = true
		ss.line(tag + " OK Logged in")
		return nil
	}
	ss.line(tag + " NO [AUTHENTICATIONFAILED] Authentication failed.")
	return nil
}

func (ss *session) list(tag string, args []string) {
	s := ss.s
	s.mu.Lock()
	defer s.mu.Unlock()
	hasUse := slices.Contains(s.caps, "SPECIAL-USE")
	// With LIST-EXTENDED, special-use attributes come only when asked
	// for (RETURN (SPECIAL-USE)); without it, always, as Gmail does.
	asked := len(args) >= 4 && strings.EqualFold(args[2], "RETURN") && strings.Contains(strings.ToUpper(args[3]), "SPECIAL-USE")
	showUse := hasUse && (asked || !slices.Contains(s.caps, "LIST-EXTENDED"))
	for _, m := range s.boxes {
		var attrs []string
		for _, a := range m.Attrs {
			if showUse || !slices.Contains(specialUse, a) {
				attrs = append(attrs, a)
			}
		}
		ss.line(`* LIST (` + strings.Join(attrs, " ") + `) "/" ` + astring(m.Name))
	}
	ss.line(tag + " OK LIST completed")
}

// astring writes a mailbox name quoted, or as a literal when it must.
func astring(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= 0x7f {
			return "{" + strconv.Itoa(len(s)) + "}\r\n" + s
		}
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func (ss *session) examine(tag, name string, args []string) {
	s := ss.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(args) != 1 || s.box(args[0]) == nil {
		ss.selected = nil
		ss.line(tag + " NO Mailbox doesn't exist")
		return
	}
	m := s.box(args[0])
	ss.selected = m
	ss.line(`* FLAGS (\Answered \Flagged \Deleted \Seen \Draft)`)
	ss.line(`* OK [PERMANENTFLAGS ()] Read-only mailbox.`)
	ss.line("* " + strconv.Itoa(len(m.Messages)) + " EXISTS")
	ss.line("* 0 RECENT")
	ss.line("* OK [UIDVALIDITY " + strconv.FormatUint(uint64(m.UIDValidity), 10) + "] UIDs valid")
	ss.line("* OK [UIDNEXT " + strconv.FormatUint(uint64(m.UIDNext), 10) + "] Predicted next UID")
	mode := "READ-ONLY"
	if name == "SELECT" {
		mode = "READ-WRITE"
	}
	ss.line(tag + " OK [" + mode + "] " + name + " completed")
}

func (ss *session) search(tag string, args []string) {
	s := ss.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss.selected == nil {
		ss.line(tag + " BAD No mailbox selected")
		return
	}
	var uids []uint32
	for _, msg := range ss.selected.Messages {
		uids = append(uids, msg.UID)
	}
	if len(args) >= 3 && strings.EqualFold(args[0], "RETURN") {
		set := formatSet(uids)
		if set != "" {
			set = " ALL " + set
		}
		ss.line(`* ESEARCH (TAG "` + tag + `") UID` + set)
	} else {
		var b strings.Builder
		b.WriteString("* SEARCH")
		for _, u := range uids {
			b.WriteString(" " + strconv.FormatUint(uint64(u), 10))
		}
		ss.line(b.String())
	}
	ss.line(tag + " OK SEARCH completed")
}

// formatSet writes ascending UIDs as a sequence set.
func formatSet(uids []uint32) string {
	var parts []string
	for i := 0; i < len(uids); {
		j := i
		for j+1 < len(uids) && uids[j+1] == uids[j]+1 {
			j++
		}
		p := strconv.FormatUint(uint64(uids[i]), 10)
		if j > i {
			p += ":" + strconv.FormatUint(uint64(uids[j]), 10)
		}
		parts = append(parts, p)
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// command reads one command: its tag, its name (two words for UID
// commands) and its arguments, with quoted strings and literals
// (synchronizing or not) decoded and parenthesized groups kept whole.
func (ss *session) command() (tag, name string, args []string, err error) {
	var toks []string
	for {
		line, err := ss.r.ReadString('\n')
		if err != nil {
			return "", "", nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		lit := -1
		sync := true
		if i := strings.LastIndexByte(line, '{'); i >= 0 && strings.HasSuffix(line, "}") {
			spec := line[i+1 : len(line)-1]
			if strings.HasSuffix(spec, "+") {
				spec, sync = spec[:len(spec)-1], false
			}
			if n, err := strconv.Atoi(spec); err == nil && n >= 0 {
				lit, line = n, line[:i]
			}
		}
		t, err := tokens(line)
		if err != nil {
			return "", "", nil, err
		}
		toks = append(toks, t...)
		if lit < 0 {
			break
		}
		if sync {
			ss.w.WriteString("+ Ready for literal data\r\n")
			ss.w.Flush()
		}
		buf := make([]byte, lit)
		if _, err := io.ReadFull(ss.r, buf); err != nil {
			return "", "", nil, err
		}
		toks = append(toks, string(buf))
	}
	if len(toks) < 2 {
		return "", "", nil, errors.New("short command")
	}
	tag, name, args = toks[0], strings.ToUpper(toks[1]), toks[2:]
	if name == "UID" && len(args) > 0 {
		name, args = "UID "+strings.ToUpper(args[0]), args[1:]
	}
	return tag, name, args, nil
}

// tokens splits a command line: atoms, quoted strings (decoded), and
// parenthesized groups (raw).
func tokens(line string) ([]string, error) {
	var out []string
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == ' ':
			i++
		case c == '"':
			var b strings.Builder
			i++
			for i < len(line) && line[i] != '"' {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				b.WriteByte(line[i])
				i++
			}
			if i >= len(line) {
				return nil, errors.New("unterminated quoted string")
			}
			i++
			out = append(out, b.String())
		case c == '(':
			depth, j := 0, i
			for ; j < len(line); j++ {
				if line[j] == '(' {
					depth++
				} else if line[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= len(line) {
				return nil, errors.New("unbalanced parentheses")
			}
			out = append(out, line[i:j+1])
			i = j + 1
		default:
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '(' {
				if line[j] == '[' {
					for j < len(line) && line[j] != ']' {
						j++
					}
				}
				if j < len(line) {
					j++
				}
			}
			out = append(out, line[i:j])
			i = j
		}
	}
	return out, nil
}
