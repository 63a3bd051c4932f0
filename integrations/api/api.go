// Package api serves the HTTP routes of the integrations: the catalogue,
// the user-integration records (list, read, disconnect, the manual
// credential form, "sync now") and the synced items. Every handler has
// the service's one shape (httpx.HandlerFunc) and expects to be wrapped by
// auth's session middleware; the domain errors of records, items and sync
// are mapped to answers in one place (httpError).
package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/storage/uuid"
)

// Timeouts of the outbound calls the handlers make on a user's behalf.
const (
	// revokeTimeout bounds the best-effort revocation at a disconnect: a
	// slow provider must not hold up the user's disconnect.
	revokeTimeout = 5 * time.Second
	// manualTimeout bounds the check of a submitted manual form against
	// the provider (a login to a mail or file server, a feed fetch).
	manualTimeout = 30 * time.Second
	// defaultTimeout bounds each outbound request of a Config without a
	// Client.
	defaultTimeout = 30 * time.Second
)

// Sync is what the handlers ask of the sync scheduler; *syncer.Syncer has
// it. Tests of the record routes give a fake.
type Sync interface {
	// Connected queues a first sync of a record just connected.
	Connected(rec records.Record)
	// Disconnect soft-deletes the record with its items and tasks.
	Disconnect(rec records.Record) error
	// Activity is what the record's sync is doing now.
	Activity(recordID string) syncer.Activity
	// SyncNow queues a sync of the user's record now.
	SyncNow(userID, recordID string) error
	// KeptState is the values the record keeps between syncs.
	KeptState(rec records.Record) (map[string]string, error)
	// Fetch opens the original of the record's item with providerID at
	// its provider (the download routes).
	Fetch(ctx context.Context, rec records.Record, providerID string) (io.ReadCloser, error)
}

// Config configures Handlers.
type Config struct {
	Registry *integrations.Registry
	Records  *records.Records
	// Items is the item store the item routes read; nil: they answer 500.
	Items *items.Store
	// Search is the search index the search route asks; nil: it answers
	// 500.
	Search Searcher
	// Stale makes a catch-up of the user's index due without waiting
	// (integrations/index's Indexer.Stale): the search route found
	// documents the item store no longer has. Nil: nothing is done.
	Stale func(userID string)
	// Sync is the sync scheduler. Required.
	Sync Sync
	// Getenv reads the OAuth client configuration (<P>_OAUTH_CLIENT_ID…).
	Getenv func(string) string
	// Client makes the outbound requests: revocations and manual form
	// checks. Nil means a client with a 30-second timeout.
	Client *http.Client
	// ManualClient makes the requests of manual integrations, whose
	// targets users choose (a feed URL); nil: Client. Production passes
	// a netguard.Dialer's Client so users cannot reach the server's own
	// network.
	ManualClient *http.Client
	// UserID returns the id of the authenticated caller; main passes a
	// func over auth's context, which this package does not import.
	UserID func(*http.Request) (string, bool)
	// Logger receives the handlers' events; nil discards them.
	Logger *slog.Logger
	// SearchesPerUser is how many searches one user runs at once (0:
	// DefaultSearchesPerUser), and SearchQueue how many more wait for
	// their turn (0: DefaultSearchQueue; negative: none); beyond those a
	// search is answered 429 too_many_searches.
	SearchesPerUser, SearchQueue int
	// SearchTimeout bounds one search's run, after its turn came: a
	// search still running then is stopped and answered 503
	// search_timeout. 0: DefaultSearchTimeout.
	SearchTimeout time.Duration
}

// DefaultSearchTimeout is Config.SearchTimeout's default: far beyond any
// search a person waits for, so that it stops only a runaway one.
const DefaultSearchTimeout = 10 * time.Second

// Handlers serves the integration routes. It is safe for concurrent use.
type Handlers struct {
	cfg  Config
	log  *slog.Logger
	gate *searchGate // each user's share of the search route
	// yield is runtime.Gosched: the search route yields between
	// snippets (see yielder).
	yield func()
	// mailTurns bounds the mail the download routes hold at once.
	mailTurns *mailTurns
	// stopping ends when StopDownloads is called, and every download
	// with it.
	stopping      context.Context
	stopDownloads context.CancelFunc
}

