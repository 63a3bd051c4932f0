package api

import (
	"context"

	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
)

// collapseScan bounds the results a collapse=thread search groups into
// conversations: the best this many, in pages of search.MaxLimit.
const collapseScan = 1000

// collapsed answers req with one hit per conversation, its best, in the
// order of those best hits (docs/search.md#conversations): the first
// req.Limit conversations among the best collapseScan results, with the
// size of each by hit id. Hits are grouped by their thread first; then
// each conversation answered is followed through its links (as GET
// /v1/items/{id}/thread does), so that a reply whose thread names only
// its parent (In-Reply-To without References) joins the conversation it
// belongs to. Total is the number of conversations among those results,
// a lower bound when more results lay beyond them; there is no next page.
func (h *Handlers) collapsed(ctx context.Context, store *items.Store, userID string, req search.Request) (search.Result, map[string]int, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = search.DefaultLimit
	}
	req.Limit, req.Cursor = search.MaxLimit, ""
	var out search.Result
	var firsts []search.Hit // the best hit of each thread, in order
	seen := map[string]bool{}
	for scanned := 0; scanned < collapseScan; {
		res, err := h.cfg.Search.SearchContext(ctx, userID, req)
		if err != nil {
			return search.Result{}, nil, err
		}
		out.Relaxed = out.Relaxed || res.Relaxed
		for _, hit := range res.Hits {
			if k := conversationKey(&hit); !seen[k] {
				seen[k] = true
				firsts = append(firsts, hit)
			}
		}
		scanned += len(res.Hits)
		if res.NextCursor == "" || len(res.Hits) == 0 {
			break
		}
		req.Cursor = res.NextCursor
		out.TotalIsLowerBound = scanned >= collapseScan
	}
	hits, sizes, joined, err := h.conversations(ctx, store, userID, firsts, limit)
	if err != nil {
		return search.Result{}, nil, err
	}
	out.Hits, out.Total = hits, len(firsts)-joined
	return out, sizes, nil
}

// conversations takes the first limit of firsts that are not in the
// conversation of one taken before, with each one's conversation size by
// hit id; joined counts those left out so.
func (h *Handlers) conversations(ctx context.Context, store *items.Store, userID string, firsts []search.Hit, limit int) (hits []search.Hit, sizes map[string]int, joined int, err error) {
	sizes = map[string]int{}
	in := map[string]bool{} // the items of the conversations taken
	for _, hit := range firsts {
		if len(hits) >= limit {
			break
		}
		if in[hit.ID] {
			joined++
			continue
		}
		in[hit.ID] = true
		sizes[hit.ID] = 1
		hits = append(hits, hit)
		if hit.Stored.Thread == "" || store == nil {
			continue
		}
		it, err := store.Get(userID, hit.ID)
		if err != nil {
			continue // removed since: the answer leaves it out
		}
		m, err := store.OpenMeta(&it)
		if err != nil {
			continue
		}
		members, err := h.conversation(ctx, store, &it, &m)
		if err != nil {
			return nil, nil, 0, err
		}
		for _, o := range members {
			in[o.ID] = true
		}
		sizes[hit.ID] = len(members)
	}
	return hits, sizes, joined, nil
}

// conversationKey groups a hit with the others of its conversation: its
// record and thread, or the item alone when it has no thread.
func conversationKey(hit *search.Hit) string {
	if hit.Stored.Thread == "" {
		return "i" + hit.ID
	}
	return "t" + hit.RecordID + "\x00" + hit.Stored.Thread
}
