package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/mail"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
)

const (
	opOriginal   = "item.readOriginal"
	opAttachment = "item.readAttachment"
)

// Bounds of the download routes.
const (
	// maxRawMail is the most read of a mail fetched for a download: the
	// providers' own cap on what a sync downloads (25 MiB), and room.
	maxRawMail = 26 << 20
	// mailDownloads is how many mails the download routes hold at once,
	// fetched whole (an attachment is cut from its mail; an email's
	// original is the mail): two of 25 MiB fit a Pi's memory limit.
	// One person holds one at a time.
	mailDownloads = 2
	// mailWait bounds the wait for a turn to hold a mail: then 503 busy,
	// with Retry-After.
	mailWait = 15 * time.Second
	// mailTimeout bounds a download of a mail held in memory, fetch and
	// answer: a client too slow to take 25 MiB in it gives its turn up.
	mailTimeout = 5 * time.Minute
	// fileTimeout bounds a file's download, which streams and holds
	// nothing.
	fileTimeout = 30 * time.Minute
	// writeWindow is how long one piece of a download may take to
	// reach the client: each piece moves the server's write deadline on,
	// so a large file is not cut by it.
	writeWindow = time.Minute
)

// mailTurns holds the download routes' turns to hold a mail: at most
// mailDownloads at once, one a person.
type mailTurns struct {
	slots chan struct{}
	mu    sync.Mutex
	users map[string]bool
}

func newMailTurns() *mailTurns {
	return &mailTurns{slots: make(chan struct{}, mailDownloads), users: map[string]bool{}}
}

// take waits up to mailWait for a turn for userID; false: none came, or
// the person holds one already. release gives it back.
func (m *mailTurns) take(ctx context.Context, userID string) (release func(), ok bool) {
	m.mu.Lock()
	if m.users[userID] {
		m.mu.Unlock()
		return nil, false
	}
	m.users[userID] = true
	m.mu.Unlock()
	wait := time.NewTimer(mailWait)
	defer wait.Stop()
	select {
	case m.slots <- struct{}{}:
		return func() {
			<-m.slots
			m.mu.Lock()
			delete(m.users, userID)
			m.mu.Unlock()
		}, true
	case <-ctx.Done():
	case <-wait.C:
	}
	m.mu.Lock()
	delete(m.users, userID)
	m.mu.Unlock()
	return nil, false
}

// GetAttachment serves GET /v1/items/{id}/attachments/{index}: an
// attachment of the caller's email, as its item lists it. The service
// does not keep mail's raw bytes, so the mail is fetched from the
// provider at that moment (syncer.Fetch) and the attachment cut from it;
// a mail or attachment the provider no longer has is 404 attachment no
// longer available (docs/sources.md#downloads). The headers make the
// browser save it, never show it (see downloadHeaders).
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
	at, ok := listed(m.Attachments, index)
	if err != nil || !ok {
		return httpx.NewError(http.StatusNotFound, "attachment_not_found", "attachment not found")
	}
	if r.Method == http.MethodHead { // what it is, without fetching it
		downloadHeaders(w, downloadName(at.Name, "attachment"), attachmentType(at.Type))
		return nil
	}
	raw, done, err := h.mail(r, &it, m.ProviderID)
	if err != nil {
		return fetchFailed(err, "attachment")
	}
	defer done()
	found, content, err := mail.OpenAttachment(raw, index)
	if err != nil {
		return fetchFailed(integrations.ErrGone, "attachment")
	}
	return send(w, lenient{content}, downloadName(found.Name, "attachment"), attachmentType(found.Type))
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

// listed returns the attachment the item lists with index.
func listed(list []integrations.Attachment, index int) (integrations.Attachment, bool) {
	for _, a := range list {
		if a.Index == index {
			return a, true
		}
	}
	return integrations.Attachment{}, false
}

