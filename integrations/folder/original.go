package folder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"searchsvc/integrations"
)

// Fetch opens the file of the item with providerID for the download
// route (GET /v1/items/{id}/original), read-only and through the folder's
// os.Root as a sync reads it, so it cannot lead out of the folder. What is
// served is the file as it is now at the item's path: changed since the
// last sync, it is the new content. A file gone, or no longer a regular
// file, wraps integrations.ErrGone.
func (c *connected) Fetch(_ context.Context, providerID string) (io.ReadCloser, error) {
	p, _, ok := parseProviderID(providerID)
	if !ok {
		return nil, fmt.Errorf("folder fetch: %w: not a file's id", integrations.ErrGone)
	}
	root, err := os.OpenRoot(c.path)
	if err != nil {
		return nil, &integrations.ExplainedError{Message: errGone, Err: err}
	}
	defer root.Close() // the file opened stays open
	// Lstat first: a special file (a FIFO) must not be opened at all, as
	// opening one can wait for ever.
	info, err := root.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		return nil, fmt.Errorf("folder fetch: %w", gone(err))
	}
	f, err := c.cfg.Open(root, p)
	if err != nil {
		return nil, fmt.Errorf("folder fetch: %w", gone(err))
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("folder fetch: %w", gone(err))
	}
	return f, nil
}

// gone is the error of a file that cannot be served: ErrGone for one
// that is not there (or not a regular file), else err.
func gone(err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return integrations.ErrGone
	}
	return err
}
