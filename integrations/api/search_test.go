package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations/api"
	"searchsvc/integrations/search"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
)

// testIndexer feeds the syncer's changes to a search index, as main's
// indexer does (without its catch-up).
type testIndexer struct{ ix *search.Index }

func (x testIndexer) Index(user string, its []syncer.IndexedItem) {
	docs := make([]search.Doc, len(its))
	for i, it := range its {
		docs[i] = search.Doc{ID: it.ID, RecordID: it.RecordID, Integration: it.Integration, Kind: "email",
			Title: it.Title, From: it.From, To: it.To, Text: it.Text, Date: it.Date, Thread: it.Thread, Refs: it.Refs}
	}
	x.ix.Add(user, docs...)
}
func (x testIndexer) Remove(user string, ids []string)   { x.ix.Delete(user, ids...) }
func (x testIndexer) RemoveRecord(user, recordID string) { x.ix.DeleteRecord(user, recordID) }
func (x testIndexer) RemoveUser(user string)             { x.ix.DeleteUser(user) }

// searchFixture is the sync fixture with a real search index as the
// syncer's Indexer and the search route served.
type searchFixture struct {
	*syncFixture
	ix  *search.Index
	srv http.Handler
	// stale lists the users whose catch-up the route made due
	// (api.Config.Stale).
	stale []string
}

