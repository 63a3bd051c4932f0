package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/records"
)

// CatalogueEntry is one integration as GET /v1/integrations lists it: its
// manifest, and whether this deployment can connect it (for OAuth: its
// client id and secret are set; a manual integration can unless it
// requires a setting this deployment lacks, which Requires names).
type CatalogueEntry struct {
	integrations.Manifest
	Configured bool `json:"configured"`
	// Requires names the administrator's settings a manual integration
	// lacks here (FOLDER_ROOTS), when it is not configured.
	Requires []string `json:"requires,omitempty"`
}

// RecordView is a record as the record routes show it: the record's view
// (status, lastSyncAt, itemsSynced, lastError), what its sync is doing
// now (activity, itemsLeft, itemsTotal, retryAt, pendingTasks), and what it follows
// (sources: a feed record's addresses).
type RecordView struct {
	records.RecordView
	PendingTasks int `json:"pendingTasks"`
	// Activity is the sync's activity: idle, listing, downloading,
	// waiting or paused (see syncer.Activity).
	Activity  string `json:"activity"`
	ItemsLeft int    `json:"itemsLeft"`
	// ItemsTotal is how many items the current sync has queued for
	// download, itemsLeft among them; absent when none are left (see
	// syncer.Activity).
	ItemsTotal int        `json:"itemsTotal,omitempty"`
	RetryAt    *time.Time `json:"retryAt,omitempty"`
	// PausedReason says why a paused sync waits: disk_full or not_saved.
	PausedReason string   `json:"pausedReason,omitempty"`
	Sources      []string `json:"sources,omitempty"`
	// Label names the record among the user's connections: the label
	// given in its form, else what it connects to (its host, its folder);
	// Source says what it reads (the IMAP user and host), never a secret.
	// Both are absent for integrations that do not describe their records.
	Label  string `json:"label,omitempty"`
	Source string `json:"source,omitempty"`
	// SourceDetails says of each source what the last sync learnt of it
	// (a feed's own title and last status).
	SourceDetails []integrations.SourceDetail `json:"sourceDetails,omitempty"`
}

// view is what clients see of rec.
func (h *Handlers) view(rec records.Record) RecordView {
	a := h.cfg.Sync.Activity(rec.ID)
	v := RecordView{RecordView: rec.View(), PendingTasks: a.Pending, Activity: a.State, ItemsLeft: a.ItemsLeft,
		ItemsTotal: a.ItemsTotal, PausedReason: a.Paused}
	if !a.RetryAt.IsZero() {
		v.RetryAt = &a.RetryAt
	}
	if !a.LastSyncAt.IsZero() && (v.LastSyncAt == nil || a.LastSyncAt.After(*v.LastSyncAt)) {
		v.LastSyncAt = &a.LastSyncAt // an idle poll not yet on disk
	}
	def, ok := h.cfg.Registry.Get(rec.Integration)
	if !ok || (def.Sources == nil && def.Describe == nil) {
		return v
	}
	creds, err := h.cfg.Records.Credentials(rec)
	if err != nil {
		h.log.Warn("record view: credentials do not open; sources not shown", "record_id", rec.ID, "err", err)
		return v
	}
	if def.Sources != nil {
		v.Sources = def.Sources(creds)
		v.SourceDetails = h.details(def, rec, creds)
	}
	if def.Describe != nil {
		v.Label, v.Source = def.Describe(creds)
		if l := creds.Fields[integrations.FieldLabel]; l != "" {
			v.Label = l
		}
	}
	return v
}

// details is def.Details of rec, over the values the record keeps; nil
// when they do not open (the view goes on without them).
func (h *Handlers) details(def integrations.Definition, rec records.Record, creds integrations.Credentials) []integrations.SourceDetail {
	if def.Details == nil {
		return nil
	}
	kept, err := h.cfg.Sync.KeptState(rec)
	if err != nil {
		h.log.Warn("record view: sync state does not open; source details not shown", "record_id", rec.ID, "err", err)
		return nil
	}
	return def.Details(creds, func(k string) string { return kept[k] })
}

// Catalogue serves GET /v1/integrations: every manifest with its
// configured flag, filtered by inIds/ninIds on the domain.
func (h *Handlers) Catalogue() http.Handler { return endpoint(opCatalogue, h.catalogue) }

