package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"searchsvc/httpx"
	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
)

const opThread = "item.readThread"

// MaxThread is the most items GET /v1/items/{id}/thread answers with.
const MaxThread = 200

// threadRounds bounds how many times the thread route follows the links
// of the items it found to further items: each round reaches one more
// generation of a conversation whose messages name only their parent.
const threadRounds = 8

// threadKeysPerQuery bounds the links one index query asks for.
const threadKeysPerQuery = 32

// GetThread serves GET /v1/items/{id}/thread: the items of the caller's
// item's conversation (docs/search.md#conversations), oldest first, in
// the list shape of GET /v1/items, at most MaxThread. The conversation
// is every item of the same record linked to this one through message
// ids (its own, the one it replies to, those it references; Gmail's
// thread id), followed from item to item, so a reply that arrived
// before its parent joins it once the parent is there. An item of no
// conversation answers with itself alone.
func (h *Handlers) GetThread() http.Handler { return endpoint(opThread, h.getThread) }

func (h *Handlers) getThread(w http.ResponseWriter, r *http.Request) error {
	store, it, err := h.ownItem(r)
	if err != nil {
		return err
	}
	m, err := store.OpenMeta(&it)
	if err != nil {
		return httpx.Internal(err)
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.SearchTimeout)
	defer cancel()
	found, err := h.conversation(ctx, store, &it, &m)
	if err != nil {
		return err
	}
	slices.SortFunc(found, func(a, b items.ItemRecord) int {
		if c := a.Date.Compare(b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	views := make([]items.View, len(found))
	for i := range found {
		if views[i], err = store.View(&found[i]); err != nil {
			return httpx.Internal(err)
		}
	}
	httpx.Write(w, r, http.StatusOK, opThread, httpx.F("results", views), httpx.F("count", len(views)))
	return nil
}

// conversation returns the items linked to it, it included: the links
// of each item found are asked of the index in turn, up to MaxThread
// items and threadRounds rounds.
func (h *Handlers) conversation(ctx context.Context, store *items.Store, it *items.ItemRecord, m *items.Meta) ([]items.ItemRecord, error) {
	found := []items.ItemRecord{*it}
	if h.cfg.Search == nil || (m.Thread == "" && len(m.Refs) == 0) {
		return found, nil
	}
	seen := map[string]bool{it.ID: true}
	asked := map[string]bool{}
	next := linksOf(m, asked)
	for round := 0; round < threadRounds && len(next) > 0 && len(found) < MaxThread; round++ {
		ids, err := h.linked(ctx, it.UserID, it.RecordID, next)
		if err != nil {
			return nil, err
		}
		next = nil
		for _, id := range ids {
			if seen[id] || len(found) >= MaxThread {
				continue
			}
			seen[id] = true
			o, err := store.Get(it.UserID, id)
			if err != nil {
				continue // removed since the index saw it
			}
			om, err := store.OpenMeta(&o)
			if err != nil {
				h.log.Error("open a conversation item's metadata", "item_id", id, "err", err)
				continue
			}
			found = append(found, o)
			next = append(next, linksOf(&om, asked)...)
		}
	}
	return found, nil
}

// linksOf returns m's thread and links not asked yet, marking them.
func linksOf(m *items.Meta, asked map[string]bool) []string {
	var out []string
	for _, k := range append([]string{m.Thread}, m.Refs...) {
		if k != "" && !asked[k] {
			asked[k] = true
			out = append(out, k)
		}
	}
	return out
}

// linked returns the ids of the record's items indexed under any of keys.
func (h *Handlers) linked(ctx context.Context, userID, recordID string, keys []string) ([]string, error) {
	var ids []string
	for len(keys) > 0 {
		n := min(len(keys), threadKeysPerQuery)
		or := search.Or{}
		for _, k := range keys[:n] {
			or.Children = append(or.Children, search.Term{Field: search.FieldTitle, Text: search.RefTerm(k)})
		}
		keys = keys[n:]
		req := search.Request{Query: or, Limit: search.MaxLimit, Sort: search.SortDate, RecordID: recordID}
		for len(ids) < MaxThread {
			res, err := h.cfg.Search.SearchContext(ctx, userID, req)
			if err != nil {
				return nil, searchError(err)
			}
			for _, hit := range res.Hits {
				ids = append(ids, hit.ID)
			}
			if res.NextCursor == "" {
				break
			}
			req.Cursor = res.NextCursor
		}
	}
	return ids, nil
}
