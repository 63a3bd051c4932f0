// Package feed follows an RSS or Atom feed given by its address in a
// manual form: its start task turns the entries not yet known into items.
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
	"time"

	"searchsvc/integrations"
)

// Domain is the integration domain.
const Domain = "feed"

// FieldURL is the form's only field, and the key of Credentials.Fields.
const FieldURL = "url"

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
				{Name: FieldURL, Label: "Feed address", Type: integrations.FieldURL, Required: true},
			},
		},
		ValidateManual: validate,
		New: func(env integrations.Env) (integrations.Integration, error) {
			u, err := ParseURL(env.Credentials.Fields[FieldURL])
			if err != nil {
				return nil, fmt.Errorf("feed: stored credentials: %w", err)
			}
			now := env.Now
			if now == nil {
				now = time.Now
			}
			return &follower{client: env.Client, url: u, now: now, known: env.Known}, nil
		},
	}
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

// validate checks the form: the address must serve a feed.
func validate(ctx context.Context, fields map[string]string, client *http.Client) (integrations.Credentials, error) {
	u, err := ParseURL(fields[FieldURL])
	if err != nil {
		return integrations.Credentials{}, err
	}
	if _, err := Fetch(ctx, client, u); err != nil {
		return integrations.Credentials{}, explain(ctx, err)
	}
	return integrations.Credentials{Fields: map[string]string{FieldURL: u}}, nil
}

// explain turns a fetch failure into a message for the user. Only a
// cancellation by the caller stays a plain error.
func explain(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return err
	}
	v := &integrations.ValidationError{Field: FieldURL, Err: err}
	var se *StatusError
	switch {
	case errors.As(err, &se):
		v.Message = fmt.Sprintf("the server answered %d %s", se.Code, http.StatusText(se.Code))
	case errors.Is(err, integrations.ErrPrivateAddress):
		v.Message = "this address is not on the public internet"
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
	if client == nil {
		client = &http.Client{Timeout: FetchTimeout}
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, feedURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1")
	req.Header.Set("User-Agent", "searchsvc feed reader")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{Code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	}
	if resp.ContentLength > limit {
		return nil, ErrTooLarge // said up front: not worth downloading
	}
	body := &capped{r: resp.Body, left: limit}
	entries, err := Parse(body)
	if body.over {
		return nil, ErrTooLarge
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, err
	}
	return entries, nil
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

// follower is one connected feed.
type follower struct {
	client *http.Client
	url    string
	now    func() time.Time
	known  func(providerID string) bool // nil: nothing is known
}

// Initialize has nothing to prepare.
func (f *follower) Initialize(context.Context) error { return nil }

// ValidateAuthentication fetches the feed: a 401 or 403 means it now needs
// credentials the service does not have.
func (f *follower) ValidateAuthentication(ctx context.Context) (bool, error) {
	_, err := Fetch(ctx, f.client, f.url)
	var se *StatusError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &se) && (se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden):
		return false, nil
	default:
		return false, err
	}
}

// Shutdown has nothing to release.
func (f *follower) Shutdown(context.Context) error { return nil }
