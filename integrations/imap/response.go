package imap

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
)

// maxLine bounds one response line read from a server (bytes, CRLF
// included). RFC 7162 asks clients to accept lines of 8192 octets; a longer
// one is refused rather than buffered, so a hostile server cannot make the
// client allocate without bound.
const maxLine = 8192

// Errors of the IMAP exchange.
var (
	// ErrLineTooLong means the server sent a line longer than 8192 bytes.
	ErrLineTooLong = errors.New("imap: server sent an over-long line")
	// ErrProtocol means the server did not answer as an IMAP server does.
	ErrProtocol = errors.New("imap: server did not answer as an IMAP server")
)

// response is one server response line (RFC 3501 section 7).
type response struct {
	// Tag is "*" for untagged data, "+" for a continuation request, or the
	// tag of the command the line completes.
	Tag string
	// Status is OK, NO, BAD, BYE or PREAUTH; empty for continuation
	// requests and untagged data such as CAPABILITY.
	Status string
	// Text is the rest of the line, e.g. "[ALERT] Invalid credentials".
	Text string
}

// readLine reads one line, without its CRLF (a bare LF is accepted too).
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, ErrLineTooLong
	}
	if err != nil {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// parseResponse parses one response line, without its CRLF.
func parseResponse(line []byte) (response, error) {
	if len(line) == 0 || bytes.IndexByte(line, 0) >= 0 || bytes.ContainsAny(line, "\r\n") {
		return response{}, ErrProtocol
	}
	s := string(line)
	tag, rest, _ := strings.Cut(s, " ")
	switch {
	case tag == "+":
		return response{Tag: "+", Text: rest}, nil
	case tag == "*":
		word, text, _ := strings.Cut(rest, " ")
		switch strings.ToUpper(word) {
		case "OK", "NO", "BAD", "BYE", "PREAUTH":
			return response{Tag: "*", Status: strings.ToUpper(word), Text: text}, nil
		case "":
			return response{}, ErrProtocol
		}
		return response{Tag: "*", Text: rest}, nil
	case !validTag(tag):
		return response{}, ErrProtocol
	}
	word, text, _ := strings.Cut(rest, " ")
	switch status := strings.ToUpper(word); status {
	case "OK", "NO", "BAD":
		return response{Tag: tag, Status: status, Text: text}, nil
	}
	return response{}, ErrProtocol
}

// validTag reports whether s is a command tag: one or more ASTRING-CHARs
// other than '+' (RFC 3501 section 9).
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`(){%*"\+`, c) >= 0 {
			return false
		}
	}
	return true
}

// printable returns the server's text fit for an error message: printable
// ASCII only, at most 200 bytes.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 200; i++ {
		if c := s[i]; c >= ' ' && c < 0x7f {
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
