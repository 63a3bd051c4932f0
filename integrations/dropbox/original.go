package dropbox

import (
	"context"
	"errors"
	"fmt"
	"io"

	"searchsvc/integrations"
)

// Fetch downloads the file of the item with providerID for the download
// route (GET /v1/items/{id}/original), streamed, its content hash checked
// as it is read (see Client.Open). What is served is the file as Dropbox
// has it now, moved or not. A file Dropbox no longer has wraps
// integrations.ErrGone.
func (a *account) Fetch(ctx context.Context, providerID string) (io.ReadCloser, error) {
	id, _, _, ok := parseProviderID(providerID)
	if !ok {
		return nil, fmt.Errorf("dropbox fetch: %w: not a file's id", integrations.ErrGone)
	}
	_, body, err := a.sync.api.Open(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("dropbox fetch: %w: %w", integrations.ErrGone, err)
	case err != nil:
		return nil, err
	}
	return body, nil
}
