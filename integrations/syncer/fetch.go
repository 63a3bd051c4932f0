package syncer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
)

// ErrNoOriginal is returned by Fetch for an item whose integration
// cannot give originals back (a chat message, a feed entry).
var ErrNoOriginal = errors.New("sync: the integration gives no originals back")

// FetchError is a fetch that failed for a reason the user can act on or
// wait out; Message says it in words, as a record's last error does, and
// holds nothing personal.
type FetchError struct {
	Message string
	Err     error
}

func (e *FetchError) Error() string { return e.Message + ": " + e.Err.Error() }

func (e *FetchError) Unwrap() error { return e.Err }

// Fetch opens the original of the record's item with providerID, fetched
// from the provider at once (integrations.Fetcher): a mail's raw message,
// a file's bytes, for the download routes. It builds the record's
// instance as a sync does, from its sealed credentials, refreshing an
// access token about to expire; the instance is shut down when the
// returned reader is closed. The reader is read within ctx.
//
// An item the provider no longer has is integrations.ErrGone; a record
// that needs reauthorization a *NeedsReauthError; an integration without
// originals ErrNoOriginal; any other failure a *FetchError.
func (s *Syncer) Fetch(ctx context.Context, rec records.Record, providerID string) (io.ReadCloser, error) {
	if rec.Status == records.StatusNeedsReauth {
		return nil, &NeedsReauthError{Integration: rec.Integration}
	}
	// The content may stream for as long as ctx allows, but never idle
	// longer than fetchIdle; the provider has fetchWait to answer.
	ctx, cancel := context.WithCancel(ctx)
	idle := time.AfterFunc(fetchWait, cancel)
	r, body, err := s.fetchRetrying(ctx, rec, providerID)
	if !idle.Stop() && err == nil {
		body.Close()
		err = context.DeadlineExceeded
	}
	if err != nil {
		r.shutdown(ctx)
		cancel()
		return nil, s.fetchError(rec, err)
	}
	idle.Reset(fetchIdle)
	f := &fetched{ReadCloser: body, r: r, ctx: ctx, cancel: cancel, idle: idle}
	if w, ok := body.(interface{ Bytes() []byte }); ok {
		f.whole = w.Bytes()
	}
	return f, nil
}

// fetchRetrying runs the fetch as a sync runs a task: an access token the
// provider refused before it expired is refreshed once and the fetch run
// again, and credentials a sync of the record refreshed meanwhile are
// read again (the two refreshed the same grant at once).
func (s *Syncer) fetchRetrying(ctx context.Context, rec records.Record, providerID string) (*run, io.ReadCloser, error) {
	r := s.fetchRun(rec)
	body, err := r.fetch(ctx, providerID, false)
	var ae *integrations.APIError
	switch {
	case err == nil:
	case errors.Is(err, records.ErrCredentialsChanged):
		if cur, ok := s.records.ByID(rec.ID); ok {
			r.shutdown(ctx)
			r = s.fetchRun(cur)
			body, err = r.fetch(ctx, providerID, false)
		}
	case errors.As(err, &ae) && ae.Unauthorized() && r.def.OAuth != nil:
		body, err = r.fetch(ctx, providerID, true)
	}
	return r, body, err
}

// fetchRun is a run for Fetch: its instance may stream.
func (s *Syncer) fetchRun(rec records.Record) *run {
	return &run{
		s: s, rec: rec, sealed: rec.Credentials, streams: true,
		log: s.log.With("record_id", rec.ID, "integration", rec.Integration),
		b:   batch{seen: make(map[string]bool)},
	}
}

// Bounds of a fetch.
const (
	// fetchWait bounds how long Fetch waits for the provider to answer,
	// login and token refresh included: as long as a task of a sync, in
	// which a mail of 25 MiB downloads.
	fetchWait = taskTimeout
	// fetchIdle bounds how long a fetched original may send nothing.
	fetchIdle = time.Minute
)

func (r *run) fetch(ctx context.Context, providerID string, refresh bool) (io.ReadCloser, error) {
	if err := r.open(ctx, refresh); err != nil {
		return nil, err
	}
	f, ok := r.inst.(integrations.Fetcher)
	if !ok {
		return nil, ErrNoOriginal
	}
	var body io.ReadCloser
	err := r.guard("fetch", func() error {
		var err error
		body, err = f.Fetch(ctx, providerID)
		return err
	})
	if err == nil && body == nil {
		err = fmt.Errorf("fetch: %w: no content", integrations.ErrGone)
	}
	return body, err
}

// fetched is a fetched original; closing it shuts its instance down.
type fetched struct {
	io.ReadCloser
	r      *run
	ctx    context.Context
	cancel context.CancelFunc
	idle   *time.Timer
	whole  []byte // the original, when the instance read it whole
}

// Read reads the original, moving its idle bound on.
func (f *fetched) Read(p []byte) (int, error) {
	n, err := f.ReadCloser.Read(p)
	if n > 0 {
		f.idle.Reset(fetchIdle)
	}
	return n, err
}

// Bytes is the original when the instance read it whole, else nil.
func (f *fetched) Bytes() []byte { return f.whole }

func (f *fetched) Close() error {
	err := f.ReadCloser.Close()
	f.idle.Stop()
	f.r.shutdown(f.ctx)
	f.cancel()
	return err
}

// fetchError sorts a failed fetch as Fetch documents it, in the words the
// sync uses for its failures, less what the sync does next.
func (s *Syncer) fetchError(rec records.Record, err error) error {
	var ee *integrations.ExplainedError
	name := s.displayName(rec.Integration)
	switch {
	case errors.Is(err, ErrNoOriginal), errors.Is(err, integrations.ErrGone):
		return err
	case errors.Is(err, integrations.ErrReauthRequired):
		return &NeedsReauthError{Integration: rec.Integration}
	case errors.As(err, &ee):
		return &FetchError{Message: name + ": " + strings.TrimSuffix(ee.Message, ".") + ".", Err: err}
	}
	f := classify(err, name, false)
	switch f.class {
	case failReauth:
		return &NeedsReauthError{Integration: rec.Integration}
	case failGone:
		return fmt.Errorf("%w: %w", integrations.ErrGone, err)
	}
	msg := strings.TrimSuffix(strings.TrimSuffix(f.msg, tryAgain), " It will be tried a few more times.")
	if msg == "" || strings.Contains(msg, " sync") {
		msg = name + " could not give it back: the request failed unexpectedly."
	}
	return &FetchError{Message: msg, Err: err}
}
