package mail

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"path"
	"strconv"
	"strings"

	"searchsvc/integrations/textguard"
)

// Limits of the attachments Parse lists.
const (
	// MaxAttachments is how many attachments of a message are listed.
	MaxAttachments = 50
	// MaxAttachmentData is the largest attachment whose bytes Parse keeps
	// for text extraction (the extractor reads no larger file); a larger
	// one is listed with its size, without its bytes.
	MaxAttachmentData = 10 << 20
	// maxAttachmentsData bounds the bytes kept of all of one message's
	// attachments together: what a sync holds of a mail at once.
	maxAttachmentsData = 2 * MaxAttachmentData
)

// Attachment is a file a message carries: a part with a file name, or
// marked as an attachment, that is not the body. Inline images without a
// file name are not attachments.
type Attachment struct {
	// Index is its place among the message's attachments, from 0, in the
	// order of the MIME tree.
	Index int
	// Name is its file name (decoded, without a directory), at most
	// maxHeader bytes; "attachment-N" when the part names none.
	Name string
	// Type is its media type, lower case ("application/pdf").
	Type string
	// Size is its decoded size in bytes.
	Size int64
	// Data is its decoded content, for extraction, when it is at most
	// MaxAttachmentData bytes and the message's kept total allows; else
	// nil.
	Data []byte
}

// attachments lists the attachments of the body that follows the header
// fields contentType and encoding, when it is a multipart one.
func attachments(contentType string, body io.Reader) []Attachment {
	media, params := mediaType(contentType)
	if !strings.HasPrefix(media, "multipart/") || params["boundary"] == "" {
		return nil
	}
	a := &attachWalker{open: -1}
	a.multipart(params["boundary"], body, 1)
	return a.list
}

// orNumbered is an attachment's name as listed: "attachment-N" when the
// part names none.
func orNumbered(name string, index int) string {
	if name == "" {
		return "attachment-" + strconv.Itoa(index+1)
	}
	return name
}

// ErrNoAttachment is returned by OpenAttachment for an index the message
// does not list.
var ErrNoAttachment = errors.New("mail: no such attachment")

// OpenAttachment finds the attachment with the given index in a raw
// message, walking the MIME tree exactly as Parse lists attachments, and
// returns it (without Data or Size) with a reader of its decoded content,
// which reads from raw as it goes: nothing of it is held. An index Parse
// would not list gives ErrNoAttachment; input Parse refuses, its error.
func OpenAttachment(raw []byte, index int) (Attachment, io.Reader, error) {
	if index < 0 || index >= MaxAttachments {
		return Attachment{}, nil, ErrNoAttachment
	}
	h, body, err := readHeader(raw)
	if err != nil {
		return Attachment{}, nil, err
	}
	media, params := mediaType(h.Get("Content-Type"))
	if !strings.HasPrefix(media, "multipart/") || params["boundary"] == "" {
		return Attachment{}, nil, ErrNoAttachment
	}
	a := &attachWalker{open: index}
	a.multipart(params["boundary"], bytes.NewReader(body), 1)
	if a.found == nil {
		return Attachment{}, nil, ErrNoAttachment
	}
	a.found.Name = orNumbered(a.found.Name, index)
	return *a.found, a.content, nil
}

// attachWalker walks a whole MIME tree for its attachments.
type attachWalker struct {
	parts int
	kept  int64 // bytes of Data kept so far
	list  []Attachment

	// open, when not negative, is the index of the one attachment asked
	// for (OpenAttachment): the walk stops there, with found its
	// attachment and content set.
	open    int
	found   *Attachment
	content io.Reader
}

func (a *attachWalker) multipart(boundary string, body io.Reader, depth int) {
	mr := multipart.NewReader(body, boundary)
	for a.parts < MaxParts && len(a.list) < MaxAttachments && a.found == nil {
		p, err := mr.NextRawPart()
		if err != nil {
			return
		}
		a.parts++
		media, params := mediaType(p.Header.Get("Content-Type"))
		if strings.HasPrefix(media, "multipart/") {
			if depth < MaxDepth && params["boundary"] != "" {
				a.multipart(params["boundary"], p, depth+1)
			}
			continue
		}
		disp, dparams, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
		name := fileName(dparams["filename"], params["name"])
		if name == "" && (disp != "attachment" || media == "text/plain" || media == "text/html") {
			continue // the body, or an inline part without a name
		}
		if a.open == len(a.list) {
			a.found = &Attachment{Index: a.open, Name: name, Type: media}
			a.content = decoder(p.Header.Get("Content-Transfer-Encoding"), p)
			return
		}
		a.add(media, name, p.Header.Get("Content-Transfer-Encoding"), p)
	}
}

// add lists one attachment, reading its content to count its size and,
// within the bounds, to keep it.
func (a *attachWalker) add(media, name, encoding string, r io.Reader) {
	at := Attachment{Index: len(a.list), Name: name, Type: media}
	if a.open >= 0 {
		a.list = append(a.list, at) // only counted, on the way to the one asked for
		return
	}
	at.Name = orNumbered(at.Name, at.Index)
	dec := decoder(encoding, r)
	room := min(int64(MaxAttachmentData), maxAttachmentsData-a.kept)
	buf, _ := io.ReadAll(io.LimitReader(dec, room+1))
	at.Size = int64(len(buf))
	if at.Size <= room {
		at.Data = buf
		a.kept += at.Size
	} else {
		// Too large to keep: count the rest without holding it.
		n, _ := io.Copy(io.Discard, dec)
		at.Size += n
	}
	a.list = append(a.list, at)
}

// fileName is a part's file name: the Content-Disposition's filename,
// else the Content-Type's name (older mailers), decoded, without any
// directory a sender put in it, without control characters.
func fileName(names ...string) string {
	for _, n := range names {
		if n == "" {
			continue
		}
		if d, err := headerDecoder.DecodeHeader(n); err == nil {
			n = d
		}
		n = strings.ReplaceAll(n, "\\", "/")
		n = path.Base(strings.TrimSpace(n))
		n = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, n)
		n = collapse(n)
		if n != "" && n != "." && n != "/" && n != ".." {
			return textguard.Truncate(n, maxHeader)
		}
	}
	return ""
}
