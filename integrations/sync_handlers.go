package integrations

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"searchsvc/httpx"
)

// SyncHandlersConfig configures SyncHandlers.
type SyncHandlersConfig struct {
	Syncer *Syncer
	// UserID returns the id of the authenticated caller, as for Handlers.
	UserID func(*http.Request) (string, bool)
	// Logger receives the handlers' events; nil discards them.
	Logger *slog.Logger
}

// SyncHandlers serves "sync now" and the synced items:
// POST /v1/user-integrations/{id}/sync, GET /v1/items and
// GET /v1/items/{id}. Every handler expects to be wrapped by auth's
// session middleware.
type SyncHandlers struct {
	cfg SyncHandlersConfig
	log *slog.Logger
}

// NewSyncHandlers returns the handlers of cfg.
func NewSyncHandlers(cfg SyncHandlersConfig) *SyncHandlers {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &SyncHandlers{cfg: cfg, log: log}
}

// Operation names of the envelope.
const (
	opSync      = "userIntegration.sync"
	opItemsList = "item.readMany"
	opItemGet   = "item.readOne"
)

// SyncView is a record as the sync endpoint shows it: the record's view
// and how many of its tasks are queued.
type SyncView struct {
	RecordView
	PendingTasks int `json:"pendingTasks"`
}

// SyncNow serves POST /v1/user-integrations/{id}/sync: it queues a sync
// of the caller's record now (unless one is under way) and answers 202
// with the record's progress. A record that needs re-authorization is a
// 409: it cannot sync before the user connects it again.
func (h *SyncHandlers) SyncNow() http.Handler {
	return &endpoint{op: opSync, fn: h.syncNow}
}

func (h *SyncHandlers) syncNow(w http.ResponseWriter, r *http.Request) {
	userID, ok := h.userID(w, r, opSync)
	if !ok {
		return
	}
	id := r.PathValue("id")
	rec, ok := h.cfg.Syncer.records.Get(id)
	if !httpx.IsUUID(id) || !ok || rec.UserID != userID {
		httpx.WriteError(w, r, opSync, errRecordNotFound())
		return
	}
	err := h.cfg.Syncer.SyncNow(id)
	switch {
	case errors.Is(err, ErrNeedsReauth):
		httpx.WriteError(w, r, opSync, httpx.NewError(http.StatusConflict, "needs_reauth",
			"the integration must be reconnected before it can sync: authorize "+rec.Integration+" again"))
		return
	case errors.Is(err, ErrRecordNotFound):
		httpx.WriteError(w, r, opSync, errRecordNotFound())
		return
	case err != nil:
		httpx.WriteError(w, r, opSync, err) // a failed store is 503 in httpx
		return
	}
	rec, ok = h.cfg.Syncer.records.Get(id)
	if !ok {
		httpx.WriteError(w, r, opSync, errRecordNotFound())
		return
	}
	view := SyncView{RecordView: rec.View(), PendingTasks: h.cfg.Syncer.Pending(id)}
	httpx.Write(w, r, http.StatusAccepted, opSync, httpx.F("result", view))
}

// ListItems serves GET /v1/items: the caller's items, newest first, with
// the filters integrationId (record ids, comma-separated), inIds and
// ninIds, a page size limit (default 50, at most 200) and cursor, the
// nextCursor of the previous page. nextCursor is present when more follow.
func (h *SyncHandlers) ListItems() http.Handler {
	return &endpoint{op: opItemsList, fn: h.listItems}
}

func (h *SyncHandlers) listItems(w http.ResponseWriter, r *http.Request) {
	userID, ok := h.userID(w, r, opItemsList)
	if !ok {
		return
	}
	q, err := parseItemQuery(r)
	if err != nil {
		httpx.WriteError(w, r, opItemsList, err)
		return
	}
	q.UserID = userID
	page, more := h.cfg.Syncer.ListItems(q)
	views := make([]ItemView, len(page))
	for i := range page {
		if views[i], err = h.cfg.Syncer.View(&page[i]); err != nil {
			httpx.WriteError(w, r, opItemsList, httpx.Internal(err))
			return
		}
	}
	fields := []httpx.Field{httpx.F("results", views), httpx.F("count", len(views))}
	if more {
		last := page[len(page)-1]
		fields = append(fields, httpx.F("nextCursor", Cursor{Date: last.Date, ID: last.ID}.String()))
	}
	httpx.Write(w, r, http.StatusOK, opItemsList, fields...)
}