// New returns the handlers of cfg. Without Registry, Records or Sync it is
// an error.
func New(cfg Config) (*Handlers, error) {
	if cfg.Registry == nil || cfg.Records == nil || cfg.Sync == nil {
		return nil, errors.New("api: New needs Registry, Records and Sync")
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: defaultTimeout}
	}
	if cfg.ManualClient == nil {
		cfg.ManualClient = cfg.Client
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.SearchesPerUser <= 0 {
		cfg.SearchesPerUser = DefaultSearchesPerUser()
	}
	if cfg.SearchTimeout <= 0 {
		cfg.SearchTimeout = DefaultSearchTimeout
	}
	if cfg.SearchQueue == 0 {
		cfg.SearchQueue = DefaultSearchQueue
	}
	stopping, stop := context.WithCancel(context.Background())
	return &Handlers{cfg: cfg, log: log, gate: newSearchGate(cfg.SearchesPerUser, cfg.SearchQueue), yield: runtime.Gosched,
		mailTurns: newMailTurns(), stopping: stopping, stopDownloads: stop}, nil
}

// Operation names of the envelope.
const (
	opCatalogue = "integration.readMany"
	opList      = "userIntegration.readMany"
	opGet       = "userIntegration.readOne"
	opDelete    = "userIntegration.deleteOne"
	opCreate    = "userIntegration.create"
	opSync      = "userIntegration.sync"
	opItemsList = "item.readMany"
	opItemGet   = "item.readOne"
)

// endpoint is one of the handlers in the service's shape, its errors
// mapped by httpError.
func endpoint(op string, fn httpx.HandlerFunc) http.Handler {
	return httpx.Handle(op, func(w http.ResponseWriter, r *http.Request) error {
		if err := fn(w, r); err != nil {
			return httpError(err)
		}
		return nil
	})
}

// httpError is the one place where the errors of records, items and sync
// become answers. An unknown id and another user's record or item get the
// same 404, so that ids of other users' data cannot be probed. Anything
// else goes to httpx as it is (a failed store is a 503, the rest a 500).
func httpError(err error) error {
	var nr *syncer.NeedsReauthError
	switch {
	case errors.Is(err, records.ErrNotFound):
		return errRecordNotFound()
	case errors.Is(err, items.ErrNotFound):
		return httpx.NewError(http.StatusNotFound, "item_not_found", "item not found")
	case errors.Is(err, items.ErrContentMissing):
		return httpx.NewError(http.StatusGone, "item_content_gone", "item content is no longer available")
	case errors.As(err, &nr):
		return httpx.NewError(http.StatusConflict, "needs_reauth",
			"the integration must be reconnected before it can sync: authorize "+nr.Integration+" again")
	}
	return err
}

// errIntegrationNotFound answers an unknown integration domain.
func errIntegrationNotFound() *httpx.Error {
	return httpx.NewError(http.StatusNotFound, "integration_not_found", "integration not found")
}

// errRecordNotFound answers an unknown record and another user's record
// alike.
func errRecordNotFound() *httpx.Error {
	return httpx.NewError(http.StatusNotFound, "integration_record_not_found", "integration record not found")
}

// errNoUser answers a handler reached without auth's middleware: a wiring
// bug, not a client error.
func errNoUser() error {
	return httpx.Internal(errors.New("integrations: handler reached without an authenticated user"))
}

// userID returns the authenticated caller.
func (h *Handlers) userID(r *http.Request) (string, error) {
	if h.cfg.UserID != nil {
		if id, ok := h.cfg.UserID(r); ok && id != "" {
			return id, nil
		}
	}
	return "", errNoUser()
}

// ownRecord returns the caller's live record named by the {id} path
// value; an unknown id and another user's record are records.ErrNotFound.
func (h *Handlers) ownRecord(r *http.Request) (records.Record, error) {
	userID, err := h.userID(r)
	if err != nil {
		return records.Record{}, err
	}
	id := r.PathValue("id")
	if !uuid.Valid(id) {
		return records.Record{}, records.ErrNotFound
	}
	return h.cfg.Records.Get(userID, id)
}
