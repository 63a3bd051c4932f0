package imap

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes fn allocates, as counted by the runtime.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileLine is a response of 8 MiB of one-byte items: 4 Mi of them.
func hostileLine(head string) []byte {
	var b bytes.Buffer
	b.WriteString(head)
	b.Write(bytes.Repeat([]byte("a "), 4<<20))
	b.WriteString("a)\r\na3 OK done\r\n")
	return b.Bytes()
}

// TestHostileResponseMemory sends, once logged in, one response of 8 MiB
// made of millions of tiny items (a LIST's attributes, a FETCH's list):
// the client refuses it as a protocol error, and what it allocates in
// all stays bounded by the line and item budgets, far below what a value
// per item would cost (about 80 bytes each, over 300 MB here).
func TestHostileResponseMemory(t *testing.T) {
	const login = "* OK [CAPABILITY IMAP4rev1 ESEARCH] ready\r\na1 OK in\r\n"
	const bound = 32 << 20
	tests := []struct {
		name string
		resp []byte
		run  func(*Client) error
	}{
		{"LIST attributes", hostileLine("* LIST ("), func(c *Client) error {
			_, err := c.List(context.Background())
			return err
		}},
		{"FETCH list", hostileLine("* 1 FETCH (X ("), func(c *Client) error {
			return c.FetchEnvelopes(context.Background(), NewUIDSet(1), func(Envelope) error { return nil })
		}},
		{"ESEARCH pairs", hostileLine("* ESEARCH (TAG \"a3\") UID "), func(c *Client) error {
			_, err := c.SearchUIDs(context.Background())
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := append([]byte(login+"* 1 EXISTS\r\n"), tt.resp...)
			var err error
			got := allocated(func() {
				c := newClient(struct {
					io.Reader
					io.Writer
				}{bytes.NewReader(server), io.Discard}, 1<<20)
				if err = c.login(context.Background(), Account{Username: "u", Password: "pw"}); err != nil {
					return
				}
				c.exists = 1
				err = tt.run(c)
			})
			if !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrLineTooLong) {
				t.Errorf("got error %v, want ErrProtocol or ErrLineTooLong", err)
			}
			if got > bound {
				t.Errorf("allocated %d bytes, want at most %d", got, bound)
			}
		})
	}
}

// TestResponseBudgets checks which responses may be long: a SEARCH of
// many UIDs passes (kept as ranges), any other response over the line
// budget or the item budget is refused.
func TestResponseBudgets(t *testing.T) {
	many := strings.Repeat("1 ", maxItems+1)
	uids := strings.Repeat("7 ", maxResponseLine)
	tests := []struct {
		name, in string
		want     error
	}{
		{"long SEARCH", "* SEARCH " + uids + "\r\n", nil},
		{"long LIST", "* LIST () \"/\" \"" + strings.Repeat("x", maxResponseLine) + "\"\r\n", ErrLineTooLong},
		{"items in a FETCH", "* 1 FETCH (FLAGS (" + many[:maxResponseLine-40] + "))\r\n", nil},
		{"items over the budget", "* 1 FETCH (FLAGS (" + many + "))\r\n", ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &lexer{r: bufio.NewReader(strings.NewReader(tt.in)), line: maxResponseLine, long: maxLine, literals: 1 << 20}
			if tt.want == ErrProtocol {
				l.line = maxLine // the line is long enough: the items decide
			}
			_, err := readResponse(l)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}