// parseItemQuery reads GET /v1/items's query; a bad value is a 400 naming
// the parameter.
func parseItemQuery(r *http.Request) (ItemQuery, error) {
	vals := r.URL.Query()
	f, err := httpx.ParseFilter(vals)
	if err != nil {
		return ItemQuery{}, err
	}
	q := ItemQuery{Filter: f, Limit: DefaultItemsLimit}
	var details []httpx.FieldError
	for _, v := range vals["integrationId"] {
		for id := range strings.SplitSeq(v, ",") {
			if id = strings.TrimSpace(id); id == "" {
				continue
			}
			if q.Records == nil {
				q.Records = make(map[string]bool)
			}
			q.Records[id] = true
		}
	}
	if len(q.Records) > httpx.MaxFilterIDs {
		details = append(details, httpx.FieldError{Field: "integrationId", Message: "at most " + strconv.Itoa(httpx.MaxFilterIDs) + " ids"})
	}
	if v := vals.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxItemsLimit {
			details = append(details, httpx.FieldError{Field: "limit", Message: "must be a whole number from 1 to " + strconv.Itoa(MaxItemsLimit)})
		}
		q.Limit = n
	}
	if v := vals.Get("cursor"); v != "" {
		c, err := ParseCursor(v)
		if err != nil {
			details = append(details, httpx.FieldError{Field: "cursor", Message: "is not a cursor this service made"})
		}
		q.After = &c
	}
	if details != nil {
		return ItemQuery{}, httpx.Invalid(details...)
	}
	return q, nil
}

// errItemNotFound answers an unknown item and another user's alike.
func errItemNotFound() *httpx.Error {
	return httpx.NewError(http.StatusNotFound, "item_not_found", "item not found")
}

// GetItem serves GET /v1/items/{id}: the caller's item with its extracted
// text, read from its sealed content file. An item whose file is gone
// answers 410.
func (h *SyncHandlers) GetItem() http.Handler {
	return &endpoint{op: opItemGet, fn: h.getItem}
}

func (h *SyncHandlers) getItem(w http.ResponseWriter, r *http.Request) {
	userID, ok := h.userID(w, r, opItemGet)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if !httpx.IsUUID(id) {
		httpx.WriteError(w, r, opItemGet, errItemNotFound())
		return
	}
	it, ok := h.cfg.Syncer.GetItem(userID, id)
	if !ok {
		httpx.WriteError(w, r, opItemGet, errItemNotFound())
		return
	}
	text, err := h.cfg.Syncer.content.readText(&it)
	switch {
	case errors.Is(err, errContentMissing):
		h.log.Warn("item content file missing", "item_id", it.ID, "record_id", it.RecordID)
		httpx.WriteError(w, r, opItemGet, httpx.NewError(http.StatusGone, "item_content_gone", "item content is no longer available"))
		return
	case err != nil:
		httpx.WriteError(w, r, opItemGet, httpx.Internal(err))
		return
	}
	view, err := h.cfg.Syncer.View(&it)
	if err != nil {
		httpx.WriteError(w, r, opItemGet, httpx.Internal(err))
		return
	}
	httpx.One(w, r, opItemGet, ItemDetail{ItemView: view, Text: text})
}

// userID returns the authenticated caller, or answers 500: a handler
// reached without auth's middleware is a wiring bug.
func (h *SyncHandlers) userID(w http.ResponseWriter, r *http.Request, op string) (string, bool) {
	if h.cfg.UserID != nil {
		if id, ok := h.cfg.UserID(r); ok && id != "" {
			return id, true
		}
	}
	httpx.WriteError(w, r, op, httpx.Internal(errors.New("integrations: handler reached without an authenticated user")))
	return "", false
}
