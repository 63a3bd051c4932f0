package api

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/mail"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/textguard"
)

const (
	opOriginal   = "item.readOriginal"
	opAttachment = "item.readAttachment"
)

// Bounds of the download routes.
const (
	// maxRawMail is the most read of a mail fetched for its attachment:
	// the providers' own cap on what a sync downloads (25 MiB), and room.
	maxRawMail = 26 << 20
	// downloadTimeout bounds one download, from the provider's first
	// byte to the client's last.
	downloadTimeout = 30 * time.Minute
	// writeWindow is how long one piece of a download may take to
	// reach the client: each piece moves the server's write deadline on,
	// so a large file is not cut by it.
	writeWindow = time.Minute
)

// GetAttachment serves GET /v1/items/{id}/attachments/{index}: an
// attachment of the caller's email, as its item lists it. The service
// does not keep mail's raw bytes, so the mail is fetched from the
// provider at that moment (syncer.Fetch) and the attachment cut from it;
// a mail or attachment the provider no longer has is 404 attachment no
// longer available. The headers make the browser save it, never show it
// (see downloadHeaders).
func (h *Handlers) GetAttachment() http.Handler { return endpoint(opAttachment, h.getAttachment) }

func (h *Handlers) getAttachment(w http.ResponseWriter, r *http.Request) error {
	store, it, err := h.ownItem(r)
	if err != nil {
		return err
	}
	m, err := store.OpenMeta(&it)
	if err != nil {
		return httpx.Internal(err)
	}
	index, err := strconv.Atoi(r.PathValue("index"))
	if err != nil || index < 0 || !listed(m.Attachments, index) {
		return httpx.NewError(http.StatusNotFound, "attachment_not_found", "attachment not found")
	}
	ctx, cancel := context.WithTimeout(r.Context(), downloadTimeout)
	defer cancel()
	select {
	case h.mailFetch <- struct{}{}:
		defer func() { <-h.mailFetch }()
	case <-ctx.Done():
		return httpx.Unavailable(ctx.Err())
	}
	raw, err := h.fetchAll(ctx, &it, m.ProviderID)
	if err != nil {
		return fetchFailed(err, "attachment")
	}
	at, content, err := mail.OpenAttachment(raw, index)
	if err != nil {
		return fetchFailed(integrations.ErrGone, "attachment")
	}
	downloadHeaders(w, at.Name, attachmentType(at.Type))
	return stream(w, lenient{content})
}

// lenient ends an attachment's content where it stops decoding (base64
// cut short), as the listing counted its size, rather than failing it.
type lenient struct{ r io.Reader }

func (l lenient) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if err != nil {
		err = io.EOF
	}
	return n, err
}

// listed reports whether the item lists an attachment with index.
func listed(list []integrations.Attachment, index int) bool {
	for _, a := range list {
		if a.Index == index {
			return true
		}
	}
	return false
}

// fetchAll fetches the item's original whole, at most maxRawMail bytes.
func (h *Handlers) fetchAll(ctx context.Context, it *items.ItemRecord, providerID string) ([]byte, error) {
	body, err := h.fetch(ctx, it, providerID)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	raw, err := io.ReadAll(io.LimitReader(body, maxRawMail+1))
	if err == nil && len(raw) > maxRawMail {
		err = errors.New("api: fetched mail over its cap")
	}
	return raw, err
}

// fetch opens the item's original at its record's provider.
func (h *Handlers) fetch(ctx context.Context, it *items.ItemRecord, providerID string) (io.ReadCloser, error) {
	rec, err := h.cfg.Records.Get(it.UserID, it.RecordID)
	if err != nil {
		return nil, items.ErrNotFound // disconnected since ownItem looked
	}
	return h.cfg.Sync.Fetch(ctx, rec, providerID)
}

// GetOriginal serves GET /v1/items/{id}/original: the caller's file item's
// bytes (a folder's file, a WebDAV or Dropbox file) as the source has it
// now, or an email's whole message (.eml), fetched at that moment and
// streamed, with the attachment route's headers. A chat message or feed
// entry has none: 404 no_original.
func (h *Handlers) GetOriginal() http.Handler { return endpoint(opOriginal, h.getOriginal) }

