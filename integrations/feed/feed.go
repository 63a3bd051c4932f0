// Package feed follows RSS and Atom feeds given by their addresses in a
// manual form: one record per user holds every feed the user follows
// (the form's url field, one address per line), and each sync turns the
// entries it does not hold into items.
package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/netguard"
)

// Domain is the integration domain.
const Domain = "feed"

// FieldURL is the form's only field, and the key of Credentials.Fields:
// the feeds' addresses, one per line.
const FieldURL = "url"

// MaxFeeds is how many feeds one record follows at most.
const MaxFeeds = 50

// Limits of one fetch.
const (
	MaxSize      = 5 << 20 // bytes of feed read at most
	FetchTimeout = 30 * time.Second
)

// ErrTooLarge is returned by Fetch for a feed larger than MaxSize.
var ErrTooLarge = errors.New("feed: larger than 5 MiB")

// StatusError is an HTTP answer other than 200 to a feed request.
type StatusError struct {
	Code int

	retryAfter string // the Retry-After header
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("feed: server answered %d %s", e.Code, http.StatusText(e.Code))
}

// Definition returns the feed definition.
func Definition() integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{
			Domain:      Domain,
			DisplayName: "RSS or Atom feed",
			Kind:        integrations.KindFeed,
			AuthType:    integrations.AuthManual,
			Fields: []integrations.Field{
				{Name: FieldURL, Label: "Feed addresses, one per line (sending the form again replaces the list)",
					Type: integrations.FieldMultiline, Required: true},
			},
		},
		ValidateManual: validate,
		New: func(env integrations.Env) (integrations.Integration, error) {
			urls, err := ParseURLs(env.Credentials.Fields[FieldURL])
			if err != nil {
				return nil, fmt.Errorf("feed: stored credentials: %w", err)
			}
			now := env.Now
			if now == nil {
				now = time.Now
			}
			return &follower{client: env.Client, urls: urls, now: now, known: env.Known, state: env.State}, nil
		},
		Sources: func(c integrations.Credentials) []string {
			urls, _ := ParseURLs(c.Fields[FieldURL])
			return urls
		},
		Details: Details,
	}
}

// ParseURLs reads the form's list of feed addresses: separated by line
// breaks or spaces, each checked by ParseURL, duplicates dropped, at most
// MaxFeeds. Errors are *integrations.ValidationError.
func ParseURLs(raw string) ([]string, error) {
	var urls []string
	seen := make(map[string]bool)
	for _, f := range strings.Fields(raw) {
		u, err := ParseURL(f)
		if err != nil {
			return nil, err
		}
		if seen[u] {
			continue
		}
		seen[u] = true
		urls = append(urls, u)
	}
	switch {
	case len(urls) == 0:
		return nil, &integrations.ValidationError{Field: FieldURL, Message: "must be an http or https address"}
	case len(urls) > MaxFeeds:
		return nil, &integrations.ValidationError{Field: FieldURL, Message: fmt.Sprintf("at most %d feeds", MaxFeeds)}
	}
	return urls, nil
}

// ParseURL checks a feed address: an absolute http or https URL. Errors
// are *integrations.ValidationError.
func ParseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	// A zoned IPv6 host ([::1%25lo]) names an interface, never a feed.
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Contains(u.Host, "%") {
		return "", &integrations.ValidationError{Field: FieldURL, Message: "must be an http or https address"}
	}
	return u.String(), nil
}

// validateWorkers is how many feeds the form's check fetches at once.
const validateWorkers = 4

// validate checks the form: every address must serve a feed. The
// addresses are stored one per line, in the form's order.
func validate(ctx context.Context, fields map[string]string, client *http.Client) (integrations.Credentials, error) {
	urls, err := ParseURLs(fields[FieldURL])
	if err != nil {
		return integrations.Credentials{}, err
	}
	errs := make([]error, len(urls))
	sem := make(chan struct{}, validateWorkers)
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := Fetch(ctx, client, u); err != nil {
				errs[i] = explain(ctx, err)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		var ve *integrations.ValidationError
		if len(urls) > 1 && errors.As(err, &ve) {
			ve.Message = urls[i] + ": " + ve.Message // the user's own input, named back to them
		}
		if err != nil {
			return integrations.Credentials{}, err
		}
	}
	return integrations.Credentials{Fields: map[string]string{FieldURL: strings.Join(urls, "\n")}}, nil
}

