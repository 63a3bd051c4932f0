package api_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations/api"
	"searchsvc/integrations/fakemail"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
)

type syncResponse struct {
	status int
	raw    string
	body   struct {
		RequestID  string          `json:"requestId"`
		Operation  string          `json:"operation"`
		Result     json.RawMessage `json:"result"`
		Results    []items.View    `json:"results"`
		Count      *int            `json:"count"`
		NextCursor string          `json:"nextCursor"`
		Error      struct {
			Code    string             `json:"code"`
			Message string             `json:"message"`
			Details []httpx.FieldError `json:"details"`
		} `json:"error"`
	}
}

func syncDo(t *testing.T, h http.Handler, method, path, user string) syncResponse {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if user != "" {
		req.Header.Set("X-Test-User", user)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	out := syncResponse{status: w.Code, raw: w.Body.String()}
	if err := json.Unmarshal(w.Body.Bytes(), &out.body); err != nil {
		t.Fatalf("%s %s: body is not JSON: %q", method, path, out.raw)
	}
	if out.body.RequestID == "" {
		t.Errorf("%s %s: no requestId in %s", method, path, out.raw)
	}
	return out
}

func (r syncResponse) want(t *testing.T, status int, op, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status: got %d, want %d (%s)", r.status, status, r.raw)
	}
	if r.body.Operation != op {
		t.Errorf("operation: got %q, want %q", r.body.Operation, op)
	}
	if r.body.Error.Code != code {
		t.Errorf("error code: got %q, want %q (%s)", r.body.Error.Code, code, r.raw)
	}
}

func TestSyncNowHandler(t *testing.T) {
	f := newSyncFixture(t)
	f.mail.Fill("alice", 2, f.clock.Now())
	rec := f.connectManual("alice", "alice")
	other := f.connectManual("bob", "bob")
	h := f.server()
	path := "/v1/user-integrations/" + rec.ID + "/sync"

	for range 2 { // a second request queues nothing more
		r := syncDo(t, h, "POST", path, "alice")
		r.want(t, http.StatusAccepted, "userIntegration.sync", "")
		var view api.RecordView
		if err := json.Unmarshal(r.body.Result, &view); err != nil {
			t.Fatal(err)
		}
		if view.ID != rec.ID || view.Status != records.StatusConnected || view.PendingTasks != 1 || view.UserID != "alice" {
			t.Errorf("result: got %+v, want the record with 1 pending task", view)
		}
		if strings.Contains(r.raw, "credentials") {
			t.Errorf("response shows credentials: %s", r.raw)
		}
	}

	for _, tc := range []struct{ name, path, user string }{
		{"another user's record", "/v1/user-integrations/" + other.ID + "/sync", "alice"},
		{"unknown record", "/v1/user-integrations/6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b/sync", "alice"},
		{"not an id", "/v1/user-integrations/gmail/sync", "alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := syncDo(t, h, "POST", tc.path, tc.user)
			r.want(t, http.StatusNotFound, "userIntegration.sync", "integration_record_not_found")
			if r.body.Error.Message != "integration record not found" {
				t.Errorf("message: got %q", r.body.Error.Message)
			}
		})
	}

	if err := f.records.SetStatus(other.ID, records.StatusNeedsReauth, "refused"); err != nil {
		t.Fatal(err)
	}
	r := syncDo(t, h, "POST", "/v1/user-integrations/"+other.ID+"/sync", "bob")
	r.want(t, http.StatusConflict, "userIntegration.sync", "needs_reauth")
	if !strings.Contains(r.body.Error.Message, "reconnected") {
		t.Errorf("message: got %q, want it to tell to reconnect", r.body.Error.Message)
	}
	if f.syncer.Pending(other.ID) != 0 {
		t.Error("a needs_reauth record got a task")
	}

	syncDo(t, h, "POST", path, "").want(t, http.StatusInternalServerError, "userIntegration.sync", "internal_error")
}

// syncedItems connects alice's two mailboxes, 100 and 20 messages whose
// dates come in threes (so that the order needs the id as tie-break), and
// syncs them.
func syncedItems(t *testing.T) (f *syncFixture, big, small records.Record) {
	f = newSyncFixture(t)
	f.mail.PageSize = 50
	start := f.clock.Now().Add(-30 * 24 * time.Hour)
	f.mail.Fill("alice", 100, start)
	f.mail.Fill("alice2", 20, start.Add(time.Second))
	for _, box := range []string{"alice", "alice2"} {
		for i := range f.mail.Boxes[box] {
			f.mail.Boxes[box][i].Date = start.Add(time.Duration(i/3) * time.Hour)
		}
	}
	f.mail.Fill("bob", 5, start)
	big = f.connectManual("alice", "alice")
	small = f.connect("alice", "alice2")
	f.connectManual("bob", "bob")
	f.runOnce()
	return f, big, small
}

