package imap

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// parseAll reads every response of s with a lexer of the given budgets.
func parseAll(s string, line int, literals int64) ([]response, error) {
	l := &lexer{r: bufio.NewReader(strings.NewReader(s)), line: line, literals: literals}
	var out []response
	for {
		r, err := readResponse(l)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

func parseOne(t *testing.T, s string) response {
	t.Helper()
	rs, err := parseAll(s, maxLine, 1<<20)
	if err != nil || len(rs) != 1 {
		t.Fatalf("parse %q: got %d responses, %v; want 1", s, len(rs), err)
	}
	return rs[0]
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		in   string
		want response
	}{
		{"* OK [CAPABILITY IMAP4rev1 IDLE] ready\r\n", response{Tag: "*", Status: "OK", Code: "CAPABILITY", CodeArg: "IMAP4rev1 IDLE", Caps: []string{"IMAP4rev1", "IDLE"}, Text: "ready"}},
		{"* ok lower case\r\n", response{Tag: "*", Status: "OK", Text: "lower case"}},
		{"* PREAUTH welcome\r\n", response{Tag: "*", Status: "PREAUTH", Text: "welcome"}},
		{"* BYE\r\n", response{Tag: "*", Status: "BYE"}},
		{"* OK [UIDVALIDITY 3857529045] UIDs valid\r\n", response{Tag: "*", Status: "OK", Code: "UIDVALIDITY", CodeArg: "3857529045", Text: "UIDs valid"}},
		{"* OK [UIDNEXT 4392] Predicted next UID\n", response{Tag: "*", Status: "OK", Code: "UIDNEXT", CodeArg: "4392", Text: "Predicted next UID"}},
		{`* OK [PERMANENTFLAGS (\Deleted \Seen \*)] Limited` + "\r\n", response{Tag: "*", Status: "OK", Code: "PERMANENTFLAGS", CodeArg: `(\Deleted \Seen \*)`, Text: "Limited"}},
		{"* OK [READ-ONLY]\r\n", response{Tag: "*", Status: "OK", Code: "READ-ONLY"}},
		{"+ Ready for literal\r\n", response{Tag: "+", Text: "Ready for literal"}},
		{"+\r\n", response{Tag: "+"}},
		{"a1 OK Logged in\r\n", response{Tag: "a1", Status: "OK", Text: "Logged in"}},
		{"a1 NO [AUTHENTICATIONFAILED] nope\r\n", response{Tag: "a1", Status: "NO", Code: "AUTHENTICATIONFAILED", Text: "nope"}},
		{"A0001 BAD\r\n", response{Tag: "A0001", Status: "BAD"}},
		{"* CAPABILITY IMAP4rev1 SPECIAL-USE AUTH=PLAIN \r\n", response{Tag: "*", Kind: "CAPABILITY", Caps: []string{"IMAP4rev1", "SPECIAL-USE", "AUTH=PLAIN"}}},
		{"* 3 EXISTS\r\n", response{Tag: "*", Kind: "EXISTS", Num: 3}},
		{"* 22 EXPUNGE\r\n", response{Tag: "*", Kind: "EXPUNGE", Num: 22}},
		{"* 0 RECENT\r\n", response{Tag: "*", Kind: "RECENT"}},
		{`* FLAGS (\Answered \Flagged)` + "\r\n", response{Tag: "*", Kind: "FLAGS"}},
		{`* ID ("name" "Dovecot" "x" {3}` + "\r\nabc)\r\n", response{Tag: "*", Kind: "ID"}},
		{"* SEARCH\r\n", response{Tag: "*", Kind: "SEARCH"}},
		{"* SEARCH 2 3 4 7 9 8\r\n", response{Tag: "*", Kind: "SEARCH", UIDs: UIDSet{{2, 4}, {7, 9}}}},
		{"* SEARCH 5 6 (MODSEQ 917162500)\r\n", response{Tag: "*", Kind: "SEARCH", UIDs: UIDSet{{5, 6}}}},
		{`* ESEARCH (TAG "a5") UID ALL 1:3,5,17:21` + "\r\n", response{Tag: "*", Kind: "ESEARCH", UIDs: UIDSet{{1, 3}, {5, 5}, {17, 21}}}},
		{`* ESEARCH (TAG "a5") UID COUNT 0` + "\r\n", response{Tag: "*", Kind: "ESEARCH"}},
		{`* LIST (\HasNoChildren \Junk) "/" "Spam"` + "\r\n", response{Tag: "*", Kind: "LIST", Mailbox: &Mailbox{Name: "Spam", Delim: "/", Attrs: []string{`\HasNoChildren`, `\Junk`}}}},
		{`* LIST () NIL inbox` + "\r\n", response{Tag: "*", Kind: "LIST", Mailbox: &Mailbox{Name: "INBOX"}}},
		{`* LIST (\Noselect) "." {7}` + "\r\nA \"b\\c)\r\n", response{Tag: "*", Kind: "LIST", Mailbox: &Mailbox{Name: `A "b\c)`, Delim: ".", Attrs: []string{`\Noselect`}}}},
		{`* LIST () "/" "Caf&AOk-/\"q\"\\"` + "\r\n", response{Tag: "*", Kind: "LIST", Mailbox: &Mailbox{Name: `Caf&AOk-/"q"\`, Delim: "/"}}},
		{`* LIST (\HasNoChildren) "/" "[Gmail]/All Mail" ("CHILDINFO" ("SUBSCRIBED"))` + "\r\n", response{Tag: "*", Kind: "LIST", Mailbox: &Mailbox{Name: "[Gmail]/All Mail", Delim: "/", Attrs: []string{`\HasNoChildren`}}}},
		{`* XLIST (\AllMail) "/" "[Gmail]/All Mail"` + "\r\n", response{Tag: "*", Kind: "LIST", Mailbox: &Mailbox{Name: "[Gmail]/All Mail", Delim: "/", Attrs: []string{`\AllMail`}}}},
		{`* STATUS "x" (MESSAGES 2)` + "\r\n", response{Tag: "*", Kind: "STATUS"}},
	}
	for _, tt := range tests {
		got := parseOne(t, tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parse %q:\n got %+v\nwant %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseFetch(t *testing.T) {
	body := "Message-ID: <a@b>\r\nSubject: hi\r\n\r\nhello)\r\n* 9 EXISTS\r\n"
	tests := []struct {
		in   string
		want fetchData
	}{
		{"* 12 FETCH (UID 5 RFC822.SIZE 44827 FLAGS (\\Seen \\Answered) INTERNALDATE \"17-Jul-1996 02:44:25 -0700\")\r\n",
			fetchData{UID: 5, Size: 44827, Flags: []string{`\Seen`, `\Answered`}, Date: time.Date(1996, 7, 17, 9, 44, 25, 0, time.UTC)}},
		{"* 1 FETCH (INTERNALDATE \" 7-Feb-2024 10:00:00 +0000\" UID 1)\r\n",
			fetchData{UID: 1, Size: -1, Date: time.Date(2024, 2, 7, 10, 0, 0, 0, time.UTC)}},
		{"* 2 FETCH (UID 7 BODY[] {" + strconv.Itoa(len(body)) + "}\r\n" + body + " RFC822.SIZE 61)\r\n",
			fetchData{UID: 7, Size: 61, Body: []byte(body)}},
		{"* 2 FETCH (UID 7 BODY[HEADER.FIELDS (MESSAGE-ID)] {21}\r\nMessage-ID: <a@b>\r\n\r\n)\r\n",
			fetchData{UID: 7, Size: -1, Header: []byte("Message-ID: <a@b>\r\n\r\n")}},
		{"* 2 FETCH (UID 7 BODY[HEADER.FIELDS (\"MESSAGE-ID\")] \"\")\r\n",
			fetchData{UID: 7, Size: -1, Header: []byte{}}},
		{"* 2 FETCH (UID 7 BODY[]<0> ~{2}\r\nab)\r\n", fetchData{UID: 7, Size: -1, Body: []byte("ab")}},
		{"* 2 FETCH (UID 7 BODY[] NIL)\r\n", fetchData{UID: 7, Size: -1}},
		{"* 2 FETCH (BODY[] \"quoted \\\"body\\\"\" UID 8)\r\n", fetchData{UID: 8, Size: -1, Body: []byte(`quoted "body"`)}},
		{"* 2 FETCH (FLAGS (\\Seen))\r\n", fetchData{Size: -1, Flags: []string{`\Seen`}}},
		{"* 2 FETCH (UID 9 ENVELOPE (\"date\" \"subj\" ((NIL NIL \"a\" \"b\")) NIL NIL NIL NIL NIL NIL \"<id>\") MODSEQ (12))\r\n", fetchData{UID: 9, Size: -1}},
		{"* 2 FETCH (UID 7 BODY[] {70}\r\n" + strings.Repeat("x", 70) + ")\r\n", fetchData{UID: 7, Size: -1, BodyDropped: 70}},
	}
	for _, tt := range tests {
		rs, err := parseAll(tt.in, maxLine, 60)
		if err != nil || len(rs) != 1 || rs[0].Fetch == nil {
			t.Errorf("parse %q: got %+v, %v; want one FETCH", tt.in, rs, err)
			continue
		}
		if got := *rs[0].Fetch; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parse %q:\n got %+v\nwant %+v", tt.in, got, tt.want)
		}
	}
}

// TestParseLiteralBudget: a response's literals share one budget; a
// literal over what is left is dropped, and the stream stays in step.
func TestParseLiteralBudget(t *testing.T) {
	in := "* 1 FETCH (UID 1 BODY[HEADER] {6}\r\nheader BODY[] {10}\r\n0123456789)\r\n* 2 FETCH (UID 2 BODY[] {10}\r\n0123456789)\r\n"
	rs, err := parseAll(in, maxLine, 12)
	if err != nil || len(rs) != 2 {
		t.Fatalf("got %d responses, %v; want 2", len(rs), err)
	}
	if f := rs[0].Fetch; string(f.Header) != "header" || f.Body != nil || f.BodyDropped != 10 {
		t.Errorf("first: got header %q body %q dropped %d; want header, body dropped (10)", f.Header, f.Body, f.BodyDropped)
	}
	if f := rs[1].Fetch; string(f.Body) != "0123456789" {
		t.Errorf("second: got body %q, want it whole (the budget is per response)", f.Body)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", io.EOF},
		{"*\r\n", ErrProtocol},
		{"* \r\n", ErrProtocol},
		{"a1\r\n", ErrProtocol},
		{"a1 MAYBE\r\n", ErrProtocol},
		{"a\x001 OK\r\n", ErrProtocol},
		{"HTTP/1.1 200 OK\r\n", ErrProtocol},
		{"(a) OK\r\n", ErrProtocol},
		{"a1 OK \x00\r\n", ErrProtocol},
		{"* OK [UIDNEXT 5\r\n", ErrProtocol},
		{"* OK no end", io.ErrUnexpectedEOF},
		{"* 1 FETCH (UID 1 BODY[] {10}\r\n01234", io.ErrUnexpectedEOF},
		{"* 1 FETCH (UID 1 BODY[] {10}\r\n01234", io.ErrUnexpectedEOF},
		{"* 1 FETCH (UID 1 BODY[] {100}\r\n01234", io.ErrUnexpectedEOF}, // dropped, yet cut
		{"* 1 FETCH (UID 1 BODY[] {x}\r\n", ErrProtocol},
		{"* 1 FETCH (UID 1 BODY[] {99999999999999999999}\r\n", ErrProtocol},
		{"* 1 FETCH (UID 1 BODY[] {}\r\n", ErrProtocol},
		{"* 1 FETCH (UID 1 BODY[] \"a\rb\")\r\n", ErrProtocol},
		{"* 1 FETCH (UID 1 BODY[] \"a\\qb\")\r\n", ErrProtocol},
		{"* 1 FETCH (UID 0)\r\n", ErrProtocol},
		{"* 1 FETCH (UID 4294967296)\r\n", ErrProtocol},
		{"* 1 FETCH (UID)\r\n", ErrProtocol},
		{"* 1 FETCH (UID 1\r\n", ErrProtocol},
		{"* 1 FETCH UID 1\r\n", ErrProtocol},
		{"* 1 FETCH (BODY[HEADER 1)\r\n", ErrProtocol},
		{"* 1 FETCH (RFC822.SIZE x)\r\n", ErrProtocol},
		{"* 99999999999 EXISTS\r\n", ErrProtocol},
		{"* SEARCH 1 x\r\n", ErrProtocol},
		{"* SEARCH 0\r\n", ErrProtocol},
		{"* ESEARCH ALL 1:*\r\n", ErrProtocol},
		{"* LIST \"x\" \"/\" INBOX\r\n", ErrProtocol},
		{"* LIST () \"//\" INBOX\r\n", ErrProtocol},
		{"* LIST () \"/\" \"\"\r\n", ErrProtocol},
		{"* X " + strings.Repeat("(", maxDepth+2) + "\r\n", ErrProtocol},
		{"* OK " + strings.Repeat("x", 100) + "\r\n", ErrLineTooLong},
	}
	for _, tt := range tests {
		_, err := parseAll(tt.in, 64, 16)
		if tt.want == io.EOF {
			if err != nil {
				t.Errorf("parse %q: got %v, want a clean end", tt.in, err)
			}
			continue
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("parse %q: got %v, want %v", tt.in, err, tt.want)
		}
	}
}

func TestUIDSet(t *testing.T) {
	tests := []struct {
		in, want string
		n        int
	}{
		{"", "", 0},
		{"1", "1", 1},
		{"3:1,7,5,6,9:10", "1:3,5:7,9:10", 8},
		{"4294967295,1:2", "1:2,4294967295", 3},
	}
	for _, tt := range tests {
		s, err := ParseUIDSet(tt.in)
		if err != nil || s.String() != tt.want || s.Len() != tt.n {
			t.Errorf("ParseUIDSet(%q): got %q (%d), %v; want %q (%d)", tt.in, s, s.Len(), err, tt.want, tt.n)
		}
	}
	for _, bad := range []string{"0", "1:*", "*", "a", "1,,2", "+1", "4294967296", "1:"} {
		if _, err := ParseUIDSet(bad); err == nil {
			t.Errorf("ParseUIDSet(%q): got no error", bad)
		}
	}
	s := NewUIDSet(9, 1, 2, 3, 5, 3)
	if got, want := s.String(), "1:3,5,9"; got != want {
		t.Errorf("NewUIDSet: got %s, want %s", got, want)
	}
	for u, want := range map[uint32]bool{0: false, 1: true, 3: true, 4: false, 5: true, 9: true, 10: false} {
		if s.Contains(u) != want {
			t.Errorf("Contains(%d): got %v, want %v", u, !want, want)
		}
	}
	parts := splitSet(NewUIDSet(1, 3, 5, 7, 9, 11), 7)
	var got []string
	for _, p := range parts {
		got = append(got, p.String())
	}
	if want := []string{"1,3,5", "7,9,11"}; !reflect.DeepEqual(got, want) {
		t.Errorf("splitSet: got %v, want %v", got, want)
	}
}

func TestQuote(t *testing.T) {
	tests := []struct {
		in       string
		quotable bool
		quoted   string
	}{
		{"plain", true, `"plain"`},
		{`a"b\c`, true, `"a\"b\\c"`},
		{"", true, `""`},
		{"ümlaut", false, ""},
		{"cr\rlf", false, ""},
		{"nul\x00", false, ""},
	}
	for _, tt := range tests {
		if got := quotable(tt.in); got != tt.quotable {
			t.Errorf("quotable(%q): got %v, want %v", tt.in, got, tt.quotable)
		}
		if tt.quotable {
			if got := quote(tt.in); got != tt.quoted {
				t.Errorf("quote(%q): got %s, want %s", tt.in, got, tt.quoted)
			}
		}
	}
}

func TestPrintable(t *testing.T) {
	if got, want := printable("  [ALERT]\x1b[31m bad\x00 ü "), "[ALERT][31m bad"; got != want {
		t.Errorf("printable: got %q, want %q", got, want)
	}
	if got := printable(strings.Repeat("y", 1000)); len(got) != 200 {
		t.Errorf("printable: got %d bytes, want 200", len(got))
	}
}

// FuzzParseResponse reads any server output as responses: it never
// panics, never keeps more literal bytes than the budget, and what it
// returns keeps the parser's promises.
func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{
		"* OK [CAPABILITY IMAP4rev1] ready\r\n", "a1 NO x\r\n", "+ go\r\n", "* 1 FETCH (BODY[] {5}\r\nabcde)\r\n",
		"* 2 FETCH (UID 7 BODY[HEADER.FIELDS (MESSAGE-ID)] {21}\r\nMessage-ID: <a@b>\r\n\r\n RFC822.SIZE 3 INTERNALDATE \"17-Jul-1996 02:44:25 -0700\")\r\n",
		`* LIST (\HasNoChildren \Junk) "/" "Spam"` + "\r\n", "* SEARCH 1 2 3\r\n", "* ESEARCH (TAG \"a\") UID ALL 1:3\r\n",
		"* OK [UIDVALIDITY 3] x\r\n* 3 EXISTS\r\n* 1 EXPUNGE\r\na1 OK done\r\n", "*", "", "\x00", "* 1 FETCH (UID 1 BODY[] ~{3}\r\nab",
		"* LIST (" + strings.Repeat("a ", 200) + ") \"/\" x\r\n", "* 1 FETCH (X (" + strings.Repeat("a ", 200) + "))\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const budget = 64
		l := &lexer{r: bufio.NewReader(strings.NewReader(string(in))), line: 256, literals: budget}
		for range 100 {
			r, err := readResponse(l)
			if err != nil {
				return
			}
			if l.items > maxItems {
				t.Fatalf("parsed %d items, budget %d", l.items, maxItems)
			}
			if l.lits > budget {
				t.Fatalf("kept %d literal bytes, budget %d", l.lits, budget)
			}
			switch {
			case r.Tag == "":
				t.Fatalf("empty tag without error")
			case r.Tag != "*" && r.Tag != "+" && r.Status == "":
				t.Fatalf("tagged response without a status")
			case r.Kind == "LIST" && (r.Mailbox == nil || r.Mailbox.Name == ""):
				t.Fatalf("LIST without a mailbox")
			}
			if f := r.Fetch; f != nil && (len(f.Body) > budget || len(f.Header) > budget) {
				t.Fatalf("literal over the budget kept")
			}
			for i := 1; i < len(r.UIDs); i++ {
				if r.UIDs[i].Lo <= r.UIDs[i-1].Hi+1 {
					t.Fatalf("UID set not normalized: %v", r.UIDs)
				}
			}
			if p := printable(r.Text); len(p) > 200 || strings.ContainsAny(p, "\r\n\x00") {
				t.Fatalf("printable(%q) = %q", r.Text, p)
			}
		}
	})
}

// FuzzUIDSet: a set parsed is normalized and prints as it parses.
func FuzzUIDSet(f *testing.F) {
	for _, s := range []string{"1", "1:3,5", "9,1:2", "4294967295:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseUIDSet(in)
		if err != nil {
			return
		}
		again, err := ParseUIDSet(s.String())
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("%q: %v prints %q which parses as %v, %v", in, s, s.String(), again, err)
		}
	})
}

// FuzzID: every provider id ParseID accepts prints back the same.
func FuzzID(f *testing.F) {
	f.Add("INBOX;UIDVALIDITY=1/;UID=2")
	f.Add("a%3Bb/c;UIDVALIDITY=1/;UID=2;KEY=abc")
	f.Fuzz(func(t *testing.T, in string) {
		id, err := ParseID(in)
		if err != nil {
			return
		}
		back, err := ParseID(id.String())
		if err != nil || back != id {
			t.Fatalf("%q: %+v prints %q, parses as %+v, %v", in, id, id.String(), back, err)
		}
	})
}