// explain turns a fetch failure into a message for the user. Only a
// cancellation by the caller stays a plain error.
func explain(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return err
	}
	v := &integrations.ValidationError{Field: FieldURL, Err: err}
	var se *StatusError
	var ae *integrations.APIError
	switch {
	case errors.As(err, &se):
		v.Message = fmt.Sprintf("the server answered %d %s", se.Code, http.StatusText(se.Code))
	case errors.As(err, &ae):
		v.Message = fmt.Sprintf("the server answered %d %s", ae.Status, http.StatusText(ae.Status))
	case errors.Is(err, netguard.ErrPrivateAddress):
		v.Message = "this address is not on the public internet; " + netguard.Advice
	case errors.Is(err, ErrTooLarge):
		v.Message = "the feed is larger than 5 MiB"
	case errors.Is(err, ErrNotFeed):
		v.Message = "this address does not serve an RSS or Atom feed"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		v.Message = "the server did not answer in time"
	default:
		v.Message = "could not fetch the feed"
	}
	return v
}

// Fetch downloads and parses the feed at feedURL, reading at most MaxSize
// bytes within FetchTimeout. A nil client means one with FetchTimeout.
func Fetch(ctx context.Context, client *http.Client, feedURL string) ([]Entry, error) {
	return fetch(ctx, client, feedURL, MaxSize)
}

// fetch is Fetch with a size limit in bytes.
func fetch(ctx context.Context, client *http.Client, feedURL string, limit int64) ([]Entry, error) {
	f, err := fetchFeed(ctx, client, feedURL, limit, validators{})
	return f.Entries, err
}

// validators are what a server said identifies the version of a feed it
// sent (its ETag and Last-Modified headers), sent back in the next
// request (If-None-Match, If-Modified-Since) so that an unchanged feed is
// answered 304 with no body.
type validators struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
}

// fetched is one answer to a feed request: the feed and its validators,
// or NotModified when the server answered 304 to the validators sent.
type fetched struct {
	Feed
	validators
	NotModified bool
}

// maxValidator bounds an ETag or Last-Modified kept between polls.
const maxValidator = 256

// fetchFeed requests the feed at feedURL with the validators of the
// version held (none: an unconditional request) and reads at most limit
// bytes of it.
func fetchFeed(ctx context.Context, client *http.Client, feedURL string, limit int64, held validators) (fetched, error) {
	if client == nil {
		client = &http.Client{Timeout: FetchTimeout}
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, feedURL, nil)
	if err != nil {
		return fetched{}, withoutURL(err)
	}
	req.Header.Set("Accept", "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1")
	req.Header.Set("User-Agent", "searchsvc feed reader")
	if held.ETag != "" {
		req.Header.Set("If-None-Match", held.ETag)
	}
	if held.LastModified != "" {
		req.Header.Set("If-Modified-Since", held.LastModified)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fetched{}, withoutURL(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && held != (validators{}) {
		return fetched{NotModified: true, validators: held}, nil
	}
	if resp.StatusCode != http.StatusOK {
		return fetched{}, &StatusError{Code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	}
	if resp.ContentLength > limit {
		return fetched{}, ErrTooLarge // said up front: not worth downloading
	}
	body := &capped{r: resp.Body, left: limit}
	feed, err := parseFeed(body)
	if body.over {
		return fetched{}, ErrTooLarge
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fetched{}, ctxErr
		}
		return fetched{}, err
	}
	out := fetched{Feed: feed}
	if v := resp.Header.Get("ETag"); len(v) <= maxValidator && validHeader(v) {
		out.ETag = v
	}
	if v := resp.Header.Get("Last-Modified"); len(v) <= maxValidator && validHeader(v) {
		out.LastModified = v
	}
	return out, nil
}

// validHeader reports whether v can be sent back as a header value:
// printable ASCII only.
func validHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// withoutURL takes the address out of a client's error: a *url.Error
// says "Get <url>: ...", and a feed's address may carry a token in its
// query, which must not reach a log line.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// capped reads at most left bytes from r, then fails and records it.
type capped struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.over = true
			return 0, ErrTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// follower is one user's connected feeds.
type follower struct {
	client *http.Client
	urls   []string
	now    func() time.Time
	known  func(providerID string) bool // nil: nothing is known
	state  func(key string) string      // Env.State; nil: nothing is kept
}

// Initialize has nothing to prepare.
func (f *follower) Initialize(context.Context) error { return nil }

// ValidateAuthentication fetches the feeds: a 401 or 403 means one now
// needs credentials the service does not have.
func (f *follower) ValidateAuthentication(ctx context.Context) (bool, error) {
	for _, u := range f.urls {
		_, err := Fetch(ctx, f.client, u)
		var se *StatusError
		switch {
		case err == nil:
		case errors.As(err, &se) && (se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden):
			return false, nil
		default:
			return false, err
		}
	}
	return true, nil
}

// Shutdown has nothing to release.
func (f *follower) Shutdown(context.Context) error { return nil }
