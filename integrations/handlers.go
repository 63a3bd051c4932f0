package integrations

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"searchsvc/httpx"
	"searchsvc/storage"
)

// Timeouts of the outbound calls the handlers make on a user's behalf.
const (
	// revokeTimeout bounds the best-effort revocation at a disconnect: a
	// slow provider must not hold up the user's disconnect.
	revokeTimeout = 5 * time.Second
	// manualTimeout bounds the check of a submitted manual form against
	// the provider (a login to a mail or file server, a feed fetch).
	manualTimeout = 30 * time.Second
)

// HandlersConfig configures Handlers.
type HandlersConfig struct {
	Registry *Registry
	Records  *Records
	// Getenv reads the OAuth client configuration (<P>_OAUTH_CLIENT_ID…).
	Getenv func(string) string
	// Client makes the outbound requests: revocations and manual form
	// checks. Nil means a client with a 30-second timeout.
	Client *http.Client
	// ManualClient makes the requests of manual integrations, whose
	// targets users choose (a feed URL); nil: Client. Production passes a
	// PublicClient so users cannot reach the server's own network.
	ManualClient *http.Client
	// UserID returns the id of the authenticated caller; main passes a
	// func over auth's context, which this package does not import.
	UserID func(*http.Request) (string, bool)
	// Logger receives the handlers' events; nil discards them.
	Logger *slog.Logger
	// OnDisconnect returns extra ops committed in the same log line as the
	// record's soft delete (its items, its pending tasks). May be nil.
	OnDisconnect func(Record) []storage.Op
	// OnConnect is told about a record that was just connected or
	// reconnected, for example to queue a first sync. It must return
	// quickly and must not run tasks itself. May be nil.
	OnConnect func(Record)
	// Pending counts a record's queued sync tasks, shown as pendingTasks.
	// May be nil (none shown as 0).
	Pending func(recordID string) int
}

// view is what clients see of rec: the record and its sync progress.
func (h *Handlers) view(rec Record) SyncView {
	v := SyncView{RecordView: rec.View()}
	if h.cfg.Pending != nil {
		v.PendingTasks = h.cfg.Pending(rec.ID)
	}
	return v
}

// Handlers serves the integration catalogue and the user-integration
// records: GET /v1/integrations, GET and DELETE /v1/user-integrations…,
// and the manual credential form. Every handler expects to be wrapped by
// auth's session middleware.
type Handlers struct {
	cfg HandlersConfig
	log *slog.Logger
}

// NewHandlers returns the handlers of cfg.
func NewHandlers(cfg HandlersConfig) *Handlers {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: defaultTimeout}
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handlers{cfg: cfg, log: log}
}

// Operation names of the envelope.
const (
	opCatalogue = "integration.readMany"
	opList      = "userIntegration.readMany"
	opGet       = "userIntegration.readOne"
	opDelete    = "userIntegration.deleteOne"
	opCreate    = "userIntegration.create"
)

// endpoint is a handler with its operation name, which auth's Require
// uses for the errors it answers in front of it.
type endpoint struct {
	op string
	fn http.HandlerFunc
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.fn(w, r) }

// Operation names the endpoint's operation.
func (e *endpoint) Operation() string { return e.op }

// CatalogueEntry is one integration as GET /v1/integrations lists it: its
// manifest, and whether this deployment can connect it (for OAuth: its
// client id and secret are set; a manual integration always can).
type CatalogueEntry struct {
	Manifest
	Configured bool `json:"configured"`
}

// errIntegrationNotFound answers an unknown integration domain.
func errIntegrationNotFound() *httpx.Error {
	return httpx.NewError(http.StatusNotFound, "integration_not_found", "integration not found")
}

// errRecordNotFound answers an unknown record and another user's record
// alike, so that ids of other users' records cannot be probed.
func errRecordNotFound() *httpx.Error {
	return httpx.NewError(http.StatusNotFound, "integration_record_not_found", "integration record not found")
}

// Catalogue serves GET /v1/integrations: every manifest with its
// configured flag, filtered by inIds/ninIds on the domain.
func (h *Handlers) Catalogue() http.Handler {
	return &endpoint{op: opCatalogue, fn: h.catalogue}
}

func (h *Handlers) catalogue(w http.ResponseWriter, r *http.Request) {
	f, err := httpx.ParseFilter(r.URL.Query())
	if err != nil {
		httpx.WriteError(w, r, opCatalogue, err)
		return
	}
	var out []CatalogueEntry
	for _, m := range h.cfg.Registry.List() {
		if !f.Match(m.Domain) {
			continue
		}
		if m.Scopes == nil {
			m.Scopes = []string{}
		}
		if m.Fields == nil {
			m.Fields = []Field{}
		}
		def, _ := h.cfg.Registry.Get(m.Domain)
		out = append(out, CatalogueEntry{Manifest: m, Configured: h.configured(def)})
	}
	httpx.Many(w, r, opCatalogue, out)
}

