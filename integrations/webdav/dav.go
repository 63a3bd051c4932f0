package webdav

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"searchsvc/integrations"
)

// ListLimits bound one listing of a WebDAV folder, so that a hostile or
// broken server (a huge answer, an XML bomb, an endless tree, a redirect
// loop) costs bounded time and memory.
type ListLimits struct {
	// MaxAnswerBytes is the largest PROPFIND answer read (8 MiB, some
	// 20,000 entries of a Nextcloud answer); a larger one fails the sync.
	MaxAnswerBytes int64
	// MaxEntries is how many files and folders one listing keeps
	// (100,000); what lies past it is left out and the record says so.
	MaxEntries int
	// MaxDepth is how many levels of sub-folders are listed (32).
	MaxDepth int
	// MaxRedirects is how many redirects one request follows (5), each
	// to the same server.
	MaxRedirects int
}

// DefaultListLimits returns the limits a zero ListLimits field takes.
func DefaultListLimits() ListLimits {
	return ListLimits{MaxAnswerBytes: 8 << 20, MaxEntries: 100_000, MaxDepth: 32, MaxRedirects: 5}
}

func (l ListLimits) withDefaults() ListLimits {
	d := DefaultListLimits()
	if l.MaxAnswerBytes <= 0 {
		l.MaxAnswerBytes = d.MaxAnswerBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxRedirects <= 0 {
		l.MaxRedirects = d.MaxRedirects
	}
	return l
}

// Bounds of the XML of one answer, below MaxAnswerBytes: how deep its
// elements nest and how long one value (an href, an ETag) may be.
const (
	maxXMLDepth = 24
	maxValueLen = 8 << 10
)

// hostileError is an answer the sync refuses to read further: too
// large, not XML, an XML bomb, a redirect loop. what completes "the
// server …"; the record's error says it.
type hostileError struct{ what string }

func (e *hostileError) Error() string { return "webdav: the server " + e.what }

// errNotCollection: the form's address is a file.
var errNotCollection = errors.New("webdav: the address is a file, not a collection")

// dav makes the requests of one connected folder: basic authentication,
// the form's certificate, redirects followed by hand (the client's own
// would turn a PROPFIND into a GET) and only to the same server, so the
// password never goes elsewhere.
type dav struct {
	// typed is the form's address, base the same with a final '/': the
	// collection whose members the listing names.
	typed  *url.URL
	base   *url.URL
	user   string
	pass   string
	client *http.Client
	lim    ListLimits
	now    func() time.Time
	// observe is Config.Observe, never nil.
	observe func(method string, status int)
}

// newDAV builds the requests' client from client (the service's client
// for user-chosen targets, which keeps them off private networks) with
// the TLS configuration the certificate field asks for.
func newDAV(a Account, client *http.Client, cfg Config, now func() time.Time) (*dav, error) {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	if now == nil {
		now = time.Now
	}
	tc, err := tlsConfig(a.Certificate)
	if err != nil {
		return nil, err
	}
	var tr *http.Transport
	switch t := client.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = t.Clone()
	default:
		return nil, fmt.Errorf("webdav: the client's transport is a %T, not an *http.Transport", t)
	}
	tr.TLSClientConfig = tc
	tr.ForceAttemptHTTP2 = true
	c := *client
	c.Transport = tr
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	base := *a.URL
	if !strings.HasSuffix(base.Path, "/") {
		base.Path, base.RawPath = base.Path+"/", ""
	}
	observe := cfg.Observe
	if observe == nil {
		observe = func(string, int) {}
	}
	return &dav{typed: a.URL, base: &base, user: a.Username, pass: a.Password, client: &c, lim: cfg.List.withDefaults(), now: now,
		observe: observe}, nil
}

// close lets the idle connections go.
func (d *dav) close() { d.client.CloseIdleConnections() }

// urlOf returns the address of rel, a path inside the folder.
func (d *dav) urlOf(rel string) *url.URL {
	u := *d.base
	u.Path, u.RawPath = d.base.Path+rel, ""
	return &u
}

// do sends method to u, following up to MaxRedirects redirects to the
// same scheme and host. An answer of 400 or more is an
// *integrations.APIError (its Retry-After read), its body closed.
func (d *dav) do(ctx context.Context, method string, u *url.URL, depth string, body []byte) (*http.Response, error) {
	for range d.lim.MaxRedirects + 1 {
		req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.SetBasicAuth(d.user, d.pass)
		if depth != "" {
			req.Header.Set("Depth", depth)
			req.Header.Set("Content-Type", `application/xml; charset="utf-8"`)
		}
		resp, err := d.client.Do(req)
		if err != nil {
			return nil, err
		}
		d.observe(method, resp.StatusCode)
		switch resp.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			loc, err := resp.Location()
			drain(resp)
			if err != nil {
				return nil, &hostileError{"answered a redirect without an address to go to"}
			}
			if loc.Scheme != u.Scheme || loc.Host != u.Host {
				return nil, &hostileError{"redirected the sync to another server or to http; connect the address it redirects to instead"}
			}
			u = loc
			continue
		}
		if resp.StatusCode >= 400 {
			drain(resp)
			return nil, integrations.NewAPIError(resp, "", d.now())
		}
		return resp, nil
	}
	return nil, &hostileError{"redirected the sync more than " + strconv.Itoa(d.lim.MaxRedirects) + " times in a row (a redirect loop)"}
}

// drain reads a little of a body that is not used and closes it, so the
// connection may be kept.
func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
}