func (h *Handlers) getOriginal(w http.ResponseWriter, r *http.Request) error {
	store, it, err := h.ownItem(r)
	if err != nil {
		return err
	}
	m, err := store.OpenMeta(&it)
	if err != nil {
		return httpx.Internal(err)
	}
	def, _ := h.cfg.Registry.Get(it.Integration)
	name, media := fileName(m.Title, m.Path)
	switch def.Manifest.Kind {
	case integrations.KindFiles:
	case integrations.KindEmail:
		name, media = mailName(m.Title), "message/rfc822"
	default:
		return errNoOriginal()
	}
	ctx, cancel := context.WithTimeout(r.Context(), downloadTimeout)
	defer cancel()
	body, err := h.fetch(ctx, &it, m.ProviderID)
	if err != nil {
		return fetchFailed(err, "file")
	}
	defer body.Close()
	downloadHeaders(w, name, media)
	return stream(w, body)
}

func errNoOriginal() error {
	return httpx.NewError(http.StatusNotFound, "no_original", "this item has no original to download")
}

// fetchFailed answers a failed fetch of what ("attachment", "file").
func fetchFailed(err error, what string) error {
	var fe *syncer.FetchError
	switch {
	case errors.Is(err, integrations.ErrGone):
		return httpx.NewError(http.StatusNotFound, what+"_gone", what+" no longer available")
	case errors.Is(err, syncer.ErrNoOriginal):
		return errNoOriginal()
	case errors.As(err, &fe):
		return &httpx.Error{Status: http.StatusBadGateway, Code: "provider_failed", Message: fe.Message, Cause: err}
	}
	return err // items.ErrNotFound, a *NeedsReauthError: httpError's
}

// downloadHeaders are the headers of a download: the browser saves it
// under name and never renders it, whatever its type (nosniff, and a
// sandbox should it be opened anyway); nothing keeps a copy on the way.
func downloadHeaders(w http.ResponseWriter, name, media string) {
	h := w.Header()
	disposition := mime.FormatMediaType("attachment", map[string]string{"filename": name})
	if disposition == "" {
		disposition = "attachment"
	}
	h.Set("Content-Disposition", disposition)
	h.Set("Content-Type", media)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("Cache-Control", "private, no-store")
}

// attachmentType is the Content-Type of an attachment of the sender's
// stated type: that type when it is a well-formed one, else
// application/octet-stream.
func attachmentType(t string) string {
	if media, _, err := mime.ParseMediaType(t); err == nil && strings.Count(media, "/") == 1 {
		return media
	}
	return "application/octet-stream"
}

// fileName is a file item's download name and type: its title (the file
// name), else its path's last element, and the type its extension says.
func fileName(title, p string) (name, media string) {
	name = downloadName(title)
	if name == "" {
		name = downloadName(path.Base(p))
	}
	if name == "" {
		name = "file"
	}
	media, _, err := mime.ParseMediaType(mime.TypeByExtension(path.Ext(name)))
	if err != nil || media == "" {
		media = "application/octet-stream"
	}
	return name, media
}

// mailName is an email's download name: its subject, made a file name,
// with .eml.
func mailName(subject string) string {
	name := downloadName(subject)
	if name == "" {
		name = "message"
	}
	return name + ".eml"
}

// downloadName makes s a file name a browser saves as it is: no
// directory separators or control characters, at most 120 bytes.
func downloadName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\':
			return '_'
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(textguard.Truncate(s, 120))
	if s == "." || s == ".." {
		return ""
	}
	return s
}

// stream copies content to the client. Each piece moves the write
// deadline on (writeWindow). A content that fails half way (a provider
// cut off, a Dropbox file whose hash does not match) aborts the
// connection, so the client never takes a part for the whole.
func stream(w http.ResponseWriter, content io.Reader) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for sent := false; ; sent = true {
		n, err := content.Read(buf)
		if n > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(writeWindow))
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil // the client went away: nothing more to say to it
			}
		}
		switch {
		case err == io.EOF:
			return nil
		case err != nil && !sent && n == 0:
			return err // nothing sent yet: an answer can still say so
		case err != nil:
			panic(http.ErrAbortHandler)
		}
	}
}
