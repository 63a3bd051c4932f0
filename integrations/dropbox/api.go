package dropbox

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"searchsvc/integrations"
	"searchsvc/integrations/textguard"
)

// ContentBaseURL is Dropbox's content API, where files/download lives.
const ContentBaseURL = "https://content.dropboxapi.com"

// Errors of the API client, besides *integrations.APIError for an answer
// other than 2xx, and integrations.ErrReauthRequired for a refused token.
var (
	// ErrBadResponse wraps the errors of an answer that is not what
	// Dropbox sends: malformed JSON, a missing cursor, a content hash
	// that does not match the content.
	ErrBadResponse = errors.New("dropbox: malformed API response")
	// ErrCursorReset: Dropbox no longer accepts the stored cursor (409
	// reset); the folder must be listed again from the start, without
	// downloading what is unchanged (Entry.ContentHash says so).
	ErrCursorReset = errors.New("dropbox: listing cursor reset; list again")
	// ErrFileTooLarge: the file is larger than the download's cap; it was
	// not downloaded (or not past the cap). It wraps integrations.ErrSkip.
	ErrFileTooLarge = fmt.Errorf("dropbox: file over the download cap: %w", integrations.ErrSkip)
	// ErrNotFound: the path or id names no file (409 path/not_found); it
	// went away since it was listed. It wraps integrations.ErrSkip.
	ErrNotFound = fmt.Errorf("dropbox: file not found: %w", integrations.ErrSkip)
)

// Bounds on answers and what they hold.
const (
	maxListBody  = 16 << 20 // a page of up to 2,000 entries
	maxErrorBody = 64 << 10
	maxCursor    = 4096
	maxResult    = 64 << 10 // the Dropbox-API-Result header
	// PageLimit is the entries asked per list page (Dropbox's limit:
	// 1 to 2,000; a hint it may answer with fewer).
	PageLimit = 2000
)

// Entry tags.
const (
	TagFile    = "file"
	TagFolder  = "folder"
	TagDeleted = "deleted"
)

// Entry is one entry of a listing: a file, a folder, or (in a listing
// continued from a cursor) a deleted path.
type Entry struct {
	Tag         string `json:".tag"`
	ID          string `json:"id"` // "id:…"; empty for a deleted entry
	Name        string `json:"name"`
	PathLower   string `json:"path_lower"`
	PathDisplay string `json:"path_display"`
	Rev         string `json:"rev"`
	Size        int64  `json:"size"`
	// ContentHash is Dropbox's hash of a file's content (see
	// NewContentHash): equal hashes mean the same content, so a file seen
	// again after a cursor reset need not be downloaded.
	ContentHash    string    `json:"content_hash"`
	ServerModified time.Time `json:"server_modified"`
	ClientModified time.Time `json:"client_modified"`
}

// Page is one page of a listing: Cursor continues it, or, once HasMore is
// false, gives the changes after it on a later sync.
type Page struct {
	Entries []Entry `json:"entries"`
	Cursor  string  `json:"cursor"`
	HasMore bool    `json:"has_more"`
}

// Client calls the Dropbox API for one account. Its errors never carry
// the token or a body.
type Client struct {
	http    *http.Client
	api     string
	content string
	token   func(context.Context) (string, error)
	now     func() time.Time
}

// NewClient returns a client for the RPC API at apiBase (APIBaseURL in
// production); files/download goes to ContentBaseURL, or to apiBase too
// when apiBase is not Dropbox's own (a test server). token gives the
// current access token (an oauthclient.Refresher's, refreshed before it
// expires); now is the clock for Retry-After dates, nil for time.Now.
func NewClient(hc *http.Client, apiBase string, token func(context.Context) (string, error), now func() time.Time) *Client {
	if now == nil {
		now = time.Now
	}
	content := ContentBaseURL
	if apiBase != APIBaseURL {
		content = apiBase
	}
	return &Client{http: hc, api: apiBase, content: content, token: token, now: now}
}

// ListFolder lists path ("" for the whole Dropbox) recursively, first
// page; deleted entries are not listed.
func (c *Client) ListFolder(ctx context.Context, path string) (Page, error) {
	if path != "" && !strings.HasPrefix(path, "/") {
		return Page{}, fmt.Errorf("dropbox list_folder: path %q does not start with /", textguard.Name(path))
	}
	arg := map[string]any{"path": path, "recursive": true, "include_deleted": false, "limit": PageLimit}
	return c.list(ctx, "/2/files/list_folder", arg)
}

