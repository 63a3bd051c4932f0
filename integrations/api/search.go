package api

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
	// SearchContext answers req, or stops with search.ErrStopped when
	// ctx ends, or refuses a query over its work budget with
	// search.ErrTooBroad.
	SearchContext(ctx context.Context, userID string, req search.Request) (search.Result, error)
}

// suggester offers a "did you mean" for a query whose words the user's
// index does not hold; *search.Index has it. A Searcher without it
// answers without suggestions.
type suggester interface {
	Suggest(userID, q string) (string, error)
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
	// Source names the connection the item comes from, beyond its
	// integration: a feed entry's feed title, else the record's label
	// (an IMAP mailbox's label or host); absent when there is neither.
	Source string `json:"source,omitempty"`
	// ThreadID names an email's conversation (items.View.ThreadID).
	ThreadID string `json:"threadId,omitempty"`
	// ThreadCount, with collapse=thread, is how many items the
	// conversation this result stands for holds.
	ThreadCount int `json:"threadCount,omitempty"`
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
// (docs/search.md#the-query-language), one page of
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
// results while nextCursor says more follow. The first page holds
// suggestion when a word of q matches nothing in the user's index and one
// of its words is near it: q with that word replaced (a "did you mean").
// When every word of a query of 3 or more finds fewer than 5 items, the
// page holds those matching most of them, with relaxed: true.
// A user runs a bounded share
// of searches at once (Config.SearchesPerUser, with SearchQueue waiting);
// one beyond it is 429 too_many_searches with Retry-After. A query that
// would read more of the index than one query may is 400 query_too_broad,
// and one still running after Config.SearchTimeout is 503
// search_timeout: never a partial page.
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
	collapse := r.URL.Query().Get("collapse") == "thread"
	req.Relax = true // docs/search.md#questions-and-long-queries
	// The whole search, snippets included, runs within the user's share.
	leave, err := h.gate.enter(r.Context(), userID)
	if err != nil {
		return err
	}
	defer leave()
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.SearchTimeout)
	defer cancel()
	var (
		res   search.Result
		sizes map[string]int // a collapsed answer's conversation sizes
	)
	if collapse {
		res, sizes, err = h.collapsed(ctx, store, userID, req)
	} else {
		res, err = h.cfg.Search.SearchContext(ctx, userID, req)
	}
	if err != nil {
		return searchError(err)
	}
	results, stale, dropped := h.results(store, userID, res.Hits, req, sizes)
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
	if res.Relaxed {
		fields = append(fields, httpx.F("relaxed", true))
	}
	// The first page says "did you mean" for a word the index lacks
	// (docs/search.md#misspelled-words); later pages are of the query
	// the person chose to keep.
	if sg, ok := h.cfg.Search.(suggester); ok && req.Cursor == "" {
		s, err := sg.Suggest(userID, r.URL.Query().Get("q"))
		if err != nil {
			h.log.Error("suggest a spelling", "user_id", userID, "err", err)
		} else if s != "" {
			fields = append(fields, httpx.F("suggestion", s))
		}
	}
	httpx.Write(w, r, http.StatusOK, opSearch, fields...)
	return nil
}

// results are the page's hits as the answer shows them; stale counts
// those the item store no longer has, dropped every one left out (not
// counted in total either). sizes, for a collapsed answer, are its
// conversations' sizes by hit id (threadCount).
func (h *Handlers) results(store *items.Store, userID string, hits []search.Hit, req search.Request, sizes map[string]int) (results []SearchResult, stale, dropped int) {
	if len(hits) < snippetsShared || runtime.GOMAXPROCS(0) < 2 || !h.gate.alone() {
		return h.someResults(store, userID, hits, req, sizes)
	}
	// A long page while no other search runs: a spare core builds the
	// second half's snippets, as the index shares a heavy search's parts
	// (docs/search.md#errors-and-bounds).
	half := len(hits) / 2
	var rest []SearchResult
	var restStale, restDropped int
	var panicked any
	var wg sync.WaitGroup
	// A panic building the second half is this request's (httpx answers
	// 500), not the end of the process; and the request waits for that
	// half whatever becomes of its own.
	defer wg.Wait()
	wg.Go(func() {
		defer func() { panicked = recover() }()
		rest, restStale, restDropped = h.someResults(store, userID, hits[half:], req, sizes)
	})
	results, stale, dropped = h.someResults(store, userID, hits[:half], req, sizes)
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	return append(results, rest...), stale + restStale, dropped + restDropped
}

// snippetsShared is the results a page must have before a spare core
// builds half its snippets: a page of 100 takes a millisecond or two, one
// of 20 less than starting a goroutine saves.
const snippetsShared = 40

// someResults is results for some of a page's hits, in order.
func (h *Handlers) someResults(store *items.Store, userID string, hits []search.Hit, req search.Request, sizes map[string]int) (results []SearchResult, stale, dropped int) {
	results = make([]SearchResult, 0, len(hits))
	recs := searchRecords{h: h, userID: userID, seen: map[string]searchRecord{}}
	y := yielder{every: yieldResults, yield: h.yield}
	hl := search.NewHighlighter(req.Query)
	for _, hit := range hits {
		y.step()
		one, ok, gone := h.result(store, userID, hit, hl, &recs)
		if gone {
			stale++
		}
		if !ok {
			dropped++
			continue
		}
		if sizes != nil {
			one.ThreadCount = max(1, sizes[hit.ID])
		}
		results = append(results, one)
	}
	return results, stale, dropped
}

