package mail

import (
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"strings"

	"searchsvc/integrations/textguard"
)

// maxPartRead is the most decoded bytes read of one text part. HTML needs
// room beyond MaxText for the markup it loses.
const maxPartRead = 4 << 20

// walker looks through a message's MIME tree for its body text.
type walker struct {
	parts int
	plain string // the first non-blank text/plain part, as text
	html  string // the first non-blank text/html part, as text
}

// bodyText returns the text of the entity with the given header fields
// and body: see Message.Text.
func bodyText(contentType, encoding string, body io.Reader) string {
	w := &walker{}
	w.entity(contentType, "", encoding, body, 0)
	text := w.plain
	if text == "" {
		text = w.html
	}
	return textguard.Truncate(text, MaxText)
}

// entity looks at one MIME entity: a multipart one is walked, a text one
// read, anything else (images, attachments, message/rfc822) skipped.
// depth counts the multipart entities around it.
func (w *walker) entity(contentType, disposition, encoding string, body io.Reader, depth int) {
	w.parts++
	if w.parts > MaxParts || w.plain != "" {
		return
	}
	media, params := mediaType(contentType)
	switch {
	case strings.HasPrefix(media, "multipart/"):
		boundary := params["boundary"]
		if depth >= MaxDepth || boundary == "" {
			return
		}
		// A multipart body has no transfer encoding of its own (RFC 2045
		// §6.4); the parts say theirs.
		mr := multipart.NewReader(body, boundary)
		for w.plain == "" && w.parts < MaxParts {
			p, err := mr.NextRawPart()
			if err != nil {
				return // the end, or a broken structure: keep what was found
			}
			w.entity(p.Header.Get("Content-Type"), p.Header.Get("Content-Disposition"),
				p.Header.Get("Content-Transfer-Encoding"), p, depth+1)
		}
	case media == "text/plain" || media == "text/html":
		if attachment(disposition) || (media == "text/html" && w.html != "") {
			return
		}
		text := decodeText(readPart(encoding, body), params["charset"])
		if media == "text/plain" {
			w.plain = plainText(text)
		} else {
			w.html = htmlText(text)
		}
	}
}

// mediaType parses a Content-Type field. A missing or unreadable one means
// text/plain (RFC 2045 §5.2); parameters that cannot be read are dropped.
func mediaType(v string) (string, map[string]string) {
	media, params, err := mime.ParseMediaType(v)
	if media == "" || (err != nil && err != mime.ErrInvalidMediaParameter) {
		return "text/plain", nil
	}
	return media, params
}

// attachment reports whether a Content-Disposition field marks a part as
// an attachment rather than part of the body.
func attachment(v string) bool {
	d, _, _ := mime.ParseMediaType(v)
	return d == "attachment"
}

// readPart reads at most maxPartRead bytes of a part's content, undoing its
// Content-Transfer-Encoding. Content that stops decoding halfway is kept up
// to where it stopped.
func readPart(encoding string, r io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(decoder(encoding, r), maxPartRead))
	return b
}

// decoder undoes a part's Content-Transfer-Encoding as r is read.
func decoder(encoding string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, &base64Filter{r: r})
	}
	return r
}

// base64Filter drops every byte that is not in the base64 alphabet: line
// breaks, but also the spaces and stray characters mailers leave in.
type base64Filter struct {
	r io.Reader
}

func (f *base64Filter) Read(p []byte) (int, error) {
	for {
		n, err := f.r.Read(p)
		kept := 0
		for _, c := range p[:n] {
			if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' {
				p[kept] = c
				kept++
			}
		}
		if kept > 0 || n == 0 || err != nil {
			return kept, err
		}
	}
}

// plainText tidies a text/plain body: line endings become "\n", and blank
// lines and spaces at either end go.
func plainText(s string) string {
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return strings.TrimSpace(s)
}
