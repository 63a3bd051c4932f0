package api_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"searchsvc/httpx"
	"searchsvc/integrations/api"
	"searchsvc/integrations/search"
)

// blockingSearcher holds the first search until release gives it leave,
// telling entered whose search it is, and answers the others at once.
type blockingSearcher struct {
	entered chan string
	release chan struct{}
	started *atomic.Bool
}

func (s blockingSearcher) SearchContext(_ context.Context, user string, _ search.Request) (search.Result, error) {
	if s.started.CompareAndSwap(false, true) {
		s.entered <- user
		<-s.release
	}
	return search.Result{Hits: []search.Hit{}}, nil
}

// TestSearchRouteShare: with one search per user and no queue, a user's
// second search while the first runs is answered 429 too_many_searches
// with Retry-After and a sentence, another user's search still runs, and
// the first user is served again once theirs ended. The route ran every
// search at once.
func TestSearchRouteShare(t *testing.T) {
	f := newSyncFixture(t)
	bs := blockingSearcher{entered: make(chan string), release: make(chan struct{}), started: new(atomic.Bool)}
	h, err := api.New(api.Config{
		Registry: f.reg, Records: f.records, Items: f.syncer.Items(), Search: bs, Sync: f.syncer,
		SearchesPerUser: 1, SearchQueue: -1,
		UserID: testUser,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/search", h.Search())
	sf := &searchFixture{syncFixture: f, srv: newStack(t, mux, httpx.Config{})}
	type answer struct {
		code int
		body map[string]any
	}
	first := make(chan answer)
	go func() {
		code, body := sf.search("u1", "q=alpha")
		first <- answer{code, body}
	}()
	if got := <-bs.entered; got != "u1" {
		t.Fatalf("first search entered for %q, want u1", got)
	}
	code, body := sf.search("u1", "q=beta")
	e, _ := body["error"].(map[string]any)
	if code != 429 || e["code"] != "too_many_searches" || e["message"] != "too many searches at once: wait for one to finish" {
		t.Fatalf("a second search of the same user: got %d %v, want 429 too_many_searches", code, body)
	}
	if code, body := sf.search("u2", "q=gamma"); code != 200 {
		t.Errorf("another user while u1's share is full: got %d %v, want 200", code, body)
	}
	bs.release <- struct{}{}
	if a := <-first; a.code != 200 {
		t.Errorf("u1's first search: got %d %v, want 200", a.code, a.body)
	}
	if code, body := sf.search("u1", "q=delta"); code != 200 {
		t.Errorf("u1 after their search ended: got %d %v, want 200", code, body)
	}
}