// ListFolderContinue gives the page after cursor: the rest of a listing,
// or the changes since it ended, deleted entries included. A cursor
// Dropbox reset gives ErrCursorReset.
func (c *Client) ListFolderContinue(ctx context.Context, cursor string) (Page, error) {
	if !validCursor(cursor) {
		return Page{}, fmt.Errorf("dropbox list_folder/continue: %w: cursor", integrations.ErrSkip)
	}
	return c.list(ctx, "/2/files/list_folder/continue", map[string]any{"cursor": cursor})
}

func (c *Client) list(ctx context.Context, endpoint string, arg any) (Page, error) {
	name := "dropbox " + strings.TrimPrefix(endpoint, "/2/files/")
	body, err := json.Marshal(arg)
	if err != nil {
		return Page{}, err
	}
	resp, err := c.do(ctx, c.api+endpoint, "application/json", bytes.NewReader(body), "")
	if err != nil {
		return Page{}, fmt.Errorf("%s: %w", name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxListBody+1))
	if err != nil {
		return Page{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(raw) > maxListBody {
		return Page{}, fmt.Errorf("%s: %w: answer over %d bytes", name, ErrBadResponse, maxListBody)
	}
	var page Page
	if err := json.Unmarshal(raw, &page); err != nil {
		return Page{}, fmt.Errorf("%s: %w: %w", name, ErrBadResponse, err)
	}
	if !validCursor(page.Cursor) || page.Cursor == "" {
		return Page{}, fmt.Errorf("%s: %w: cursor", name, ErrBadResponse)
	}
	// Entries that cannot be Dropbox's are dropped, not the page: the
	// rest of the account stays reachable.
	kept := page.Entries[:0]
	for _, e := range page.Entries {
		if validEntry(e) {
			kept = append(kept, e)
		}
	}
	page.Entries = kept
	return page, nil
}

// Download fetches the file id ("id:…") if it is at most limit bytes: a
// larger one gives ErrFileTooLarge, without reading past the cap. The
// content is checked against the content hash Dropbox gives with it.
func (c *Client) Download(ctx context.Context, id string, limit int64) (Entry, []byte, error) {
	meta, body, err := c.Open(ctx, id)
	if err != nil {
		return Entry{}, nil, err
	}
	defer body.Close()
	if meta.Size > limit || body.size > limit {
		return meta, nil, ErrFileTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	switch {
	case errors.Is(err, errHashMismatch):
		return Entry{}, nil, fmt.Errorf("dropbox download: %w: content hash does not match", ErrBadResponse)
	case err != nil:
		return Entry{}, nil, fmt.Errorf("dropbox download: %w", err)
	case int64(len(data)) > limit:
		return meta, nil, ErrFileTooLarge
	}
	return meta, data, nil
}

// Open starts the download of the file id ("id:…") and returns its
// metadata and its content as it streams. The content is checked against
// the content hash Dropbox gives with it as it is read: a mismatch fails
// the last Read with errHashMismatch, so a reader that stops at an error
// never takes damaged content for whole.
func (c *Client) Open(ctx context.Context, id string) (Entry, *Download, error) {
	if !validID(id) {
		return Entry{}, nil, fmt.Errorf("dropbox download: %w: id", integrations.ErrSkip)
	}
	arg, err := headerJSON(map[string]string{"path": id})
	if err != nil {
		return Entry{}, nil, err
	}
	resp, err := c.do(ctx, c.content+"/2/files/download", "", nil, arg)
	if err != nil {
		return Entry{}, nil, fmt.Errorf("dropbox download: %w", err)
	}
	var meta Entry
	result := resp.Header.Get("Dropbox-API-Result")
	if len(result) > maxResult || json.Unmarshal([]byte(result), &meta) != nil || meta.ID != id {
		resp.Body.Close()
		return Entry{}, nil, fmt.Errorf("dropbox download: %w: Dropbox-API-Result", ErrBadResponse)
	}
	meta.Tag = TagFile
	d := &Download{body: resp.Body, size: resp.ContentLength, want: meta.ContentHash}
	if d.want != "" {
		d.hash = NewContentHash()
	}
	return meta, d, nil
}

// errHashMismatch ends a Download whose content is not what its content
// hash says.
var errHashMismatch = errors.New("dropbox: content hash does not match")

// Download is a file's content as it streams from Dropbox (see Open).
type Download struct {
	body io.ReadCloser
	size int64 // Content-Length; -1 if not said
	want string
	hash hash.Hash
}

// Read reads the content, hashing it; at its end it returns
// errHashMismatch instead of io.EOF when the content does not match.
func (d *Download) Read(p []byte) (int, error) {
	n, err := d.body.Read(p)
	if d.hash == nil {
		return n, err
	}
	d.hash.Write(p[:n])
	if err == io.EOF && hex.EncodeToString(d.hash.Sum(nil)) != d.want {
		return n, errHashMismatch
	}
	return n, err
}

// Close closes the answer's body.
func (d *Download) Close() error { return d.body.Close() }

// do POSTs to url with the access token and returns a 2xx response; any
// other answer is turned into an error (see apiError) and its body closed.
func (c *Client) do(ctx context.Context, url, contentType string, body io.Reader, apiArg string) (*http.Response, error) {
	token, err := c.token(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if apiArg != "" {
		req.Header.Set("Dropbox-API-Arg", apiArg)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, c.apiError(resp)
}

// apiError reads a failed answer. Dropbox's JSON errors, on 401, 409 and
// 429, are {"error_summary": "…", "error": {".tag": "…"}}; 400 and 5xx
// answer plain text, which is not kept. A 401 wraps
// integrations.ErrReauthRequired (the refresher renews tokens before
// they expire: one refused is dead); 409 reset gives ErrCursorReset and
// path/not_found ErrNotFound.
func (c *Client) apiError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var e struct {
		Error struct {
			Tag  string `json:".tag"`
			Path struct {
				Tag string `json:".tag"`
			} `json:"path"`
			Reason struct {
				Tag string `json:".tag"`
			} `json:"reason"`
			RetryAfter int64 `json:"retry_after"`
		} `json:"error"`
	}
	json.Unmarshal(raw, &e)
	code := e.Error.Tag
	if code == "" {
		code = e.Error.Reason.Tag
	}
	if !textguard.Word(code) {
		code = ""
	}
	ae := integrations.NewAPIError(resp, code, c.now())
	if ae.RetryAfter == 0 && e.Error.RetryAfter > 0 && e.Error.RetryAfter < 86400 {
		ae.RetryAfter = time.Duration(e.Error.RetryAfter) * time.Second
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w: %w", integrations.ErrReauthRequired, ae)
	case resp.StatusCode == http.StatusConflict && code == "reset":
		return fmt.Errorf("%w: %w", ErrCursorReset, ae)
	case resp.StatusCode == http.StatusConflict && code == "path" && e.Error.Path.Tag == "not_found":
		return fmt.Errorf("%w: %w", ErrNotFound, ae)
	}
	return ae
}

// headerJSON encodes v as JSON safe in an HTTP header, as Dropbox wants
// Dropbox-API-Arg: every character past ASCII escaped as \uXXXX.
func headerJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, r := range string(b) {
		switch {
		case r < 0x7f:
			sb.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := surrogates(r)
			fmt.Fprintf(&sb, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&sb, `\u%04x`, r)
		}
	}
	return sb.String(), nil
}

func surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// validCursor reports whether s can be a Dropbox cursor: up to maxCursor
// printable ASCII characters.
func validCursor(s string) bool { return textguard.Token(s, maxCursor) }

// validID reports whether s can be a Dropbox file id: "id:" and 1 to 64
// letters, digits, '-' or '_'.
func validID(s string) bool {
	rest, ok := strings.CutPrefix(s, "id:")
	return ok && textguard.Word(rest) && !strings.Contains(rest, ".")
}

// maxPath bounds a path Dropbox gives; its own limit is lower.
const maxPath = 4096

// validEntry reports whether e is an entry Dropbox could have sent: a
// known tag, a path, an id for what is not deleted, a size not negative.
func validEntry(e Entry) bool {
	if e.PathLower == "" || len(e.PathLower) > maxPath || len(e.PathDisplay) > maxPath ||
		!utf8.ValidString(e.PathDisplay) || !strings.HasPrefix(e.PathLower, "/") {
		return false
	}
	switch e.Tag {
	case TagDeleted:
		return true
	case TagFolder:
		return validID(e.ID)
	case TagFile:
		return validID(e.ID) && e.Size >= 0 && len(e.ContentHash) <= 64
	}
	return false
}