func (h *Handlers) catalogue(w http.ResponseWriter, r *http.Request) error {
	f, err := httpx.ParseFilter(r.URL.Query())
	if err != nil {
		return err
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
			m.Fields = []integrations.Field{}
		}
		def, _ := h.cfg.Registry.Get(m.Domain)
		out = append(out, CatalogueEntry{Manifest: m, Configured: h.configured(def), Requires: def.Requires})
	}
	httpx.Many(w, r, opCatalogue, out)
	return nil
}

// configured reports whether def can be connected with this deployment's
// configuration.
func (h *Handlers) configured(def integrations.Definition) bool {
	if def.OAuth == nil {
		return len(def.Requires) == 0
	}
	p, err := oauthclient.NewProvider(def, h.cfg.Getenv, h.cfg.Client)
	return err == nil && p.Configured() == nil
}

// List serves GET /v1/user-integrations: the caller's live records,
// oldest connection first, filtered by inIds/ninIds on the record id.
func (h *Handlers) List() http.Handler { return endpoint(opList, h.list) }

func (h *Handlers) list(w http.ResponseWriter, r *http.Request) error {
	userID, err := h.userID(r)
	if err != nil {
		return err
	}
	f, err := httpx.ParseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	recs := h.cfg.Records.ForUser(userID)
	slices.SortFunc(recs, func(a, b records.Record) int {
		if c := a.ConnectedAt.Compare(b.ConnectedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	var out []RecordView
	for _, rec := range recs {
		if f.Match(rec.ID) {
			out = append(out, h.view(rec))
		}
	}
	httpx.Many(w, r, opList, out)
	return nil
}

// Get serves GET /v1/user-integrations/{id}: the caller's own record.
func (h *Handlers) Get() http.Handler { return endpoint(opGet, h.get) }

func (h *Handlers) get(w http.ResponseWriter, r *http.Request) error {
	rec, err := h.ownRecord(r)
	if err != nil {
		return err
	}
	httpx.One(w, r, opGet, h.view(rec))
	return nil
}

// Delete serves DELETE /v1/user-integrations/{id}: it soft-deletes the
// caller's record (state disconnected, credentials dropped) with its
// items and queued tasks, then revokes the tokens at the provider where it
// offers revocation. Revocation is best effort: a failure is logged and
// the record stays disconnected.
func (h *Handlers) Delete() http.Handler { return endpoint(opDelete, h.disconnect) }

func (h *Handlers) disconnect(w http.ResponseWriter, r *http.Request) error {
	rec, err := h.ownRecord(r)
	if err != nil {
		return err
	}
	// Opened before the disconnect, which drops the sealed copy.
	creds, credsErr := h.cfg.Records.Credentials(rec)
	if err := h.cfg.Sync.Disconnect(rec); err != nil {
		return err // records.ErrNotFound: a concurrent disconnect won
	}
	h.log.Info("integration disconnected", "user_id", rec.UserID, "integration", rec.Integration, "record_id", rec.ID)
	if credsErr != nil {
		h.log.Warn("disconnect: credentials do not open; not revoked at the provider",
			"integration", rec.Integration, "record_id", rec.ID, "err", credsErr)
	} else {
		h.revoke(r.Context(), rec, creds)
	}
	httpx.Write(w, r, http.StatusOK, opDelete, httpx.F("success", true))
	return nil
}

// revoke revokes creds at rec's provider, best effort, within
// revokeTimeout, whether or not the client is still waiting.
func (h *Handlers) revoke(ctx context.Context, rec records.Record, creds integrations.Credentials) {
	def, ok := h.cfg.Registry.Get(rec.Integration)
	if !ok || def.OAuth == nil {
		return
	}
	p, err := oauthclient.NewProvider(def, h.cfg.Getenv, h.cfg.Client)
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
	case errors.Is(err, oauthclient.ErrRevokeUnsupported):
	default:
		attrs := []any{"integration", rec.Integration, "record_id", rec.ID}
		var te *oauthclient.TokenError
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
	// RecordID names the connection the form updates (Reconnect); absent,
	// the form makes a new connection of an integration that allows
	// several (Manifest.MaxConnections), or updates the user's one.
	RecordID string `json:"recordId"`
}

// SubmitCredentials serves POST /v1/user-integrations/{integration}/credentials:
// a manual integration's form is checked against the manifest, then
// against the provider (Definition.ValidateManual), and only then sealed
// and stored. A new record answers 201, a reconnected one 200.
func (h *Handlers) SubmitCredentials() http.Handler { return endpoint(opCreate, h.submitCredentials) }

func (h *Handlers) submitCredentials(w http.ResponseWriter, r *http.Request) error {
	userID, err := h.userID(r)
	if err != nil {
		return err
	}
	domain := r.PathValue("integration")
	def, ok := h.cfg.Registry.Get(domain)
	if !ok {
		return errIntegrationNotFound()
	}
	if def.ValidateManual == nil {
		return httpx.Invalid(httpx.FieldError{Field: "integration",
			Message: domain + " connects through OAuth: use GET /v1/user-integration/oauth/" + domain + "/authorize"})
	}
	var body credentialsBody
	if err := httpx.Decode(w, r, &body); err != nil {
		return err
	}
	fields, errs := def.Manifest.CheckForm(body.Fields)
	if errs != nil {
		return invalid(errs...)
	}
	label, err := takeLabel(fields)
	if err != nil {
		return err
	}
	var target records.Record
	if body.RecordID != "" {
		if target, err = h.cfg.Records.Get(userID, body.RecordID); err != nil || target.Integration != domain {
			return errRecordNotFound()
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), manualTimeout)
	creds, err := def.ValidateManual(ctx, fields, h.cfg.ManualClient)
	cancel()
	var ve *integrations.ValidationError
	switch {
	case errors.As(err, &ve):
		return invalid(ve)
	case err != nil && r.Context().Err() != nil:
		return nil // the client went away; nobody reads an answer
	case err != nil:
		h.log.Warn("manual credentials could not be checked", "user_id", userID, "integration", domain, "err", err)
		return &httpx.Error{Status: http.StatusBadGateway, Code: "integration_unreachable",
			Message: "could not check the credentials with " + domain + "; try again later"}
	}
	if label != "" {
		creds.Fields = maps.Clone(creds.Fields)
		if creds.Fields == nil {
			creds.Fields = map[string]string{}
		}
		creds.Fields[integrations.FieldLabel] = label
	}
	rec, existed, err := h.store(userID, def, target, creds)
	if err != nil {
		return err
	}
	h.log.Info("integration connected", "user_id", userID, "integration", domain, "record_id", rec.ID, "auth", "manual")
	h.cfg.Sync.Connected(rec)
	status := http.StatusCreated
	if existed {
		status = http.StatusOK
	}
	httpx.Write(w, r, status, opCreate, httpx.F("result", h.view(rec)))
	return nil
}

// takeLabel takes the optional label out of a checked form, so that the
// provider's check never sees it: at most MaxLabelLen characters, one
// line.
func takeLabel(fields map[string]string) (string, error) {
	label, ok := fields[integrations.FieldLabel]
	if !ok {
		return "", nil
	}
	if n := utf8.RuneCountInString(label); n > integrations.MaxLabelLen || strings.ContainsFunc(label, unicode.IsControl) {
		return "", invalid(&integrations.ValidationError{Field: integrations.FieldLabel,
			Message: "must be at most 64 characters, on one line"})
	}
	delete(fields, integrations.FieldLabel)
	return label, nil
}

// store stores checked credentials: in target (a Reconnect), in a new
// record of an integration that may be connected several times, or in
// the user's one record of def. existed says a record was updated.
func (h *Handlers) store(userID string, def integrations.Definition, target records.Record, creds integrations.Credentials) (rec records.Record, existed bool, err error) {
	domain := def.Manifest.Domain
	existed = target.ID != ""
	switch max := def.Manifest.MaxConnections; {
	case existed:
		rec, err = h.cfg.Records.Reconnect(userID, domain, target.ID, creds)
		if errors.Is(err, records.ErrNotFound) {
			err = errRecordNotFound()
		}
	case max > 1:
		rec, err = h.cfg.Records.ConnectAnother(userID, domain, creds, max)
		if errors.Is(err, records.ErrTooMany) {
			err = httpx.NewError(http.StatusConflict, "too_many_connections",
				fmt.Sprintf("at most %d connections of %s; disconnect one first", max, def.Manifest.DisplayName))
		}
	default:
		_, existed = h.cfg.Records.Find(userID, domain)
		rec, err = h.cfg.Records.Connect(userID, domain, creds)
	}
	return rec, existed, err
}

// invalid turns validation errors into a 400 whose details name the form
// fields as fields.<name>.
func invalid(errs ...*integrations.ValidationError) *httpx.Error {
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