// mail fetches the item's mail whole, in one of the caller's turns
// (mailTurns), and returns it with the function that ends the turn, to be
// called once it is answered; the provider's connection is closed
// before it returns. The turn's context bounds the answer too
// (mailTimeout).
func (h *Handlers) mail(r *http.Request, it *items.ItemRecord, providerID string) (raw []byte, done func(), err error) {
	rec, err := h.cfg.Records.Get(it.UserID, it.RecordID)
	if err != nil {
		return nil, nil, items.ErrNotFound // disconnected since ownItem looked
	}
	ctx, cancel := h.downloadContext(r, mailTimeout)
	release, ok := h.mailTurns.take(ctx, it.UserID)
	if !ok {
		cancel()
		return nil, nil, &httpx.Error{Status: http.StatusServiceUnavailable, Code: "busy",
			Message: "other downloads of mail are under way: try again in a moment", RetryAfter: httpx.BusyRetryAfter}
	}
	done = func() { release(); cancel() }
	raw, err = fetchWhole(ctx, h.cfg.Sync, rec, providerID)
	if err != nil {
		done()
		return nil, nil, err
	}
	return raw, done, nil
}

// fetchWhole fetches an original whole, at most maxRawMail bytes, and
// closes it (an IMAP session logs out).
func fetchWhole(ctx context.Context, s Sync, rec records.Record, providerID string) ([]byte, error) {
	body, err := s.Fetch(ctx, rec, providerID)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	if whole, ok := body.(interface{ Bytes() []byte }); ok && whole.Bytes() != nil {
		return whole.Bytes(), nil // held already: no copy
	}
	raw, err := io.ReadAll(io.LimitReader(body, maxRawMail+1))
	switch {
	case err != nil:
		return nil, &syncer.FetchError{Message: "the mail could not be read whole from its provider", Err: err}
	case len(raw) > maxRawMail:
		return nil, &syncer.FetchError{Message: "the mail is larger than 25 MiB, which this server does not download", Err: errTooLarge}
	}
	return raw, nil
}

var errTooLarge = errors.New("api: fetched mail over its cap")

// downloadContext is a download's context: the request's, ended after
// limit and when the service stops (StopDownloads).
func (h *Handlers) downloadContext(r *http.Request, limit time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	stop := context.AfterFunc(h.stopping, cancel)
	return ctx, func() { stop(); cancel() }
}

// StopDownloads ends the downloads under way, for a shutdown: a download
// may take far longer than the grace the service gives requests.
func (h *Handlers) StopDownloads() { h.stopDownloads() }

// GetOriginal serves GET /v1/items/{id}/original: the caller's file item's
// bytes (a folder's file, a WebDAV or Dropbox file) as the source has it
// now, streamed and never held, or an email's whole message (.eml),
// fetched whole in one of the caller's turns; both fetched at that moment
// (docs/sources.md#downloads), with the attachment route's headers. A
// chat message or feed entry has none: 404 no_original.
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
	var name, media string
	switch def.Manifest.Kind {
	case integrations.KindFiles:
		name, media = fileName(m.Title, m.Path)
	case integrations.KindEmail:
		name, media = downloadName(m.Title, "message")+".eml", "message/rfc822"
	default:
		return errNoOriginal()
	}
	switch {
	case r.Method == http.MethodHead:
		downloadHeaders(w, name, media)
		return nil
	case def.Manifest.Kind == integrations.KindEmail:
		raw, done, err := h.mail(r, &it, m.ProviderID)
		if err != nil {
			return fetchFailed(err, "message")
		}
		defer done()
		return send(w, bytes.NewReader(raw), name, media)
	}
	rec, err := h.cfg.Records.Get(it.UserID, it.RecordID)
	if err != nil {
		return items.ErrNotFound
	}
	ctx, cancel := h.downloadContext(r, fileTimeout)
	defer cancel()
	body, err := h.cfg.Sync.Fetch(ctx, rec, m.ProviderID)
	if err != nil {
		return fetchFailed(err, "file")
	}
	defer body.Close()
	return send(w, body, name, media)
}

