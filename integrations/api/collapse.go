package api

import (
	"context"

	"searchsvc/integrations/search"
)

// collapseScan bounds the results a collapse=thread search groups into
// conversations: the best this many, in pages of search.MaxLimit.
const collapseScan = 1000

// collapsed answers req with one hit per conversation, its best, in the
// order of those best hits (docs/search.md#conversations): the first
// req.Limit conversations among the best collapseScan results. Total is
// the number of conversations among those, a lower bound when more
// results lay beyond them; there is no next page.
func (h *Handlers) collapsed(ctx context.Context, userID string, req search.Request) (search.Result, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = search.DefaultLimit
	}
	req.Limit, req.Cursor = search.MaxLimit, ""
	var out search.Result
	seen := map[string]bool{}
	groups := 0
	for scanned := 0; scanned < collapseScan; {
		res, err := h.cfg.Search.SearchContext(ctx, userID, req)
		if err != nil {
			return search.Result{}, err
		}
		out.Relaxed = out.Relaxed || res.Relaxed
		for _, hit := range res.Hits {
			k := conversationKey(&hit)
			if seen[k] {
				continue
			}
			seen[k] = true
			groups++
			if len(out.Hits) < limit {
				out.Hits = append(out.Hits, hit)
			}
		}
		scanned += len(res.Hits)
		if res.NextCursor == "" || len(res.Hits) == 0 {
			out.Total = groups
			return out, nil
		}
		req.Cursor = res.NextCursor
	}
	out.Total, out.TotalIsLowerBound = groups, true
	return out, nil
}

// conversationKey groups a hit with the others of its conversation: its
// record and thread, or the item alone when it has no thread.
func conversationKey(hit *search.Hit) string {
	if hit.Stored.Thread == "" {
		return "i" + hit.ID
	}
	return "t" + hit.RecordID + "\x00" + hit.Stored.Thread
}

// threadCount returns how many of the record's items the index holds in
// the thread: the size of the conversation a collapsed result stands
// for. An error counts the result alone.
func (h *Handlers) threadCount(ctx context.Context, userID, recordID, thread string) int {
	if thread == "" {
		return 1
	}
	res, err := h.cfg.Search.SearchContext(ctx, userID, search.Request{
		Query: search.Term{Field: search.FieldTitle, Text: search.RefTerm(thread)},
		Limit: 1, Sort: search.SortDate, RecordID: recordID,
	})
	if err != nil || res.Total < 1 {
		return 1
	}
	return res.Total
}
