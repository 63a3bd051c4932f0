package api

import (
	"context"
	"net/http"
	"strconv"

	"searchsvc/httpx"
	"searchsvc/integrations/search"
)

const opSuggest = "item.suggest"

// completer offers completions of the word being typed;
// *search.Index has it. A Searcher without it offers none.
type completer interface {
	Complete(ctx context.Context, userID, q string) ([]search.Completion, error)
}

// Completion is one suggestion of GET /v1/search/suggest.
type Completion struct {
	Kind  string `json:"kind"`  // from, title or word
	Text  string `json:"text"`  // what the list shows: plain text
	Query string `json:"query"` // the query it stands for
}

// Suggest serves GET /v1/search/suggest: up to 8 completions of the last
// word of q (docs/search.md#suggestions-while-typing), senders, then
// titles, then frequent words, all of the caller's own items and read
// from the index alone, with bounded work. q is at most
// search.MaxQueryBytes; an empty q, or one whose last word is not a
// plain word being typed, has none. It runs within the caller's share of
// searches, as GET /v1/search does, and logs neither q nor a completion.
func (h *Handlers) Suggest() http.Handler { return endpoint(opSuggest, h.suggest) }

func (h *Handlers) suggest(w http.ResponseWriter, r *http.Request) error {
	userID, err := h.userID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query().Get("q")
	if len(q) > search.MaxQueryBytes {
		return invalidQuery("the query is longer than " + strconv.Itoa(search.MaxQueryBytes) + " bytes")
	}
	out := []Completion{}
	if c, ok := h.cfg.Search.(completer); ok && q != "" {
		leave, err := h.gate.enter(r.Context(), userID)
		if err != nil {
			return err
		}
		defer leave()
		ctx, cancel := context.WithTimeout(r.Context(), h.cfg.SearchTimeout)
		defer cancel()
		cs, err := c.Complete(ctx, userID, q)
		if err != nil {
			return searchError(err)
		}
		for _, c := range cs {
			out = append(out, Completion{Kind: c.Kind, Text: c.Text, Query: c.Query})
		}
	}
	httpx.Write(w, r, http.StatusOK, opSuggest, httpx.F("completions", out), httpx.F("count", len(out)))
	return nil
}