func errNoOriginal() error {
	return httpx.NewError(http.StatusNotFound, "no_original", "this item has no original to download")
}

// fetchFailed answers a failed fetch of what ("attachment", "file",
// "message"). Its cause, which httpx logs for a 5xx, names the kind of
// failure only: a provider's error may hold a file's path or address.
func fetchFailed(err error, what string) error {
	var (
		fe *syncer.FetchError
		he *httpx.Error
	)
	cause := fmt.Errorf("download of %s failed: %T", what, errors.Unwrap(err))
	switch {
	case errors.As(err, &he):
		return he // busy
	case errors.Is(err, integrations.ErrGone):
		return httpx.NewError(http.StatusNotFound, what+"_gone", what+" no longer available")
	case errors.Is(err, syncer.ErrNoOriginal):
		return errNoOriginal()
	case errors.Is(err, syncer.ErrNeedsReauth):
		return httpx.NewError(http.StatusConflict, "needs_reauth",
			"the connection must be made again before anything can be downloaded from it")
	case errors.As(err, &fe):
		return &httpx.Error{Status: http.StatusBadGateway, Code: "provider_failed", Message: fe.Message, Cause: cause}
	case errors.Is(err, items.ErrNotFound):
		return err
	}
	return httpx.Internal(cause)
}

// send answers content as a download. The headers go with its first
// piece, so that a content that fails at once is still answered in
// words (502); one that fails later aborts the answer (see stream).
func send(w http.ResponseWriter, content io.Reader, name, media string) error {
	buf := make([]byte, 32<<10)
	n, err := io.ReadFull(content, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		err = io.EOF
	case err != nil:
		return &syncer.FetchError{Message: "the provider stopped sending it", Err: err}
	}
	downloadHeaders(w, name, media)
	if err == io.EOF {
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(buf[:n])
		return nil
	}
	return stream(w, buf[:n], content, buf)
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
	if title == "" {
		title = path.Base(p)
	}
	name = downloadName(title, "file")
	media, _, err := mime.ParseMediaType(mime.TypeByExtension(path.Ext(name)))
	if err != nil || media == "" {
		media = "application/octet-stream"
	}
	return name, media
}

// maxDownloadName is the longest download name, in bytes.
const maxDownloadName = 120

// downloadName makes s a file name a browser saves as it reads: no
// directory separators, no control or format characters (a right-to-left
// override would show "invoice\u202Efdp.exe" as "invoiceexe.pdf"), at
// most maxDownloadName bytes, cut before its extension rather than
// through it; fallback when nothing is left.
func downloadName(s, fallback string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '/' || r == '\\':
			return '_'
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > maxDownloadName {
		ext := path.Ext(s)
		if len(ext) > 16 {
			ext = ""
		}
		stem := s[:maxDownloadName-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		s = strings.TrimSpace(stem) + ext
	}
	if s == "" || s == "." || s == ".." {
		return fallback
	}
	return s
}

// stream sends first, then the rest of content, to the client. Each
// piece moves the write deadline on (writeWindow). A content that fails
// half way (a provider cut off, a Dropbox file whose hash does not match)
// aborts the connection, so the client never takes a part for the whole.
func stream(w http.ResponseWriter, first []byte, content io.Reader, buf []byte) error {
	rc := http.NewResponseController(w)
	for piece := first; ; {
		if len(piece) > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(writeWindow))
			if _, err := w.Write(piece); err != nil {
				return nil // the client went away: nothing more to say to it
			}
		}
		n, err := content.Read(buf)
		piece = buf[:n]
		switch {
		case err == io.EOF:
			if n > 0 {
				_ = rc.SetWriteDeadline(time.Now().Add(writeWindow))
				w.Write(piece)
			}
			return nil
		case err != nil:
			panic(http.ErrAbortHandler)
		}
	}
}
