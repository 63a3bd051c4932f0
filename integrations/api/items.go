package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"searchsvc/httpx"
	"searchsvc/integrations/items"
	"searchsvc/storage/uuid"
)

// SyncNow serves POST /v1/user-integrations/{id}/sync: it queues a sync
// of the caller's record now (unless one is under way) and answers 202
// with the record's progress. A record that needs re-authorization is a
// 409: it cannot sync before the user connects it again.
func (h *Handlers) SyncNow() http.Handler { return endpoint(opSync, h.syncNow) }

func (h *Handlers) syncNow(w http.ResponseWriter, r *http.Request) error {
	rec, err := h.ownRecord(r)
	if err != nil {
		return err
	}
	if err := h.cfg.Sync.SyncNow(rec.UserID, rec.ID); err != nil {
		return err // a failed store is 503 in httpx
	}
	rec, err = h.cfg.Records.Get(rec.UserID, rec.ID)
	if err != nil {
		return err
	}
	httpx.Write(w, r, http.StatusAccepted, opSync, httpx.F("result", h.view(rec)))
	return nil
}

// items returns the item store, or an error for a deployment wired
// without one.
func (h *Handlers) items() (*items.Store, error) {
	if h.cfg.Items == nil {
		return nil, httpx.Internal(errors.New("api: item routes without an item store"))
	}
	return h.cfg.Items, nil
}

// ListItems serves GET /v1/items: the caller's items, newest first, with
// the filters integrationId (record ids, comma-separated), inIds and
// ninIds, a page size limit (default 50, at most 200) and cursor, the
// nextCursor of the previous page. nextCursor is present when more follow.
func (h *Handlers) ListItems() http.Handler { return endpoint(opItemsList, h.listItems) }

func (h *Handlers) listItems(w http.ResponseWriter, r *http.Request) error {
	userID, err := h.userID(r)
	if err != nil {
		return err
	}
	store, err := h.items()
	if err != nil {
		return err
	}
	q, err := parseItemQuery(r)
	if err != nil {
		return err
	}
	q.UserID = userID
	// Only the caller's live records: what integrationId names among them.
	live := make(map[string]bool)
	for _, rec := range h.cfg.Records.ForUser(userID) {
		if len(q.Records) == 0 || q.Records[rec.ID] {
			live[rec.ID] = true
		}
	}
	q.Records = live
	page, more, err := store.Page(q)
	if err != nil {
		return httpx.Internal(err)
	}
	views := make([]items.View, len(page))
	for i := range page {
		if views[i], err = store.View(&page[i]); err != nil {
			return httpx.Internal(err)
		}
	}
	fields := []httpx.Field{httpx.F("results", views), httpx.F("count", len(views))}
	if more {
		last := page[len(page)-1]
		fields = append(fields, httpx.F("nextCursor", items.Cursor{Date: last.Date, ID: last.ID}.String()))
	}
	httpx.Write(w, r, http.StatusOK, opItemsList, fields...)
	return nil
}

// parseItemQuery reads GET /v1/items's query; a bad value is a 400 naming
// the parameter.
func parseItemQuery(r *http.Request) (items.Query, error) {
	vals := r.URL.Query()
	f, err := httpx.ParseFilter(vals)
	if err != nil {
		return items.Query{}, err
	}
	q := items.Query{Limit: items.DefaultLimit}
	q.InIDs, q.NinIDs = f.IDs()
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
		if err != nil || n < 1 || n > items.MaxLimit {
			details = append(details, httpx.FieldError{Field: "limit", Message: "must be a whole number from 1 to " + strconv.Itoa(items.MaxLimit)})
		}
		q.Limit = n
	}
	if v := vals.Get("cursor"); v != "" {
		c, err := items.ParseCursor(v)
		if err != nil {
			details = append(details, httpx.FieldError{Field: "cursor", Message: "is not a cursor this service made"})
		}
		q.After = &c
	}
	if details != nil {
		return items.Query{}, httpx.Invalid(details...)
	}
	return q, nil
}

// ownItem returns the item store and the caller's live item that the
// path's {id} names: ErrNotFound for an id that is not a UUID, another
// user's item, or the item of a record being disconnected.
func (h *Handlers) ownItem(r *http.Request) (*items.Store, items.ItemRecord, error) {
	userID, err := h.userID(r)
	if err != nil {
		return nil, items.ItemRecord{}, err
	}
	store, err := h.items()
	if err != nil {
		return nil, items.ItemRecord{}, err
	}
	id := r.PathValue("id")
	if !uuid.Valid(id) {
		return nil, items.ItemRecord{}, items.ErrNotFound
	}
	it, err := store.Get(userID, id)
	if err != nil {
		return nil, items.ItemRecord{}, err
	}
	if _, err := h.cfg.Records.Get(userID, it.RecordID); err != nil {
		return nil, items.ItemRecord{}, items.ErrNotFound // the item of a record being disconnected
	}
	return store, it, nil
}

// GetItem serves GET /v1/items/{id}: the caller's item with its extracted
// text, read from its sealed content file. An item whose file is gone
// answers 410.
func (h *Handlers) GetItem() http.Handler { return endpoint(opItemGet, h.getItem) }

func (h *Handlers) getItem(w http.ResponseWriter, r *http.Request) error {
	store, it, err := h.ownItem(r)
	if err != nil {
		return err
	}
	text, err := store.Text(&it)
	switch {
	case errors.Is(err, items.ErrContentMissing):
		h.log.Warn("item content file missing", "item_id", it.ID, "record_id", it.RecordID)
		return err
	case err != nil:
		return httpx.Internal(err)
	}
	view, err := store.View(&it)
	if err != nil {
		return httpx.Internal(err)
	}
	httpx.One(w, r, opItemGet, items.Detail{View: view, Text: text})
	return nil
}