// result is one hit as the answer shows it: ok is false for a hit left
// out, gone true for one the item store no longer has.
func (h *Handlers) result(store *items.Store, userID string, hit search.Hit, hl *search.Highlighter, recs *searchRecords) (r SearchResult, ok, gone bool) {
	// What memory holds of the item says it is live and gives its ids
	// and date; its record is read from the log (and its metadata
	// opened) only for what the index does not keep: a result without
	// stored fields, or the source of a record whose items name their own.
	it, err := store.Brief(userID, hit.ID)
	if err != nil {
		return SearchResult{}, false, true
	}
	rec, live := recs.get(it.RecordID)
	if !live {
		return SearchResult{}, false, false // a record being disconnected: its items are going
	}
	if !hit.HasStored || rec.perItem {
		if it, err = store.Get(userID, hit.ID); err != nil {
			return SearchResult{}, false, true
		}
	}
	if r, ok = h.answer(store, &it, hit, hl); !ok {
		return SearchResult{}, false, false
	}
	r.Source = rec.label
	if rec.perItem {
		// A record following several sources (a feed list): each item
		// names its own, in its sealed metadata.
		if m, err := store.OpenMeta(&it); err == nil && m.Source != "" {
			r.Source = m.Source
		}
	}
	return r, true, false
}

// searchError is the answer to a search the index did not answer: a
// cursor of another query, a query over the work budget, a search that
// ran out of time.
func searchError(err error) error {
	switch {
	case errors.Is(err, search.ErrBadCursor):
		return httpx.Invalid(httpx.FieldError{Field: "cursor", Message: "is not a cursor this service made for this query and sort"})
	case errors.Is(err, search.ErrTooBroad):
		e := httpx.NewError(http.StatusBadRequest, "query_too_broad", "the query matches too much of the index to rank")
		e.Details = []httpx.FieldError{{Field: "q", Message: "add a word, or narrow it with a field, kind: or a date"}}
		return e
	case errors.Is(err, search.ErrStopped):
		// The deadline passed, or the client left (then nobody reads
		// this, and no 500 is logged for it).
		return &httpx.Error{Status: http.StatusServiceUnavailable, Code: "search_timeout",
			Message: "the search took too long and was stopped: narrow the query, or try again"}
	}
	return httpx.Internal(err)
}

// yieldResults is how many results' snippets the search route builds
// between two yields of its goroutine: about a millisecond's work with
// a feed entry's text.
const yieldResults = 8

// yielder yields the processor (runtime.Gosched) once every every steps.
// A page of 100 snippets is half a heavy query's work, and Go preempts a
// running goroutine only after 10 ms: without yields, another user's
// light query woken behind it waited that long, many times over on two
// cores (docs/search.md#errors-and-bounds). The index yields likewise while
// it reads postings.
type yielder struct {
	every, n int
	yield    func()
}

func (y *yielder) step() {
	if y.n++; y.n >= y.every {
		y.n = 0
		y.yield()
	}
}

// answer is the result of one hit: its title, sender and snippet from
// the index's stored fields (docs/search.md#answers-from-the-index),
// opening nothing of the item. A hit of an index written before stored
// fields has none: its answer opens the item's metadata and text, as
// every answer did before. false: the item does not open, and is left
// out.
func (h *Handlers) answer(store *items.Store, it *items.ItemRecord, hit search.Hit, hl *search.Highlighter) (SearchResult, bool) {
	title, from, text, thread := hit.Stored.Title, hit.Stored.From, hit.Stored.Text, hit.Stored.Thread
	if !hit.HasStored {
		m, err := store.OpenMeta(it)
		if err != nil {
			// One item that does not open (damage the key check did
			// not see) must not fail the whole search: leave it out.
			h.log.Error("open a search result's metadata", "item_id", it.ID, "err", err)
			return SearchResult{}, false
		}
		title, from, thread = m.Title, m.From, m.Thread
		if text, err = store.Text(it); err != nil && !errors.Is(err, items.ErrContentMissing) {
			h.log.Error("read a search result's text", "item_id", it.ID, "err", err)
			text = "" // the result without its snippet
		}
	}
	snippet, matched := hl.Highlight(text)
	return SearchResult{
		ID: it.ID, RecordID: it.RecordID, Integration: it.Integration, Kind: hit.Kind,
		Title: title, From: from, Date: it.Date, Score: hit.Score,
		Snippet: fragments(snippet), Matched: matched, ThreadID: thread,
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
	switch vals.Get("collapse") {
	case "":
	case "thread":
		if req.Cursor != "" {
			details = append(details, httpx.FieldError{Field: "cursor", Message: "collapse=thread answers one page: there is no next one"})
		}
	default:
		details = append(details, httpx.FieldError{Field: "collapse", Message: "must be thread"})
	}
	if details != nil {
		return search.Request{}, httpx.Invalid(details...)
	}
	return req, nil
}

// searchRecord is what a search's results need of a record: whether it
// is still connected, the label naming it, and whether its items name
// their own source (Definition.Details: a record following several).
type searchRecord struct {
	live, perItem bool
	label         string
}

// searchRecords asks each record of a search's hits once.
type searchRecords struct {
	h      *Handlers
	userID string
	seen   map[string]searchRecord
}

func (l *searchRecords) get(recordID string) (searchRecord, bool) {
	if v, ok := l.seen[recordID]; ok {
		return v, v.live
	}
	var v searchRecord
	if rec, err := l.h.cfg.Records.Get(l.userID, recordID); err == nil {
		v.live = true
		if def, ok := l.h.cfg.Registry.Get(rec.Integration); ok {
			v.perItem = def.Details != nil
			if def.Describe != nil {
				v.label = l.h.view(rec).Label
			}
		}
	}
	l.seen[recordID] = v
	return v, v.live
}
