// Package mail parses one Internet message (RFC 5322 with MIME, RFCs
// 2045-2047) into what the search index keeps of it: subject, sender,
// recipients, date and the body as plain text.
//
// It is built for untrusted input and the standard library only. Every
// size is bounded (see the limits below); a part that cannot be decoded is
// skipped or kept as far as it could be read, rather than failing the whole
// message. Only a header section that cannot be read at all is an error.
package mail

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"searchsvc/integrations/textguard"
)

// Limits of Parse. Callers bound the size of the raw message itself.
const (
	// MaxText is the most body text Parse returns, in bytes; longer text
	// is cut at a character boundary.
	MaxText = 1 << 20
	// MaxDepth is how deeply nested multipart entities are followed; parts
	// below are ignored.
	MaxDepth = 10
	// MaxParts is how many MIME parts of a message are looked at; later
	// parts are ignored.
	MaxParts = 500
	// MaxRecipients is how many To and Cc addresses are kept.
	MaxRecipients = 1000

	// maxHeader is the most kept of Subject, From and each recipient,
	// in bytes, and maxRawHeader the most of a raw header field decoded.
	maxHeader    = 4 << 10
	maxRawHeader = 64 << 10
)

// ErrMalformed is returned by Parse for input whose header section cannot
// be read: empty input, no header fields, or a first line that is not one.
var ErrMalformed = errors.New("mail: not an Internet message")

// Message is what Parse keeps of a message. Every string is valid UTF-8.
type Message struct {
	Subject string
	// From is the sender, as "Name <addr>" or "addr".
	From string
	// To are the To then Cc recipients, each as "Name <addr>" or "addr".
	// A field whose address list is malformed gives its decoded text as
	// one entry.
	To []string
	// Date is the Date header in UTC; zero if missing or unreadable.
	Date time.Time
	// Text is the body as plain text: the first text/plain part that is
	// not an attachment and not blank, else the first text/html part with
	// its markup removed. At most MaxText bytes.
	Text string
	// Thread is the message id of the conversation's first message, as
	// far as the message knows it: the first of References, else
	// In-Reply-To, else its own Message-ID. Empty when it names none.
	Thread string
	// Refs are the message ids that link the message to its
	// conversation: its own, the one it replies to, the conversation's
	// first and the latest references; at most MaxRefs.
	Refs []string
	// Attachments are the files the message carries, at most
	// MaxAttachments.
	Attachments []Attachment
}

// headerDecoder decodes RFC 2047 encoded words. It is never modified.
var headerDecoder = &mime.WordDecoder{CharsetReader: charsetReader}

// addressParser parses address lists with encoded words in display names.
var addressParser = &mail.AddressParser{WordDecoder: headerDecoder}

// Parse parses one raw message. Line endings may be CRLF or LF; a leading
// mbox "From " line is skipped. The error wraps ErrMalformed when there is
// no readable header section; everything after it is read leniently.
func Parse(raw []byte) (Message, error) {
	h, body, err := readHeader(raw)
	if err != nil {
		return Message{}, err
	}
	m := Message{
		Subject: decodeHeader(h.Get("Subject")),
		From:    sender(h.Get("From")),
		Date:    parseDate(h.Get("Date")),
	}
	for _, field := range [][]string{h["To"], h["Cc"]} {
		for _, v := range field {
			m.To = appendRecipients(m.To, v)
		}
	}
	m.Thread, m.Refs = threadOf(textproto.MIMEHeader(h))
	m.Attachments = attachments(h.Get("Content-Type"), bytes.NewReader(body))
	m.Text = bodyText(h.Get("Content-Type"), h.Get("Content-Transfer-Encoding"), bytes.NewReader(body))
	return m, nil
}