func newSearchFixture(t testing.TB) *searchFixture {
	t.Helper()
	v, err := vault.New(make([]byte, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.Open(search.Config{Dir: t.TempDir(), Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	f := newSyncFixture(t)
	f.indexer = testIndexer{ix}
	f.reopen()
	sf := &searchFixture{syncFixture: f, ix: ix}
	h, err := api.New(api.Config{
		Registry: f.reg, Records: f.records, Items: f.syncer.Items(), Search: ix, Sync: f.syncer,
		Stale:  func(user string) { sf.stale = append(sf.stale, user) },
		Getenv: func(k string) string { return f.env[k] },
		UserID: testUser,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/search", h.Search())
	mux.Handle("GET /v1/items/{id}/thread", h.GetThread())
	mux.Handle("GET /v1/items/{id}", h.GetItem())
	mux.Handle("GET /v1/search/suggest", h.Suggest())
	mux.Handle("DELETE /v1/user-integrations/{id}", h.Delete())
	sf.srv = newStack(t, mux, httpx.Config{})
	return sf
}

// search asks GET /v1/search?query as user.
func (f *searchFixture) search(user, query string) (int, map[string]any) {
	f.t.Helper()
	return f.get(user, "/v1/search?"+query)
}

func resultIDs(body map[string]any) []string {
	var ids []string
	rs, _ := body["results"].([]any)
	for _, r := range rs {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	return ids
}

// TestSearchRoute: the answer's shape, users apart, paging, and a hit the
// item store no longer has left out of the page and of total, and handed
// to the indexer's catch-up: the search itself writes nothing.
func TestSearchRoute(t *testing.T) {
	f := newSearchFixture(t)
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.mail.Fill("ann", 5, start)
	f.mail.Fill("bob", 2, start)
	ann := f.connectManual("u1", "ann")
	f.connectManual("u2", "bob")
	f.runOnce()

	code, body := f.search("u1", "q=confidential&sort=date")
	if code != 200 || body["operation"] != "item.search" || body["count"] != 5.0 || body["total"] != 5.0 ||
		body["totalIsLowerBound"] != false || body["nextCursor"] != nil {
		t.Fatalf("q=confidential: %d %v", code, body)
	}
	first := body["results"].([]any)[0].(map[string]any)
	if first["title"] != "Subject ann number 4" || first["from"] != "sender4@private.example" || first["recordId"] != ann.ID ||
		first["kind"] != "email" || first["date"] != start.Add(4*time.Minute).Format(time.RFC3339) || first["score"] != 0.0 {
		t.Errorf("newest result: %v", first)
	}
	var marked []string
	for _, fr := range first["snippet"].([]any) {
		if m := fr.(map[string]any); m["match"] == true {
			marked = append(marked, m["text"].(string))
		}
	}
	if !slices.Equal(marked, []string{"Confidential"}) {
		t.Errorf("snippet marks %q, want [Confidential]", marked)
	}
	if _, body := f.search("u1", "q="+url.QueryEscape(`"body 3"`)); body["total"] != 1.0 {
		t.Errorf(`q="body 3": %v`, body)
	}
	// Users apart: each finds its own, and only its own.
	if _, body := f.search("u1", "q=bob"); body["total"] != 0.0 {
		t.Errorf("u1 q=bob: %v, want nothing", body)
	}
	if _, body := f.search("u2", "q=bob"); body["total"] != 2.0 {
		t.Errorf("u2 q=bob: %v, want its 2 items", body)
	}

	// Paging: 2, 2, 1, every id once.
	var seen []string
	cursor := ""
	for page := 0; page < 3; page++ {
		q := "q=confidential&sort=date&limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		_, body := f.search("u1", q)
		seen = append(seen, resultIDs(body)...)
		cursor, _ = body["nextCursor"].(string)
		if (page < 2) != (cursor != "") {
			t.Errorf("page %d: nextCursor %q", page, cursor)
		}
	}
	slices.Sort(seen)
	if len(slices.Compact(seen)) != 5 {
		t.Errorf("pages gave %d distinct ids, want 5: %v", len(seen), seen)
	}

	// An item removed from the store without the index hearing of it.
	live := f.liveItems(ann.ID)
	m, err := f.items().OpenMeta(&live[0])
	if err != nil {
		t.Fatal(err)
	}
	ops, _ := f.items().RemoveProviderOps(ann.ID, []string{m.ProviderID}, f.clock.Now())
	if err := f.st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	commits, written := f.st.Stats().Commits, f.ix.Stats().BytesWritten
	_, body = f.search("u1", "q=confidential")
	if body["count"] != 4.0 || body["total"] != 4.0 || slices.Contains(resultIDs(body), live[0].ID) {
		t.Errorf("after a removal the index missed: %v", body)
	}
	if !slices.Equal(f.stale, []string{"u1"}) {
		t.Errorf("catch-ups made due: %v, want [u1]", f.stale)
	}
	if res, _ := f.ix.Search("u1", search.Request{Query: search.Term{Field: search.FieldAny, Text: "confidenti"}}); res.Total != 5 {
		t.Errorf("the search changed the index: total %d, want 5 until the catch-up", res.Total)
	}
	if c, w := f.st.Stats().Commits, f.ix.Stats().BytesWritten; c != commits || w != written {
		t.Errorf("the search wrote: commits %d to %d, index bytes %d to %d", commits, c, written, w)
	}

	// A disconnect removes the record's items from the index at once.
	if code, body := f.delete("u1", ann.ID); code != 200 {
		t.Fatalf("disconnect: %d %v", code, body)
	}
	if res, _ := f.ix.Search("u1", search.Request{Query: search.Term{Field: search.FieldAny, Text: "confidenti"}}); res.Total != 0 {
		t.Errorf("after the disconnect the index holds %d items, want 0", res.Total)
	}
}

func (f *searchFixture) delete(user, recordID string) (int, map[string]any) {
	r := httptest.NewRequest("DELETE", "/v1/user-integrations/"+recordID, nil)
	r.Header.Set("X-Test-User", user)
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	var out map[string]any
	json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

// TestSearchRouteRefuses: every bad parameter is a 400 that says which and
// why; a query is never a 500.
func TestSearchRouteRefuses(t *testing.T) {
	f := newSearchFixture(t)
	long := strings.Repeat("a ", 501)
	for _, tc := range []struct{ query, code, detail string }{
		{"q=", "invalid_query", "empty query"},
		{"q=+++", "invalid_query", "empty query"},
		{"q=" + url.QueryEscape(`"unclosed`), "invalid_query", "unclosed quote at 0"},
		{"q=" + url.QueryEscape("after:2026-13-01"), "invalid_query", `bad date "2026-13-01"`},
		{"q=" + url.QueryEscape("foo:bar"), "invalid_query", `unknown field "foo:" at 0`},
		{"q=" + url.QueryEscape("a OR"), "invalid_query", "OR needs a term on both sides"},
		{"q=" + url.QueryEscape(long), "invalid_query", "longer than 1000 bytes"},
		{"q=a&limit=0", "validation_failed", "limit"},
		{"q=a&limit=101", "validation_failed", "limit"},
		{"q=a&sort=oldest", "validation_failed", "must be relevance or date"},
		{"q=a&integrationId=nope", "validation_failed", "is not a user-integration id"},
		{"q=a&cursor=garbage", "validation_failed", "is not a cursor this service made"},
	} {
		code, body := f.search("u1", tc.query)
		e, _ := body["error"].(map[string]any)
		var details []string
		ds, _ := e["details"].([]any)
		for _, d := range ds {
			d := d.(map[string]any)
			details = append(details, d["field"].(string)+": "+d["message"].(string))
		}
		if code != 400 || e["code"] != tc.code || !strings.Contains(strings.Join(details, "; "), tc.detail) {
			t.Errorf("%s: got %d %v, want 400 %s with %q", tc.query, code, body, tc.code, tc.detail)
		}
	}
}

// TestSearchOpensNoContentFile: with every content file gone, a search
// still answers each result's title, sender and snippet, from the index,
// and writes nothing.
func TestSearchOpensNoContentFile(t *testing.T) {
	f := newSearchFixture(t)
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.mail.Fill("ann", 3, start)
	f.connectManual("u1", "ann")
	f.runOnce()
	if err := os.RemoveAll(filepath.Join(f.dir, "items")); err != nil {
		t.Fatal(err)
	}
	commits, written := f.st.Stats().Commits, f.ix.Stats().BytesWritten
	code, body := f.search("u1", "q=confidential&sort=date")
	if code != 200 || body["count"] != 3.0 {
		t.Fatalf("q=confidential: %d %v", code, body)
	}
	first := body["results"].([]any)[0].(map[string]any)
	if first["title"] != "Subject ann number 2" || first["from"] != "sender2@private.example" {
		t.Errorf("newest result: %v", first)
	}
	var text string
	var marked []string
	for _, fr := range first["snippet"].([]any) {
		m := fr.(map[string]any)
		text += m["text"].(string)
		if m["match"] == true {
			marked = append(marked, m["text"].(string))
		}
	}
	if !slices.Equal(marked, []string{"Confidential"}) || !strings.Contains(text, "body 2") {
		t.Errorf("snippet %q marks %q, want the text of body 2 with [Confidential]", text, marked)
	}
	if c, w := f.st.Stats().Commits, f.ix.Stats().BytesWritten; c != commits || w != written || f.stale != nil {
		t.Errorf("the search wrote: commits %d to %d, index bytes %d to %d, catch-ups %v", commits, c, written, w, f.stale)
	}
}

// TestSearchLongPageShared: a page of 100 results, whose snippets a
// spare core shares while no other search runs, is the five pages of 20
// that one goroutine builds, in the same order, snippets and all.
func TestSearchLongPageShared(t *testing.T) {
	f := newSearchFixture(t)
	f.mail.Fill("ann", 100, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	f.connectManual("u1", "ann")
	f.runOnce()
	code, long := f.search("u1", "q=confidential&limit=100")
	if code != 200 || long["count"] != 100.0 {
		t.Fatalf("limit=100: %d, %v results", code, long["count"])
	}
	var pages []any
	cursor := ""
	for range 5 {
		code, body := f.search("u1", "q=confidential&limit=20"+cursor)
		if code != 200 {
			t.Fatalf("limit=20: %d %v", code, body)
		}
		pages = append(pages, body["results"].([]any)...)
		c, _ := body["nextCursor"].(string)
		cursor = "&cursor=" + url.QueryEscape(c)
	}
	got, _ := json.Marshal(long["results"])
	want, _ := json.Marshal(pages)
	if string(got) != string(want) {
		t.Errorf("the page of 100 differs from the five pages of 20:\n got %.300s\nwant %.300s", got, want)
	}
}
