package main

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"searchsvc/httpx/monitor"
	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
)

// dashboardApp builds the app as serve does, its log's errors noted for
// the dashboard, and serves its API on an httptest server.
func dashboardApp(t *testing.T) (*app, *slog.Logger, string) {
	t.Helper()
	env := map[string]string{"DATA_DIR": t.TempDir(), "SESSION_SECURE": "false", "STORE_SYNC": "none"}
	getenv := func(k string) string { return env[k] }
	c, err := loadConfig(getenv)
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	if err := c.devSecrets(); err != nil {
		t.Fatalf("devSecrets: %v", err)
	}
	errs := monitor.NewErrors(lastErrorsKept, nil)
	log := slog.New(errs.Handler(slog.DiscardHandler))
	a, err := openApp(c, getenv, log)
	if err != nil {
		t.Fatalf("openApp: %v", err)
	}
	a.dashboard.errors = errs
	t.Cleanup(func() { a.close(log) })
	h, err := apiHandler(a, c, log)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return a, log, srv.URL
}

// withoutStamps is an answer without what differs at every request.
func withoutStamps(body map[string]any) map[string]any {
	for _, k := range []string{"requestId", "timestamp", "duration"} {
		delete(body, k)
	}
	return body
}

// jsonOf is v as the decoded JSON a client reads.
func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDashboard: GET /v1/admin/dashboard answers an administrator with
// the version, the uptime, the space left and how long it lasts (first
// "not enough history", then at the growth measured), the sizes, each
// user's items and connections by state, and the last errors in words;
// nothing personal. Anyone else is refused.
func TestDashboard(t *testing.T) {
	a, log, base := dashboardApp(t)
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	now := t0.Add(90 * time.Second)
	d := a.dashboard
	d.started, d.now = t0, func() time.Time { return now }
	d.diskFree = func() (uint64, bool) { return 100_000_000, true }
	itemsBytes := int64(5_000_000)
	d.itemsBytes = func() int64 { return itemsBytes }

	admin := newClient(t, base)
	if st, body, _ := admin.do("POST", "/v1/auth/register", map[string]string{"email": "root@example.org", "password": "a long enough password", "name": "Root"}); st != 201 {
		t.Fatalf("register root: %d %v", st, body)
	}
	bob := newClient(t, base)
	if st, body, _ := bob.do("POST", "/v1/auth/register", map[string]string{"email": "bob@example.org", "password": "a long enough password", "name": "Bob"}); st != 201 {
		t.Fatalf("register bob: %d %v", st, body)
	}
	st, body, _ := bob.do("GET", "/v1/admin/dashboard", nil)
	want403 := map[string]any{"operation": "dashboard.read", "error": map[string]any{"code": "admin_required", "message": "admin required"}}
	if st != 403 || !reflect.DeepEqual(withoutStamps(body), want403) {
		t.Errorf("a user who is not an administrator: got %d %v, want 403 %v", st, body, want403)
	}
	st, body, _ = newClient(t, base).do("GET", "/v1/admin/dashboard", nil)
	want401 := map[string]any{"operation": "dashboard.read", "error": map[string]any{"code": "no_session_cookie", "message": "no session cookie"}}
	if st != 401 || !reflect.DeepEqual(withoutStamps(body), want401) {
		t.Errorf("a visitor: got %d %v, want 401 %v", st, body, want401)
	}
	ids := a.users.IDs()
	if len(ids) != 2 {
		t.Fatalf("users: %v", ids)
	}
	rootID, bobID := ids[0], ids[1]

	// Root has a feed of two items; Bob a feed in error and a Gmail that
	// needs signing in again.
	rootFeed, err := a.records.Connect(rootID, "feed", integrations.Credentials{Fields: map[string]string{"url": "https://example.org/feed.xml"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []string{"entry-1", "entry-2"} {
		it, err := d.items.NewItem(items.Owner{UserID: rootID, RecordID: rootFeed.ID, Integration: "feed"},
			&integrations.Item{ProviderID: pid, Title: "Private title " + pid, Date: t0}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.mainStore.Commit(d.items.InsertOp(it)); err != nil {
			t.Fatal(err)
		}
	}
	bobFeed, _ := a.records.Connect(bobID, "feed", integrations.Credentials{Fields: map[string]string{"url": "https://bob.example/feed.xml"}})
	bobMail, _ := a.records.Connect(bobID, "gmail", integrations.Credentials{RefreshToken: "secret-refresh"})
	if err := errors.Join(a.records.SetStatus(bobFeed.ID, records.StatusError, "bob.example answered 500"),
		a.records.SetStatus(bobMail.ID, records.StatusNeedsReauth, "bob@example.org revoked access")); err != nil {
		t.Fatal(err)
	}
	log.With("component", "sync").Error("record sync failure", "user_id", bobID, "err", errors.New("bob@example.org: refused"))
	log.Error("request failed", "request_id", "abc", "operation", "item.search", "status", 500, "err", errors.New("open /data/items/x"))
	log.Warn("a warning is no error")

	expect := func(history int64, growth *int64, lasts *float64, measured *time.Time, errs []monitor.Error, total int64) any {
		free := uint64(100_000_000)
		ix := a.index.Stats()
		v := dashboardView{Version: version, StartedAt: t0, UptimeSeconds: int64(now.Sub(t0) / time.Second),
			Disk: diskView{FreeBytes: &free, HistorySeconds: history, GrowthBytesPerDay: growth, LastsDays: lasts},
			Sizes: sizesView{MainStoreBytes: a.mainStore.Stats().FileBytes, SessionStoreBytes: a.sessionStore.Stats().FileBytes,
				IndexBytes: ix.BytesOnDisk, IndexDocuments: ix.Docs},
			Users: []userLoadView{
				{ID: rootID, Items: 2, Connections: map[string]int{"connected": 1, "error": 0, "needs_reauth": 0}},
				{ID: bobID, Items: 0, Connections: map[string]int{"connected": 0, "error": 1, "needs_reauth": 1}},
			},
			Errors: errorsView{Total: total, Last: errs},
		}
		if measured != nil {
			v.Sizes.ItemsBytes, v.Sizes.ItemsMeasuredAt = itemsBytes, measured
		}
		return jsonOf(t, map[string]any{"operation": "dashboard.read", "result": v})
	}
	check := func(what string, want any) {
		t.Helper()
		st, body, _ := admin.do("GET", "/v1/admin/dashboard", nil)
		if got := withoutStamps(body); st != 200 || !reflect.DeepEqual(jsonOf(t, got), want) {
			g, _ := json.MarshalIndent(got, "", " ")
			w, _ := json.MarshalIndent(want, "", " ")
			t.Fatalf("%s: got %d %s,\nwant 200 %s", what, st, g, w)
		}
		raw, _ := json.Marshal(body)
		for _, personal := range []string{"example.org", "bob.example", "Bob", "Root", "Private title", "refused", "secret", "/data", "abc"} {
			if strings.Contains(string(raw), personal) {
				t.Errorf("%s: the dashboard holds %q: %s", what, personal, raw)
			}
		}
	}
	errsNow := func() []monitor.Error {
		return []monitor.Error{
			{Message: "request failed (operation item.search, status 500)", Count: 1, FirstAt: time.Time{}, LastAt: time.Time{}},
			{Message: "sync: record sync failure", Count: 1},
		}
	}
	// The errors' times are the wall clock's: read them from the ring.
	ring, _ := d.errors.Last()
	if len(ring) != 2 {
		t.Fatalf("errors kept: %v", ring)
	}
	wantErrs := errsNow()
	for i := range wantErrs {
		wantErrs[i].FirstAt, wantErrs[i].LastAt = ring[i].FirstAt, ring[i].LastAt
	}

	// Before the first sample: no size of the items yet, no history.
	check("at the start", expect(0, nil, nil, nil, wantErrs, 2))

	// Half an hour of history is not enough to tell.
	d.sample(a)
	first := now
	now = now.Add(30 * time.Minute)
	itemsBytes += 500_000
	d.sample(a)
	m1 := now
	check("after half an hour", expect(1800, nil, nil, &m1, wantErrs, 2))

	// Two hours: 2 MB more is 24 MB a day, which 100 MB lasts 4.2 days.
	now = first.Add(2 * time.Hour)
	itemsBytes += 1_500_000
	d.sample(a)
	m2 := now
	growth, lasts := int64(24_000_000), 4.2
	check("after two hours", expect(7200, &growth, &lasts, &m2, wantErrs, 2))

	// Not growing: no end in sight.
	now = first.Add(3 * time.Hour)
	itemsBytes -= 2_000_000
	d.sample(a)
	m3 := now
	shrink := int64(0)
	check("not growing", expect(10800, &shrink, nil, &m3, wantErrs, 2))
}