// configured reports whether def can be connected with this deployment's
// configuration.
func (h *Handlers) configured(def Definition) bool {
	if def.OAuth == nil {
		return true
	}
	p, err := NewProvider(def, h.cfg.Getenv, h.cfg.Client)
	return err == nil && p.configured() == nil
}

// List serves GET /v1/user-integrations: the caller's live records,
// oldest connection first, filtered by inIds/ninIds on the record id.
func (h *Handlers) List() http.Handler {
	return &endpoint{op: opList, fn: h.list}
}

func (h *Handlers) list(w http.ResponseWriter, r *http.Request) {
	userID, ok := h.userID(w, r, opList)
	if !ok {
		return
	}
	f, err := httpx.ParseFilter(r.URL.Query())
	if err != nil {
		httpx.WriteError(w, r, opList, err)
		return
	}
	recs := h.cfg.Records.ForUser(userID)
	slices.SortFunc(recs, func(a, b Record) int {
		if c := a.ConnectedAt.Compare(b.ConnectedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	var out []SyncView
	for _, rec := range recs {
		if f.Match(rec.ID) {
			out = append(out, h.view(rec))
		}
	}
	httpx.Many(w, r, opList, out)
}

// Get serves GET /v1/user-integrations/{id}: the caller's own record.
func (h *Handlers) Get() http.Handler {
	return &endpoint{op: opGet, fn: h.get}
}

func (h *Handlers) get(w http.ResponseWriter, r *http.Request) {
	rec, ok := h.ownRecord(w, r, opGet)
	if !ok {
		return
	}
	httpx.One(w, r, opGet, h.view(rec))
}

// Delete serves DELETE /v1/user-integrations/{id}: it soft-deletes the
// caller's record (state disconnected, credentials dropped) together with
// OnDisconnect's ops, then revokes the tokens at the provider where it
// offers revocation. Revocation is best effort: a failure is logged and
// the record stays disconnected.
func (h *Handlers) Delete() http.Handler {
	return &endpoint{op: opDelete, fn: h.disconnect}
}

func (h *Handlers) disconnect(w http.ResponseWriter, r *http.Request) {
	rec, ok := h.ownRecord(w, r, opDelete)
	if !ok {
		return
	}
	// Opened before the disconnect, which drops the sealed copy.
	creds, credsErr := h.cfg.Records.Credentials(rec)
	var extra []storage.Op
	if h.cfg.OnDisconnect != nil {
		extra = h.cfg.OnDisconnect(rec)
	}
	if _, err := h.cfg.Records.Disconnect(rec.ID, extra...); err != nil {
		if errors.Is(err, ErrRecordNotFound) {
			err = errRecordNotFound() // a concurrent disconnect won
		}
		httpx.WriteError(w, r, opDelete, err)
		return
	}
	h.log.Info("integration disconnected", "user_id", rec.UserID, "integration", rec.Integration, "record_id", rec.ID)
	if credsErr != nil {
		h.log.Warn("disconnect: credentials do not open; not revoked at the provider",
			"integration", rec.Integration, "record_id", rec.ID, "err", credsErr)
	} else {
		h.revoke(r.Context(), rec, creds)
	}
	httpx.Write(w, r, http.StatusOK, opDelete, httpx.F("success", true))
}

// revoke revokes creds at rec's provider, best effort, within
// revokeTimeout, whether or not the client is still waiting.
func (h *Handlers) revoke(ctx context.Context, rec Record, creds Credentials) {
	def, ok := h.cfg.Registry.Get(rec.Integration)
	if !ok || def.OAuth == nil {
		return
	}
	p, err := NewProvider(def, h.cfg.Getenv, h.cfg.Client)
	if err != nil {
		h.log.Warn("disconnect: provider misconfigured; not revoked", "integration", rec.Integration, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
	defer cancel()
	err = p.Revoke(ctx, creds)
	switch {
	case err == nil:
		h.log.Info("tokens revoked at the provider", "integration", rec.Integration, "record_id", rec.ID)
	case errors.Is(err, ErrRevokeUnsupported):
	default:
		attrs := []any{"integration", rec.Integration, "record_id", rec.ID}
		var te *TokenError
		if errors.As(err, &te) {
			attrs = append(attrs, "status", te.Status, "provider_error", te.Code)
		} else {
			attrs = append(attrs, "err", err)
		}
		h.log.Warn("disconnect: revocation at the provider failed", attrs...)
	}
}

// credentialsBody is the manual form's request body.
type credentialsBody struct {
	Fields map[string]json.RawMessage `json:"fields"`
	httpx.CSRFField
}

// SubmitCredentials serves POST /v1/user-integrations/{integration}/credentials:
// a manual integration's form is checked against the manifest, then
// against the provider (Definition.ValidateManual), and only then sealed
// and stored. A new record answers 201, a reconnected one 200.
func (h *Handlers) SubmitCredentials() http.Handler {
	return &endpoint{op: opCreate, fn: h.submitCredentials}
}

func (h *Handlers) submitCredentials(w http.ResponseWriter, r *http.Request) {
	userID, ok := h.userID(w, r, opCreate)
	if !ok {
		return
	}
	domain := r.PathValue("integration")
	def, ok := h.cfg.Registry.Get(domain)
	if !ok {
		httpx.WriteError(w, r, opCreate, errIntegrationNotFound())
		return
	}
	if def.ValidateManual == nil {
		httpx.WriteError(w, r, opCreate, httpx.Invalid(httpx.FieldError{Field: "integration",
			Message: domain + " connects through OAuth: use GET /v1/user-integration/oauth/" + domain + "/authorize"}))
		return
	}
	var body credentialsBody
	if err := httpx.Decode(w, r, &body); err != nil {
		httpx.WriteError(w, r, opCreate, err)
		return
	}
	fields, errs := def.Manifest.CheckForm(body.Fields)
	if errs != nil {
		httpx.WriteError(w, r, opCreate, invalid(errs...))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), manualTimeout)
	client := h.cfg.ManualClient
	if client == nil {
		client = h.cfg.Client
	}
	creds, err := def.ValidateManual(ctx, fields, client)
	cancel()
	var ve *ValidationError
	switch {
	case errors.As(err, &ve):
		httpx.WriteError(w, r, opCreate, invalid(ve))
		return
	case err != nil && r.Context().Err() != nil:
		return // the client went away; nobody reads an answer
	case err != nil:
		h.log.Warn("manual credentials could not be checked", "user_id", userID, "integration", domain, "err", err)
		httpx.WriteError(w, r, opCreate, &httpx.Error{Status: http.StatusBadGateway, Code: "integration_unreachable",
			Message: "could not check the credentials with " + domain + "; try again later"})
		return
	}
	_, existed := h.cfg.Records.Find(userID, domain)
	rec, err := h.cfg.Records.Connect(userID, domain, creds)
	if err != nil {
		httpx.WriteError(w, r, opCreate, err)
		return
	}
	h.log.Info("integration connected", "user_id", userID, "integration", domain, "record_id", rec.ID, "auth", "manual")
	if h.cfg.OnConnect != nil {
		h.cfg.OnConnect(rec)
	}
	status := http.StatusCreated
	if existed {
		status = http.StatusOK
	}
	httpx.Write(w, r, status, opCreate, httpx.F("result", h.view(rec)))
}

// invalid turns validation errors into a 400 whose details name the form
// fields as fields.<name>.
func invalid(errs ...*ValidationError) *httpx.Error {
	details := make([]httpx.FieldError, 0, len(errs))
	for _, e := range errs {
		field := "fields"
		if e.Field != "" {
			field += "." + e.Field
		}
		details = append(details, httpx.FieldError{Field: field, Message: e.Message})
	}
	return httpx.Invalid(details...)
}

// userID returns the authenticated caller, or answers 500: a handler
// reached without auth's middleware is a wiring bug, not a client error.
func (h *Handlers) userID(w http.ResponseWriter, r *http.Request, op string) (string, bool) {
	if h.cfg.UserID != nil {
		if id, ok := h.cfg.UserID(r); ok && id != "" {
			return id, true
		}
	}
	httpx.WriteError(w, r, op, httpx.Internal(errors.New("integrations: handler reached without an authenticated user")))
	return "", false
}

// ownRecord returns the caller's live record named by the {id} path
// value, or answers 404: an unknown id and another user's record get the
// same answer.
func (h *Handlers) ownRecord(w http.ResponseWriter, r *http.Request, op string) (Record, bool) {
	userID, ok := h.userID(w, r, op)
	if !ok {
		return Record{}, false
	}
	id := r.PathValue("id")
	if !httpx.IsUUID(id) {
		httpx.WriteError(w, r, op, errRecordNotFound())
		return Record{}, false
	}
	rec, ok := h.cfg.Records.Get(id)
	if !ok || rec.UserID != userID {
		httpx.WriteError(w, r, op, errRecordNotFound())
		return Record{}, false
	}
	return rec, true
}