// propfindBody asks for the properties a listing uses.
var propfindBody = []byte(`<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getetag/><d:getlastmodified/><d:getcontentlength/></d:prop></d:propfind>`)

// entry is one resource of a PROPFIND answer.
type entry struct {
	rel   string // the path inside the connected folder, decoded; a collection's ends in '/'
	dir   bool
	etag  string
	mtime time.Time
	size  int64
}

// propfind lists the collection rel (Depth: 1, or 0 for the form's
// check): its own entry and its members, at most limit of them.
func (d *dav) propfind(ctx context.Context, rel, depth string, limit int) ([]entry, error) {
	return d.propfindAt(ctx, d.urlOf(rel), depth, limit)
}

// propfindAt is propfind of the address u.
func (d *dav) propfindAt(ctx context.Context, u *url.URL, depth string, limit int) ([]entry, error) {
	resp, err := d.do(ctx, "PROPFIND", u, depth, propfindBody)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusMultiStatus {
		return nil, &hostileError{"did not answer a folder listing as a WebDAV server does (it answered " + strconv.Itoa(resp.StatusCode) + " instead of 207)"}
	}
	return d.parse(resp.Request.URL, resp.Body, limit)
}

// check is the form's test: the address is a collection this user may
// list.
func (d *dav) check(ctx context.Context) error {
	es, err := d.propfindAt(ctx, d.typed, "0", 1)
	if err != nil {
		return err
	}
	if len(es) == 0 || !es[0].dir || es[0].rel != "" {
		return errNotCollection
	}
	return nil
}

// errTooLarge is what limited fails with past its bound.
var errTooLarge = errors.New("webdav: answer too large")

// limited reads at most n bytes of r, then fails with errTooLarge; err
// keeps a failure of r itself (a timeout, a connection cut), which is
// not the answer's fault.
type limited struct {
	r   io.Reader
	n   int64
	err error
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if err != nil && err != io.EOF {
		l.err = err
	}
	return n, err
}

// mib words a byte count in MiB.
func mib(n int64) string { return strconv.FormatInt(n>>20, 10) + " MiB" }

// parse reads a multistatus answer under the limits with encoding/xml:
// no document type (an XML bomb's entities are refused, never
// expanded), elements nested at most maxXMLDepth deep, values at most
// maxValueLen long, at most limit entries. Entries outside the connected
// folder are left out.
func (d *dav) parse(at *url.URL, body io.Reader, limit int) ([]entry, error) {
	lr := &limited{r: body, n: d.lim.MaxAnswerBytes}
	dec := xml.NewDecoder(lr)
	dec.Strict = true
	var (
		out   []entry
		cur   *entry
		stack []string
		text  strings.Builder
		href  string
	)
	tooLarge := &hostileError{"answered a folder listing larger than " + mib(d.lim.MaxAnswerBytes) + "; the sync stops there"}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errTooLarge) {
			return nil, tooLarge
		}
		if err != nil && lr.err != nil {
			return nil, fmt.Errorf("webdav: read a folder listing: %w", lr.err) // slow, or cut off
		}
		if err != nil {
			return nil, &hostileError{"answered a folder listing that is not valid XML"}
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, &hostileError{"answered a folder listing that declares a document type, as an XML bomb does; it is not read"}
		case xml.StartElement:
			if len(stack) == maxXMLDepth {
				return nil, &hostileError{"answered a folder listing nested deeper than " + strconv.Itoa(maxXMLDepth) + " levels"}
			}
			stack = append(stack, t.Name.Local)
			text.Reset()
			if t.Name.Space != "DAV:" {
				continue
			}
			switch t.Name.Local {
			case "response":
				if len(out) == limit {
					return out, nil
				}
				cur, href = &entry{}, ""
			case "collection":
				if cur != nil {
					cur.dir = true
				}
			}
		case xml.CharData:
			if text.Len()+len(t) > maxValueLen {
				return nil, &hostileError{"answered a folder listing with a value longer than " + strconv.Itoa(maxValueLen) + " bytes"}
			}
			text.Write(t)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if t.Name.Space != "DAV:" || cur == nil {
				continue
			}
			if t.Name.Local == "response" {
				if rel, ok := d.relOf(at, href, cur.dir); ok {
					cur.rel = rel
					out = append(out, *cur)
				}
				cur = nil
			} else {
				cur.set(t.Name.Local, strings.TrimSpace(text.String()), &href)
			}
			text.Reset()
		}
	}
	return out, nil
}

// set reads the value v of the element local (DAV:) of a response.
func (e *entry) set(local, v string, href *string) {
	switch local {
	case "href":
		*href = v
	case "getetag":
		if v != "" {
			e.etag = v
		}
	case "getlastmodified":
		if tm, err := http.ParseTime(v); err == nil {
			e.mtime = tm.UTC()
		}
	case "getcontentlength":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			e.size = n
		}
	}
}

// relOf returns the path inside the connected folder of href (a path or
// an address, resolved against the answer's own address); ok is false
// for one on another server or outside the folder.
func (d *dav) relOf(at *url.URL, href string, dir bool) (string, bool) {
	if href == "" {
		return "", false
	}
	ref, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	u := at.ResolveReference(ref)
	if u.Host != d.base.Host {
		return "", false
	}
	p := u.Path
	if dir && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	rel, ok := strings.CutPrefix(p, d.base.Path)
	if !ok && p+"/" == d.base.Path {
		return "", true // the folder itself, named without its slash
	}
	if !ok || strings.Contains("/"+rel, "/../") || strings.Contains("/"+rel, "/./") || strings.Contains(rel, "//") {
		return "", false
	}
	return rel, true
}
