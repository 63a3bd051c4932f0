package webdav

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"searchsvc/integrations"
)

// Fetch downloads the file of the item with providerID for the download
// route (GET /v1/items/{id}/original): a GET of its path in the
// connected folder, streamed, never held whole. What is served is the
// file as the server has it now. A file the server no longer has (404,
// 410) wraps integrations.ErrGone.
func (c *connected) Fetch(ctx context.Context, providerID string) (io.ReadCloser, error) {
	p, _, ok := parseProviderID(providerID)
	if !ok || slices.Contains(strings.Split(p, "/"), "..") {
		return nil, fmt.Errorf("webdav fetch: %w: not a file's id", integrations.ErrGone)
	}
	resp, err := c.d.do(ctx, http.MethodGet, c.d.urlOf(p), "", nil)
	var (
		ae *integrations.APIError
		he *hostileError
	)
	switch {
	case errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusGone):
		return nil, fmt.Errorf("webdav fetch: %w", integrations.ErrGone)
	case errors.As(err, &he):
		return nil, &integrations.ExplainedError{Message: "The WebDAV server " + he.what + ".", Err: err}
	case err != nil:
		return nil, fmt.Errorf("webdav fetch: %w", err)
	case resp.StatusCode != http.StatusOK:
		drain(resp)
		return nil, fmt.Errorf("webdav fetch: the server answered %d, not the file", resp.StatusCode)
	}
	return resp.Body, nil
}
