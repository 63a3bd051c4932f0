package imap

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Client is one logged-in IMAP connection, read-only: it lists, examines,
// searches and fetches with BODY.PEEK, so nothing is marked read. Each
// read and write has its own deadline (Dialer.ReadTimeout), and every
// answer is bounded (line length, literal size, number of responses).
// A Client is not safe for concurrent use. After any error other than a
// *ServerError from NO, the connection is unusable: Close it.
type Client struct {
	rw         io.ReadWriter
	w          *bufio.Writer
	lx         *lexer
	conn       *timedConn // nil when rw is not a network connection
	tags       int
	caps       map[string]bool
	exists     uint32 // the selected mailbox's message count, as last told
	secret     string // never to appear in an error, should the server echo it
	maxMessage int64
	broken     error
}

// Capabilities returns the server's capabilities, upper case, sorted.
func (c *Client) Capabilities() []string {
	out := make([]string, 0, len(c.caps))
	for k := range c.caps {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Has reports whether the server announced the capability name.
func (c *Client) Has(name string) bool { return c.caps[upper(name)] }

// Close closes the connection without logging out.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// Logout says goodbye and closes the connection. Its error says only that
// the goodbye was not answered; the connection is closed either way.
func (c *Client) Logout(ctx context.Context) error {
	defer c.Close()
	if c.broken != nil {
		return c.broken
	}
	defer c.watch(ctx)()
	_, err := c.run("LOGOUT", 10, nil)
	var se *ServerError
	if errors.As(err, &se) && se.Status == "BYE" {
		err = nil // some servers close after BYE without completing
	}
	return err
}

// watch ends the connection's I/O when ctx is done; the returned func
// stops watching.
func (c *Client) watch(ctx context.Context) func() {
	if c.conn == nil {
		return func() {}
	}
	stop := context.AfterFunc(ctx, c.conn.abort)
	return func() { stop() }
}

// fail marks the client unusable and returns err, or the context's error
// when ctx ended the exchange.
func (c *Client) fail(ctx context.Context, err error) error {
	var se *ServerError
	if errors.As(err, &se) && se.Status == "NO" {
		return err
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("imap: %w", ctx.Err())
	}
	if c.broken == nil {
		c.broken = err
	}
	return err
}

func (c *Client) nextTag() string {
	c.tags++
	return "a" + strconv.Itoa(c.tags)
}

// refusal turns a server's NO, BAD or BYE into a *ServerError.
func (c *Client) refusal(resp response, err error) *ServerError {
	text := resp.Text
	if resp.Code != "" {
		text = "[" + resp.Code + strings.TrimRight(" "+resp.CodeArg, " ") + "] " + text
	}
	if c.secret != "" {
		text = strings.ReplaceAll(text, c.secret, "[redacted]")
	}
	return &ServerError{Status: resp.Status, Text: printable(text), err: err}
}

// next reads one response.
func (c *Client) next() (response, error) {
	resp, err := readResponse(c.lx)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the server hung up mid-exchange
	}
	return resp, err
}

func (c *Client) send(s string) error {
	if _, err := c.w.WriteString(s); err != nil {
		return err
	}
	return c.w.Flush()
}

// run sends a command with astring arguments and reads its answer; see
// exchange.
func (c *Client) run(name string, maxResp int, handle func(response) error, args ...string) (response, error) {
	if c.broken != nil {
		return response{}, c.broken
	}
	tag := c.nextTag()
	segs, err := command(tag, name, args...)
	if err != nil {
		return response{}, err
	}
	for _, seg := range segs[:len(segs)-1] {
		if err := c.send(seg); err != nil {
			return response{}, err
		}
		cont, err := c.await(tag, true, maxResp, handle)
		if err != nil {
			return response{}, err
		}
		if cont.Tag != "+" {
			return response{}, c.refusal(cont, ErrProtocol)
		}
	}
	return c.exchange(tag, segs[len(segs)-1], maxResp, handle)
}

// exchange sends line and reads responses until the completion tagged tag.
func (c *Client) exchange(tag, line string, maxResp int, handle func(response) error) (response, error) {
	if err := c.send(line); err != nil {
		return response{}, err
	}
	return c.await(tag, false, maxResp, handle)
}

// await reads responses until the completion of the command tagged tag,
// or a continuation request if cont. Untagged data goes to handle (which
// may be nil) after the client noted what it tracks; a BYE ends the wait
// in error. At most maxResp untagged responses are accepted, so a server
// cannot keep the client reading.
func (c *Client) await(tag string, cont bool, maxResp int, handle func(response) error) (response, error) {
	for range maxResp {
		resp, err := c.next()
		if err != nil {
			return response{}, err
		}
		switch {
		case resp.Tag == tag, cont && resp.Tag == "+":
			return resp, nil
		case resp.Tag == "+":
			return response{}, fmt.Errorf("%w: unexpected continuation request", ErrProtocol)
		case resp.Tag != "*":
			return response{}, fmt.Errorf("%w: completion of another command", ErrProtocol)
		case resp.Status == "BYE":
			return response{}, c.refusal(resp, ErrProtocol)
		}
		switch resp.Kind {
		case "EXISTS":
			c.exists = resp.Num
		case "EXPUNGE":
			if c.exists > 0 {
				c.exists--
			}
		}
		if handle != nil {
			if err := handle(resp); err != nil {
				return response{}, err
			}
		}
	}
	return response{}, fmt.Errorf("%w: more than %d responses to one command", ErrProtocol, maxResp)
}

// ok runs a command under ctx and requires a tagged OK: NO is a
// *ServerError wrapping ErrRefused, BAD one wrapping ErrProtocol.
func (c *Client) ok(ctx context.Context, name string, maxResp int, handle func(response) error, args ...string) (response, error) {
	defer c.watch(ctx)()
	done, err := c.run(name, maxResp, handle, args...)
	switch {
	case err != nil:
	case done.Status == "NO":
		err = c.refusal(done, ErrRefused)
	case done.Status != "OK":
		err = c.refusal(done, ErrProtocol)
	}
	if err != nil {
		return done, c.fail(ctx, err)
	}
	return done, nil
}

// maxMailboxes bounds the mailboxes of a LIST answer.
const maxMailboxes = 10000

// List returns every mailbox: LIST "" "*", asking for the special-use
// attributes of RFC 6154 where the server offers them on request.
func (c *Client) List(ctx context.Context) ([]Mailbox, error) {
	var out []Mailbox
	handle := func(r response) error {
		if r.Kind == "LIST" && r.Mailbox != nil {
			out = append(out, *r.Mailbox)
		}
		return nil
	}
	var err error
	if c.Has("SPECIAL-USE") && c.Has("LIST-EXTENDED") {
		defer c.watch(ctx)()
		var done response
		tag := c.nextTag()
		done, err = c.exchange(tag, tag+` LIST "" "*" RETURN (SPECIAL-USE)`+"\r\n", maxMailboxes, handle)
		if err == nil && done.Status != "OK" {
			err = c.refusal(done, ErrRefused)
		}
		err = c.failIf(ctx, err)
	} else {
		_, err = c.ok(ctx, "LIST", maxMailboxes, handle, "", "*")
	}
	return out, err
}

func (c *Client) failIf(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return c.fail(ctx, err)
}

// Status is what EXAMINE tells of a mailbox.
type Status struct {
	// UIDValidity changes when the server renumbers the mailbox's UIDs.
	UIDValidity uint32
	// UIDNext is the UID the next message will get; 0 if the server did
	// not say (IMAP4rev1 servers may not).
	UIDNext uint32
	// Exists is the number of messages.
	Exists uint32
}

// Examine selects the mailbox name read-only (EXAMINE), so that nothing a
// sync does can change it.
func (c *Client) Examine(ctx context.Context, name string) (Status, error) {
	var st Status
	c.exists = 0
	_, err := c.ok(ctx, "EXAMINE", 1000, func(r response) error {
		switch r.Code {
		case "UIDVALIDITY", "UIDNEXT":
			n, err := strconv.ParseUint(r.CodeArg, 10, 32)
			if err != nil {
				return fmt.Errorf("%w: %s %s", ErrProtocol, r.Code, clipText(r.CodeArg))
			}
			if r.Code == "UIDVALIDITY" {
				st.UIDValidity = uint32(n)
			} else {
				st.UIDNext = uint32(n)
			}
		}
		return nil
	}, name)
	if err != nil {
		return Status{}, err
	}
	if st.UIDValidity == 0 {
		return Status{}, c.fail(ctx, fmt.Errorf("%w: EXAMINE without UIDVALIDITY", ErrProtocol))
	}
	st.Exists = c.exists
	return st, nil
}

// SearchUIDs returns the UIDs of every message of the examined mailbox:
// UID SEARCH ALL, or with ESEARCH (RFC 4731) its compact form. A set of
// more UIDs than the mailbox holds is a protocol error.
func (c *Client) SearchUIDs(ctx context.Context) (UIDSet, error) {
	var set UIDSet
	args := []string{"SEARCH", "ALL"}
	if c.Has("ESEARCH") {
		args = []string{"SEARCH", "RETURN", "(ALL)", "ALL"}
	}
	defer c.watch(ctx)()
	tag := c.nextTag()
	done, err := c.exchange(tag, tag+" UID "+strings.Join(args, " ")+"\r\n", 1000, func(r response) error {
		if r.Kind == "SEARCH" || r.Kind == "ESEARCH" {
			set = normalize(append(set, r.UIDs...))
		}
		return nil
	})
	if err == nil && done.Status != "OK" {
		err = c.refusal(done, ErrRefused)
	}
	if err == nil && set.Len() > int(c.exists) {
		err = fmt.Errorf("%w: %d UIDs for %d messages", ErrProtocol, set.Len(), c.exists)
	}
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	return set, nil
}