// readHeader reads a raw message's header section and returns it with
// the body that follows. The error wraps ErrMalformed as Parse's does.
func readHeader(raw []byte) (mail.Header, []byte, error) {
	raw = skipMboxLine(raw)
	r := bytes.NewReader(raw)
	// A reader of the pool, which ReadMessage takes as it is: a fresh
	// one of 4 KiB for each of a sync's mails was a twentieth of what
	// the sync allocated (BenchmarkDovecotFirstSync). The body is
	// returned as a part of raw, so nothing read through it outlives
	// this call.
	pooled := headReaders.Get().(*bufio.Reader)
	pooled.Reset(r)
	defer func() {
		pooled.Reset(nil)
		headReaders.Put(pooled)
	}()
	msg, err := mail.ReadMessage(pooled)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(msg.Header) == 0 {
		return nil, nil, fmt.Errorf("%w: no header fields", ErrMalformed)
	}
	// Where the body starts: what the reader took from r, less what it
	// holds unread.
	br, ok := msg.Body.(*bufio.Reader)
	if !ok {
		return nil, nil, fmt.Errorf("%w: unexpected reader", ErrMalformed)
	}
	return msg.Header, raw[len(raw)-r.Len()-br.Buffered():], nil
}

// headReaders are the buffered readers Parse reads messages through.
var headReaders = sync.Pool{New: func() any { return bufio.NewReader(nil) }}

// skipMboxLine drops the "From sender date" line that starts a message
// taken from an mbox file; it is not a header field.
func skipMboxLine(raw []byte) []byte {
	if !bytes.HasPrefix(raw, []byte("From ")) {
		return raw
	}
	if i := bytes.IndexByte(raw, '\n'); i >= 0 {
		return raw[i+1:]
	}
	return nil
}

// decodeHeader decodes a header field's text: raw 8-bit bytes (UTF-8, else
// taken as Windows-1252) and encoded words, with white space collapsed.
func decodeHeader(s string) string {
	s = textguard.Truncate(s, maxRawHeader)
	if !utf8.ValidString(s) {
		s = DecodeCP1252([]byte(s))
	}
	if d, err := headerDecoder.DecodeHeader(s); err == nil {
		s = d
	}
	return textguard.Truncate(collapse(s), maxHeader)
}

// sender formats the From field, or its decoded text when it is not one
// readable address.
func sender(v string) string {
	if strings.TrimSpace(v) == "" {
		return ""
	}
	list, err := parseAddresses(v)
	if err != nil || len(list) == 0 {
		return decodeHeader(v)
	}
	return list[0]
}

// appendRecipients appends the addresses of one To or Cc field to to, up
// to MaxRecipients in all.
func appendRecipients(to []string, v string) []string {
	if len(to) >= MaxRecipients || strings.TrimSpace(v) == "" {
		return to
	}
	list, err := parseAddresses(v)
	if err != nil {
		if d := decodeHeader(v); d != "" {
			to = append(to, d)
		}
		return to
	}
	return append(to, list[:min(len(list), MaxRecipients-len(to))]...)
}

// parseAddresses parses an address list and formats each address.
func parseAddresses(v string) ([]string, error) {
	v = textguard.Truncate(v, maxRawHeader)
	if !utf8.ValidString(v) {
		v = DecodeCP1252([]byte(v))
	}
	list, err := addressParser.ParseList(v)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, formatAddress(a))
	}
	return out, nil
}

// formatAddress gives "Name <addr>", or "addr" when there is no name.
func formatAddress(a *mail.Address) string {
	addr := textguard.Truncate(collapse(a.Address), maxHeader)
	name := collapse(a.Name)
	if name == "" || name == addr {
		return addr
	}
	return textguard.Truncate(name, maxHeader) + " <" + addr + ">"
}

// parseDate reads a Date field; an unreadable one gives the zero time.
func parseDate(v string) time.Time {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 256 {
		return time.Time{}
	}
	t, err := mail.ParseDate(v)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// collapse replaces every run of white space in s by one space, trims
// both ends and makes s valid UTF-8.
func collapse(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Join(strings.Fields(s), " ")
}