func TestItemsHandlerPagesNewestFirst(t *testing.T) {
	f, _, _ := syncedItems(t)
	h := f.server()

	var all []items.View
	cursor := ""
	for page := 0; ; page++ {
		path := "/v1/items?limit=50"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		r := syncDo(t, h, "GET", path, "alice")
		r.want(t, http.StatusOK, "item.readMany", "")
		if r.body.Count == nil || *r.body.Count != len(r.body.Results) {
			t.Errorf("page %d: count %v for %d results", page, r.body.Count, len(r.body.Results))
		}
		all = append(all, r.body.Results...)
		wantLen := []int{50, 50, 20}[min(page, 2)]
		if len(r.body.Results) != wantLen {
			t.Fatalf("page %d: got %d items, want %d", page, len(r.body.Results), wantLen)
		}
		if r.body.NextCursor == "" {
			if page != 2 {
				t.Fatalf("page %d: no nextCursor, want 3 pages", page)
			}
			break
		}
		if page == 2 {
			t.Fatalf("last page has a nextCursor %q", r.body.NextCursor)
		}
		cursor = r.body.NextCursor
	}
	seen := make(map[string]bool)
	for i, it := range all {
		if seen[it.ID] {
			t.Errorf("item %s listed twice", it.ID)
		}
		seen[it.ID] = true
		if it.UserID != "alice" || it.Title == "" || it.From == "" || len(it.To) != 1 || it.ProviderID == "" {
			t.Errorf("item %d: incomplete %+v", i, it)
		}
		if i > 0 {
			prev := all[i-1]
			if it.Date.After(prev.Date) || it.Date.Equal(prev.Date) && it.ID > prev.ID {
				t.Errorf("items %d and %d are not newest first (date, then id): %v %s, %v %s", i-1, i, prev.Date, prev.ID, it.Date, it.ID)
			}
		}
	}
}

func TestItemsHandlerFilters(t *testing.T) {
	f, big, small := syncedItems(t)
	h := f.server()

	r := syncDo(t, h, "GET", "/v1/items?limit=200&integrationId="+small.ID, "alice")
	r.want(t, http.StatusOK, "item.readMany", "")
	if len(r.body.Results) != 20 || r.body.NextCursor != "" {
		t.Fatalf("integrationId filter: got %d items (next %q), want 20", len(r.body.Results), r.body.NextCursor)
	}
	for _, it := range r.body.Results {
		if it.IntegrationID != small.ID || it.Integration != fakemail.OAuthDomain {
			t.Errorf("item of %s/%s under the filter for %s", it.IntegrationID, it.Integration, small.ID)
		}
	}
	ids := []string{r.body.Results[0].ID, r.body.Results[1].ID, r.body.Results[2].ID}

	r = syncDo(t, h, "GET", "/v1/items?inIds="+strings.Join(ids, ","), "alice")
	if got := syncItemIDs(r.body.Results); len(got) != 3 || !slices.Equal(got, ids) {
		t.Errorf("inIds: got %v, want %v", got, ids)
	}
	r = syncDo(t, h, "GET", "/v1/items?limit=200&integrationId="+small.ID+"&ninIds="+ids[0], "alice")
	if got := syncItemIDs(r.body.Results); len(got) != 19 || slices.Contains(got, ids[0]) {
		t.Errorf("ninIds: got %d items, containing the excluded one: %v", len(got), slices.Contains(got, ids[0]))
	}
	r = syncDo(t, h, "GET", "/v1/items?limit=200&integrationId="+big.ID+","+small.ID, "alice")
	if len(r.body.Results) != 120 {
		t.Errorf("two integrationIds: got %d items, want 120", len(r.body.Results))
	}
	// Bob sees only his own, whatever he asks for.
	r = syncDo(t, h, "GET", "/v1/items?limit=200", "bob")
	if len(r.body.Results) != 5 {
		t.Errorf("bob's items: got %d, want 5", len(r.body.Results))
	}
	r = syncDo(t, h, "GET", "/v1/items?integrationId="+small.ID+"&inIds="+ids[0], "bob")
	if len(r.body.Results) != 0 {
		t.Errorf("bob sees alice's items: %v", syncItemIDs(r.body.Results))
	}

	for _, q := range []struct{ query, field string }{
		{"limit=0", "limit"}, {"limit=201", "limit"}, {"limit=ten", "limit"},
		{"cursor=bm90IGEgY3Vyc29y", "cursor"}, {"cursor=%25%25", "cursor"},
	} {
		r := syncDo(t, h, "GET", "/v1/items?"+q.query, "alice")
		r.want(t, http.StatusBadRequest, "item.readMany", "validation_failed")
		if len(r.body.Error.Details) != 1 || r.body.Error.Details[0].Field != q.field {
			t.Errorf("%s: details %+v, want the field %s", q.query, r.body.Error.Details, q.field)
		}
	}
}

func syncItemIDs(views []items.View) []string {
	var ids []string
	for _, it := range views {
		ids = append(ids, it.ID)
	}
	return ids
}

