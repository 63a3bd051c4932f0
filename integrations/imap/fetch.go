package imap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"
)

// maxCommandSet bounds the UID set of one FETCH command line (bytes);
// a longer set is sent in several commands. Servers accept command lines
// of 8 KiB at least.
const maxCommandSet = 4000

// extraResponses are the untagged responses a FETCH may bring beyond one
// per message: EXISTS, RECENT, flag changes made elsewhere.
const extraResponses = 1000

// Envelope is what a sync learns of a message before downloading it.
type Envelope struct {
	UID  uint32
	Size int64     // RFC822.SIZE, bytes
	Date time.Time // INTERNALDATE, when the server received it; zero if not sent
	// Key is MessageKey of the message's Message-ID, "" if it has none.
	Key string
}

// Message is one downloaded message.
type Message struct {
	UID  uint32
	Size int64     // RFC822.SIZE, bytes
	Date time.Time // INTERNALDATE; zero if not sent
	// Raw is the whole message; or, with HeaderOnly, its header section.
	Raw []byte
	// HeaderOnly marks a message larger than the size cap, of which only
	// the header section was fetched.
	HeaderOnly bool
}

// FetchEnvelopes fetches the size, date and Message-ID of the messages of
// set in the examined mailbox, calling fn for each, in the server's order:
// UID FETCH set (UID RFC822.SIZE INTERNALDATE
// BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]), a hundred bytes or so a message.
// A UID the server no longer has is left out. An error from fn stops the
// fetch and is returned once the server has answered.
func (c *Client) FetchEnvelopes(ctx context.Context, set UIDSet, fn func(Envelope) error) error {
	return c.fetch(ctx, set, "(UID RFC822.SIZE INTERNALDATE BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])", func(f *fetchData) error {
		return fn(Envelope{UID: f.UID, Size: max(f.Size, 0), Date: f.Date, Key: MessageKey(f.Header)})
	})
}

// FetchMessages downloads the messages of set, calling fn for each as it
// arrives, so that only one message is held at a time: UID FETCH set (UID
// RFC822.SIZE INTERNALDATE BODY.PEEK[]), BODY.PEEK so nothing is marked
// read. With headersOnly, or for a message whose body turns out larger
// than the size cap, only the header section is fetched (BODY.PEEK[HEADER])
// and the Message is HeaderOnly. A UID the server no longer has is left
// out.
func (c *Client) FetchMessages(ctx context.Context, set UIDSet, headersOnly bool, fn func(Message) error) error {
	if headersOnly {
		return c.fetchHeaders(ctx, set, fn)
	}
	var tooLarge setBuilder
	err := c.fetch(ctx, set, "(UID RFC822.SIZE INTERNALDATE BODY.PEEK[])", func(f *fetchData) error {
		if f.BodyDropped > 0 || f.Body == nil {
			tooLarge.add(f.UID)
			return nil
		}
		return fn(Message{UID: f.UID, Size: max(f.Size, int64(len(f.Body))), Date: f.Date, Raw: f.Body})
	})
	if err != nil {
		return err
	}
	if big := tooLarge.set(); len(big) > 0 {
		return c.fetchHeaders(ctx, big, fn)
	}
	return nil
}

func (c *Client) fetchHeaders(ctx context.Context, set UIDSet, fn func(Message) error) error {
	return c.fetch(ctx, set, "(UID RFC822.SIZE INTERNALDATE BODY.PEEK[HEADER])", func(f *fetchData) error {
		return fn(Message{UID: f.UID, Size: max(f.Size, 0), Date: f.Date, Raw: f.Header, HeaderOnly: true})
	})
}

// fetch runs UID FETCH of items over set, in commands of bounded length,
// calling fn for each FETCH response of a requested UID, once per UID.
func (c *Client) fetch(ctx context.Context, set UIDSet, items string, fn func(*fetchData) error) error {
	for _, part := range splitSet(set, maxCommandSet) {
		if err := c.fetchPart(ctx, part, items, fn); err != nil {
			return err
		}
	}
	return nil
}

func (c *Client) fetchPart(ctx context.Context, set UIDSet, items string, fn func(*fetchData) error) error {
	defer c.watch(ctx)()
	var fnErr error
	seen := make(map[uint32]bool)
	tag := c.nextTag()
	done, err := c.exchange(tag, tag+" UID FETCH "+set.String()+" "+items+"\r\n", set.Len()+extraResponses, func(r response) error {
		f := r.Fetch
		// A FETCH without a UID, or of another message, is a change made
		// elsewhere (flags) that the server reports unasked.
		if r.Kind != "FETCH" || f == nil || f.UID == 0 || !set.Contains(f.UID) || seen[f.UID] || fnErr != nil {
			return nil
		}
		seen[f.UID] = true
		fnErr = fn(f)
		return nil
	})
	if err == nil && done.Status != "OK" {
		err = c.refusal(done, ErrRefused)
	}
	if err != nil {
		return c.fail(ctx, err)
	}
	return fnErr
}

// splitSet cuts set into sets whose String is at most n bytes.
func splitSet(set UIDSet, n int) []UIDSet {
	var out []UIDSet
	start, size := 0, 0
	for i, r := range set {
		w := len(UIDSet{r}.String()) + 1
		if i > start && size+w > n {
			out = append(out, set[start:i])
			start, size = i, 0
		}
		size += w
	}
	if start < len(set) {
		out = append(out, set[start:])
	}
	return out
}

// MessageKey returns the key under which a message is recognised after
// its mailbox was renumbered (a new UIDVALIDITY): 96 bits of SHA-256 over
// its Message-ID, in base64url, so the provider id names no address.
// header is a header section holding the Message-ID field (or a whole
// message); "" if it has none.
func MessageKey(header []byte) string {
	id := messageID(header)
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("imap message-id\x00" + id))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// maxMessageID bounds a Message-ID (RFC 5322 lines are at most 998 bytes).
const maxMessageID = 998

// messageID returns the Message-ID of a header section: the first <…>
// of the field, or its text without white space; "" if there is none.
// It scans the header lines itself rather than parse the whole section:
// it runs for every message a sync sees.
func messageID(header []byte) string {
	var field []byte
	for len(header) > 0 {
		line := header
		if i := bytes.IndexByte(header, '\n'); i >= 0 {
			line, header = header[:i], header[i+1:]
		} else {
			header = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			header = nil // the end of the header section
		case line[0] == ' ' || line[0] == '\t':
			if field != nil {
				field = append(field, line...)
			}
		case field != nil:
			header = nil // the field ended
		case len(line) >= 11 && bytes.EqualFold(line[:11], []byte("message-id:")):
			field = append([]byte{}, line[11:]...)
		}
		if len(field) > maxMessageID {
			return ""
		}
	}
	v := strings.Join(strings.Fields(string(field)), "")
	if i := strings.IndexByte(v, '<'); i >= 0 {
		if j := strings.IndexByte(v[i:], '>'); j > 0 {
			v = v[i : i+j+1]
		}
	}
	return v
}
