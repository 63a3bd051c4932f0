package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
	"searchsvc/storage/uuid"
)

const opSearch = "item.search"

// Searcher is the search index as the search route uses it;
// *search.Index has it. The route only reads it: a search writes nothing.
type Searcher interface {
	Search(userID string, req search.Request) (search.Result, error)
}

// SearchResult is one result of GET /v1/search.
type SearchResult struct {
	ID          string     `json:"id"`
	RecordID    string     `json:"recordId"`
	Integration string     `json:"integration"`
	Kind        string     `json:"kind"`
	Title       string     `json:"title"`
	From        string     `json:"from"`
	Date        time.Time  `json:"date"`
	Score       float64    `json:"score"`
	Snippet     []Fragment `json:"snippet"`
	// Matched are the words of the item's text the query matched, as
	// written there (search.Highlight): an item page marks them.
	Matched []string `json:"matched"`
}

// Fragment is a piece of a result's snippet: plain text, never HTML;
// Match marks a word the query matched.
type Fragment struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

func fragments(fs []search.Fragment) []Fragment {
	out := make([]Fragment, len(fs))
	for i, f := range fs {
		out[i] = Fragment{Text: f.Text, Match: f.Match}
	}
	return out
}

// Search serves GET /v1/search: the caller's items matching the query q
// (the language of docs/search.md, "The query language"), one page of
// results ranked by relevance (or newest first with sort=date), each with
// a snippet of its text around the best matching passage and the words
// of its text the query matched (matched), all from the index's stored
// fields: a search opens no content file. integrationId
// keeps one record's items, inIds and ninIds filter by item id, limit
// (1 to 100, default 20) and cursor page. A query that does not parse is
// 400 invalid_query with a detail saying what and where. A hit the item
// store no longer has (a removal the index has not caught up on: the
// indexer's catch-up is made due, Config.Stale), or whose
// record is being disconnected, or whose metadata does not open, is left
// out of the page and of total; a page can then hold fewer than limit
// results while nextCursor says more follow. A user runs a bounded share
// of searches at once (Config.SearchesPerUser, with SearchQueue waiting);
// one beyond it is 429 too_many_searches with Retry-After.
func (h *Handlers) Search() http.Handler { return endpoint(opSearch, h.search) }

func (h *Handlers) search(w http.ResponseWriter, r *http.Request) error {
	userID, err := h.userID(r)
	if err != nil {
		return err
	}
	store, err := h.items()
	if err != nil {
		return err
	}
	if h.cfg.Search == nil {
		return httpx.Internal(errors.New("api: the search route without an index"))
	}
	req, err := parseSearch(r)
	if err != nil {
		return err
	}
	// The whole search, snippets included, runs within the user's share.
	leave, err := h.gate.enter(r.Context(), userID)
	if err != nil {
		return err
	}
	defer leave()
	res, err := h.cfg.Search.Search(userID, req)
	switch {
	case errors.Is(err, search.ErrBadCursor):
		return httpx.Invalid(httpx.FieldError{Field: "cursor", Message: "is not a cursor this service made for this query and sort"})
	case err != nil:
		return httpx.Internal(err)
	}
	results := make([]SearchResult, 0, len(res.Hits))
	connected := map[string]bool{}
	stale := 0
	dropped := 0 // hits left out: not counted in total either
	for _, hit := range res.Hits {
		it, err := store.Get(userID, hit.ID)
		if err != nil {
			stale++
			dropped++
			continue
		}
		// Hits share few records: each is asked once a search.
		live, seen := connected[it.RecordID]
		if !seen {
			_, err := h.cfg.Records.Get(userID, it.RecordID)
			live = err == nil
			connected[it.RecordID] = live
		}
		if !live {
			dropped++ // a record being disconnected: its items are going
			continue
		}
		sr, ok := h.answer(store, &it, hit, req.Query)
		if !ok {
			dropped++
			continue
		}
		results = append(results, sr)
	}
	if stale > 0 {
		// The index found items the store no longer has: a removal it
		// missed. The indexer's catch-up deletes them; a GET writes
		// nothing.
		h.log.Warn("search found removed items", "user_id", userID, "items", stale)
		if h.cfg.Stale != nil {
			h.cfg.Stale(userID)
		}
	}
	fields := []httpx.Field{
		httpx.F("results", results), httpx.F("count", len(results)),
		httpx.F("total", max(res.Total-dropped, len(results))), httpx.F("totalIsLowerBound", res.TotalIsLowerBound),
	}
	if res.NextCursor != "" {
		fields = append(fields, httpx.F("nextCursor", res.NextCursor))
	}
	httpx.Write(w, r, http.StatusOK, opSearch, fields...)
	return nil
}