func TestItemHandler(t *testing.T) {
	f, big, _ := syncedItems(t)
	h := f.server()
	it := f.liveItems(big.ID)[0]
	view, err := f.items().View(&it)
	if err != nil {
		t.Fatal(err)
	}
	var msg fakemail.Msg
	for _, m := range f.mail.Boxes["alice"] {
		if m.ID == view.ProviderID {
			msg = m
		}
	}

	r := syncDo(t, h, "GET", "/v1/items/"+it.ID, "alice")
	r.want(t, http.StatusOK, "item.readOne", "")
	var got items.Detail
	if err := json.Unmarshal(r.body.Result, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != it.ID || got.Text != msg.Body || got.Title != msg.Subject || got.IntegrationID != big.ID || !got.Date.Equal(msg.Date) {
		t.Errorf("item: got %+v, want the message %s with its text", got, msg.ID)
	}

	for _, tc := range []struct{ name, id, user string }{
		{"another user's item", it.ID, "bob"},
		{"unknown item", "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "alice"},
		{"not an id", "..%2F..%2Fetc", "alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := syncDo(t, h, "GET", "/v1/items/"+tc.id, tc.user)
			r.want(t, http.StatusNotFound, "item.readOne", "item_not_found")
		})
	}

	// A byte of its sealed text altered in the pack: that item answers
	// 500, another item of the same pack still reads.
	other := f.liveItems(big.ID)[1]
	if f.items().Path(&other) != f.items().Path(&it) {
		t.Fatalf("items %s and %s in different packs", it.Content, other.Content)
	}
	var pack int
	var off, n int64
	if _, err := fmt.Sscanf(it.Content, "%d.%d.%d", &pack, &off, &n); err != nil {
		t.Fatalf("reference %q: %v", it.Content, err)
	}
	pf, err := os.OpenFile(f.items().Path(&it), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	pf.ReadAt(b, off+n/2)
	pf.WriteAt([]byte{b[0] ^ 1}, off+n/2)
	pf.Close()
	syncDo(t, h, "GET", "/v1/items/"+it.ID, "alice").want(t, http.StatusInternalServerError, "item.readOne", "internal_error")
	syncDo(t, h, "GET", "/v1/items/"+other.ID, "alice").want(t, http.StatusOK, "item.readOne", "")

	if err := os.Remove(f.items().Path(&it)); err != nil {
		t.Fatal(err)
	}
	syncDo(t, h, "GET", "/v1/items/"+it.ID, "alice").want(t, http.StatusGone, "item.readOne", "item_content_gone")
}

func TestDisconnectSoftDeletesItems(t *testing.T) {
	f, big, small := syncedItems(t)
	h := f.server()
	// A run left waiting on a 429, so the record has tasks queued.
	f.mail.Fill("alice", 3, f.clock.Now())
	f.mail.FailNext(fakemail.Fail{Kind: "get", Status: 429, RetryAfter: "600"})
	if err := f.syncer.SyncNow(big.UserID, big.ID); err != nil {
		t.Fatal(err)
	}
	f.runOnce()
	if f.syncer.Pending(big.ID) == 0 {
		t.Fatal("no task queued before the disconnect")
	}
	dir := f.items().RecordDir(big.ID)

	syncDo(t, h, "DELETE", "/v1/user-integrations/"+big.ID, "alice").want(t, http.StatusOK, "userIntegration.deleteOne", "")
	if n := f.syncer.Pending(big.ID); n != 0 {
		t.Errorf("pending tasks after the disconnect: got %d, want 0", n)
	}
	for _, it := range f.items().ForRecord(big.ID) {
		if it.Live() || it.Meta != nil || it.Key != "" {
			t.Errorf("item %s after the disconnect: live %v, meta or key kept", it.ID, it.Live())
		}
	}
	r := syncDo(t, h, "GET", "/v1/items?limit=200", "alice")
	if len(r.body.Results) != 20 {
		t.Errorf("items after disconnecting one record: got %d, want the other's 20", len(r.body.Results))
	}
	gone := f.items().ForRecord(big.ID)[0]
	syncDo(t, h, "GET", "/v1/items/"+gone.ID, "alice").want(t, http.StatusNotFound, "item.readOne", "item_not_found")

	// The scheduler removes the files of the disconnected record.
	f.runOnce()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("content directory of the disconnected record: %v, want it removed", err)
	}
	if _, err := os.Stat(f.items().RecordDir(small.ID)); err != nil {
		t.Errorf("content directory of the other record: %v", err)
	}
	// Tombstones are kept a while, then dropped.
	f.reopen()
	if n := len(f.items().ForRecord(big.ID)); n != 100 {
		t.Errorf("tombstones after a restart: got %d, want 100", n)
	}
	f.clock.Advance(items.TombstoneTTL + time.Hour)
	f.reopen()
	if n := len(f.items().ForRecord(big.ID)); n != 0 {
		t.Errorf("tombstones after %v: got %d, want none", items.TombstoneTTL, n)
	}
}
