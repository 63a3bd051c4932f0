package imap

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestParseResponse(t *testing.T) {
	tests := []struct {
		line string
		want response
	}{
		{"* OK [CAPABILITY IMAP4rev1] ready", response{Tag: "*", Status: "OK", Text: "[CAPABILITY IMAP4rev1] ready"}},
		{"* ok lower case", response{Tag: "*", Status: "OK", Text: "lower case"}},
		{"* PREAUTH welcome", response{Tag: "*", Status: "PREAUTH", Text: "welcome"}},
		{"* BYE", response{Tag: "*", Status: "BYE"}},
		{"* CAPABILITY IMAP4rev1 IDLE", response{Tag: "*", Text: "CAPABILITY IMAP4rev1 IDLE"}},
		{"* 3 EXISTS", response{Tag: "*", Text: "3 EXISTS"}},
		{"+ Ready for literal", response{Tag: "+", Text: "Ready for literal"}},
		{"+", response{Tag: "+"}},
		{"a1 OK Logged in", response{Tag: "a1", Status: "OK", Text: "Logged in"}},
		{"a1 NO [AUTHENTICATIONFAILED] nope", response{Tag: "a1", Status: "NO", Text: "[AUTHENTICATIONFAILED] nope"}},
		{"A0001 BAD", response{Tag: "A0001", Status: "BAD"}},
	}
	for _, tt := range tests {
		got, err := parseResponse([]byte(tt.line))
		if err != nil || got != tt.want {
			t.Errorf("parseResponse(%q): got %+v, %v; want %+v", tt.line, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "*", "* ", "a1", "a1 MAYBE", "a\x001 OK", "HTTP/1.1 200 OK", "(a) OK", "a\"1 OK", "a1 OK \x00"} {
		if got, err := parseResponse([]byte(bad)); !errors.Is(err, ErrProtocol) {
			t.Errorf("parseResponse(%q): got %+v, %v; want ErrProtocol", bad, got, err)
		}
	}
}

func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("a1 OK crlf\r\n* bare lf\n"+strings.Repeat("x", maxLine+1)+"\r\n"), maxLine)
	for _, want := range []string{"a1 OK crlf", "* bare lf"} {
		got, err := readLine(r)
		if err != nil || string(got) != want {
			t.Errorf("readLine: got %q, %v; want %q", got, err, want)
		}
	}
	if _, err := readLine(r); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("over-long line: got %v, want ErrLineTooLong", err)
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

func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{"* OK ready", "a1 NO x", "+ go", "* 1 FETCH (BODY {5}", "a1 OK", "*", "", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		resp, err := parseResponse(line)
		if err != nil {
			return
		}
		switch {
		case resp.Tag == "":
			t.Fatalf("parseResponse(%q): empty tag without error", line)
		case resp.Tag != "*" && resp.Tag != "+" && resp.Status == "":
			t.Fatalf("parseResponse(%q): tagged line without a status", line)
		}
		if p := printable(resp.Text); len(p) > 200 || strings.ContainsAny(p, "\r\n\x00") {
			t.Fatalf("printable(%q) = %q", resp.Text, p)
		}
	})
}

// FuzzSession plays a hostile server: whatever it sends, a login ends
// without a panic, and a refusal never quotes the password.
func FuzzSession(f *testing.F) {
	f.Add([]byte("* OK ready\r\na1 OK done\r\na2 OK bye\r\n"), "pw")
	f.Add([]byte("* OK ready\r\n+ go\r\na1 NO pässwörd bad\r\n"), "pässwörd")
	f.Add([]byte("* PREAUTH\r\n"), "x")
	f.Add([]byte("* OK\r\n* BYE pw\r\n"), "pw")
	f.Fuzz(func(t *testing.T, server []byte, password string) {
		if password == "" || strings.IndexByte(password, 0) >= 0 {
			return
		}
		s := &session{r: bufio.NewReaderSize(bytes.NewReader(server), maxLine), w: io.Discard, secret: password}
		err := s.login(Account{Host: "h", Port: 993, Username: "u", Password: password})
		var se *ServerError
		if errors.As(err, &se) && strings.Contains(se.Text, password) && strings.Contains(printable(password), password) {
			t.Fatalf("refusal %q quotes the password", se.Text)
		}
	})
}