// answer is the result of one hit: its title, sender and snippet from
// the index's stored fields (docs/search.md, "Answers from the index"),
// opening nothing of the item. A hit of an index written before stored
// fields has none: its answer opens the item's metadata and text, as
// every answer did before. false: the item does not open, and is left
// out.
func (h *Handlers) answer(store *items.Store, it *items.ItemRecord, hit search.Hit, q search.Node) (SearchResult, bool) {
	title, from, text := hit.Stored.Title, hit.Stored.From, hit.Stored.Text
	if !hit.HasStored {
		m, err := store.OpenMeta(it)
		if err != nil {
			// One item that does not open (damage the key check did
			// not see) must not fail the whole search: leave it out.
			h.log.Error("open a search result's metadata", "item_id", it.ID, "err", err)
			return SearchResult{}, false
		}
		title, from = m.Title, m.From
		if text, err = store.Text(it); err != nil && !errors.Is(err, items.ErrContentMissing) {
			h.log.Error("read a search result's text", "item_id", it.ID, "err", err)
			text = "" // the result without its snippet
		}
	}
	snippet, matched := search.Highlight(text, q)
	return SearchResult{
		ID: it.ID, RecordID: it.RecordID, Integration: it.Integration, Kind: hit.Kind,
		Title: title, From: from, Date: it.Date, Score: hit.Score,
		Snippet: fragments(snippet), Matched: matched,
	}, true
}

// invalidQuery is the 400 for a query that does not parse.
func invalidQuery(detail string) error {
	e := httpx.NewError(http.StatusBadRequest, "invalid_query", "invalid query")
	e.Details = []httpx.FieldError{{Field: "q", Message: detail}}
	return e
}

// parseSearch reads GET /v1/search's parameters; a bad one is a 400
// naming it.
func parseSearch(r *http.Request) (search.Request, error) {
	vals := r.URL.Query()
	q := vals.Get("q")
	if len(q) > search.MaxQueryBytes {
		return search.Request{}, invalidQuery("the query is longer than " + strconv.Itoa(search.MaxQueryBytes) + " bytes")
	}
	if strings.TrimSpace(q) == "" {
		return search.Request{}, invalidQuery("empty query")
	}
	node, err := search.Parse(q)
	if err != nil {
		var qe *search.QueryError
		if errors.As(err, &qe) {
			return search.Request{}, invalidQuery(qe.Error())
		}
		return search.Request{}, invalidQuery("the query cannot be read")
	}
	req := search.Request{Query: node, Limit: search.DefaultLimit, Sort: search.SortRelevance}
	f, err := httpx.ParseFilter(vals)
	if err != nil {
		return search.Request{}, err
	}
	req.InIDs, req.NinIDs = f.IDs()
	var details []httpx.FieldError
	if v := vals.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > search.MaxLimit {
			details = append(details, httpx.FieldError{Field: "limit", Message: "must be a whole number from 1 to " + strconv.Itoa(search.MaxLimit)})
		}
		req.Limit = n
	}
	switch v := vals.Get("sort"); v {
	case "", search.SortRelevance:
	case search.SortDate:
		req.Sort = search.SortDate
	default:
		details = append(details, httpx.FieldError{Field: "sort", Message: "must be relevance or date"})
	}
	if v := vals.Get("integrationId"); v != "" {
		if !uuid.Valid(v) {
			details = append(details, httpx.FieldError{Field: "integrationId", Message: "is not a user-integration id"})
		}
		req.RecordID = v
	}
	req.Cursor = vals.Get("cursor")
	if details != nil {
		return search.Request{}, httpx.Invalid(details...)
	}
	return req, nil
}
