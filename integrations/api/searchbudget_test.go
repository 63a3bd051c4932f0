package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations/api"
	"searchsvc/integrations/search"
)

// budgetSearcher answers every search with err, and tells deadline how
// long the route gave it.
type budgetSearcher struct {
	err      error
	deadline chan time.Duration
}

func (s budgetSearcher) SearchContext(ctx context.Context, _ string, _ search.Request) (search.Result, error) {
	d, ok := ctx.Deadline()
	if !ok {
		s.deadline <- -1
	} else {
		s.deadline <- time.Until(d)
	}
	return search.Result{}, s.err
}

func (budgetSearcher) Delete(string, ...string) error { return nil }

// TestSearchRouteTooBroad: a query over the index's work budget is 400
// query_too_broad with a sentence saying what to do, and the search ran
// under the route's deadline of SearchTimeout. The route gave the index
// no deadline and no answer in words for a spent budget (a 500).
func TestSearchRouteTooBroad(t *testing.T) {
	f := newSyncFixture(t)
	bs := budgetSearcher{err: fmt.Errorf("part 2: %w", search.ErrTooBroad), deadline: make(chan time.Duration, 1)}
	h, err := api.New(api.Config{
		Registry: f.reg, Records: f.records, Items: f.syncer.Items(), Search: bs, Sync: f.syncer,
		SearchTimeout: time.Hour,
		UserID:        testUser,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/search", h.Search())
	sf := &searchFixture{syncFixture: f, srv: newStack(t, mux, httpx.Config{})}
	code, body := sf.search("u1", "q=al*+OR+be*")
	e, _ := body["error"].(map[string]any)
	details, _ := e["details"].([]any)
	if code != 400 || e["code"] != "query_too_broad" || e["message"] != "the query matches too much of the index to rank" || len(details) != 1 {
		t.Fatalf("got %d %v, want 400 query_too_broad with one detail", code, body)
	}
	if d, _ := details[0].(map[string]any); d["field"] != "q" || d["message"] != "add a word, or narrow it with a field, kind: or a date" {
		t.Errorf("detail: got %v", d)
	}
	// An hour less the moments the request took: more than 59 minutes,
	// whatever the machine's speed.
	if d := <-bs.deadline; d < 59*time.Minute || d > time.Hour {
		t.Errorf("the search's deadline: got %v from now, want SearchTimeout's hour", d)
	}
}

// TestSearchRouteStopped: a search whose request ended while the real
// index ran it is answered 503 search_timeout in words, not 500, and
// the index is whole afterwards. The route ran the search to its end.
func TestSearchRouteStopped(t *testing.T) {
	f := newSearchFixture(t)
	if err := f.ix.Add("u1", search.Doc{ID: "d1", Kind: "email", Text: "alpha beta", Date: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequestWithContext(ctx, "GET", "/v1/search?q=alpha", nil)
	r.Header.Set("X-Test-User", "u1")
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	var body struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(w.Body.Bytes(), &body)
	if w.Code != 503 || body.Error.Code != "search_timeout" ||
		body.Error.Message != "the search took too long and was stopped: narrow the query, or try again" {
		t.Fatalf("got %d %s, want 503 search_timeout", w.Code, w.Body)
	}
	if bad := f.ix.NeedsRebuild(); len(bad) != 0 {
		t.Errorf("a stopped search marked %v for a rebuild", bad)
	}
}
