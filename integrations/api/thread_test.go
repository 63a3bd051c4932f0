package api_test

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"searchsvc/integrations/fakemail"
	"searchsvc/integrations/mail"
)

// get asks path as user and decodes the answer.
func (f *searchFixture) get(user, path string) (int, map[string]any) {
	f.t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	r.Header.Set("X-Test-User", user)
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	var out map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		f.t.Fatalf("GET %s: %d, not JSON: %s", path, w.Code, w.Body)
	}
	return w.Code, out
}

// threadMsg is a message of a conversation in the fake mailbox.
func threadMsg(id, subject, header string, at time.Time) fakemail.Msg {
	return fakemail.Msg{ID: id, Subject: subject, From: "ann@private.example", To: []string{"bob@private.example"},
		Date: at, Body: "About the harbour plan, " + subject + ".", Header: header}
}

// titles maps the results of a list answer to their titles, in order.
func titles(body map[string]any) []string {
	var out []string
	rs, _ := body["results"].([]any)
	for _, r := range rs {
		out = append(out, r.(map[string]any)["title"].(string))
	}
	return out
}

// idByTitle returns the id of the result titled title in a search answer.
func idByTitle(t *testing.T, body map[string]any, title string) string {
	t.Helper()
	rs, _ := body["results"].([]any)
	for _, r := range rs {
		m := r.(map[string]any)
		if m["title"] == title {
			return m["id"].(string)
		}
	}
	t.Fatalf("no result titled %q in %v", title, titles(body))
	return ""
}

// TestThreadRoute: GET /v1/items/{id}/thread answers the conversation
// oldest first, through replies that name only their parent, including
// one that arrived before its parent once the parent is there; another
// user's item is 404; a mail of no conversation is alone.
func TestThreadRoute(t *testing.T) {
	f := newSearchFixture(t)
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	box := []fakemail.Msg{
		threadMsg("c", "Re: Re: plan", "Message-ID: <c@x>\r\nIn-Reply-To: <b@x>\r\n", day.Add(2*time.Hour)),
		threadMsg("d", "Other plan", "Message-ID: <d@x>\r\n", day.Add(90*time.Minute)),
		threadMsg("a", "Plan", "Message-ID: <a@x>\r\n", day),
	}
	f.mail.Mu.Lock()
	f.mail.Boxes["ann"] = box
	f.mail.Mu.Unlock()
	rec := f.connectManual("u1", "ann")
	f.runOnce()

	_, body := f.search("u1", "q=harbour&limit=10")
	a, c, d := idByTitle(t, body, "Plan"), idByTitle(t, body, "Re: Re: plan"), idByTitle(t, body, "Other plan")
	code, got := f.get("u1", "/v1/items/"+a+"/thread")
	if code != 200 || got["count"] != 1.0 || !slices.Equal(titles(got), []string{"Plan"}) {
		t.Fatalf("thread of a before its reply b: %d %v %v", code, got["count"], titles(got))
	}

	// b, c's parent and a's reply, arrives after c.
	f.mail.Mu.Lock()
	f.mail.Boxes["ann"] = slices.Insert(f.mail.Boxes["ann"], 0,
		threadMsg("b", "Re: plan", "Message-ID: <b@x>\r\nIn-Reply-To: <a@x>\r\nReferences: <a@x>\r\n", day.Add(time.Hour)))
	f.mail.Mu.Unlock()
	f.clock.Advance(time.Hour)
	if err := f.syncer.SyncNow("u1", rec.ID); err != nil {
		t.Fatal(err)
	}
	f.runOnce()

	want := []string{"Plan", "Re: plan", "Re: Re: plan"}
	for _, id := range []string{a, c} {
		code, got := f.get("u1", "/v1/items/"+id+"/thread")
		if code != 200 || got["count"] != 3.0 || !slices.Equal(titles(got), want) {
			t.Errorf("thread of %s: %d %v %v, want %v", id, code, got["count"], titles(got), want)
		}
		first := got["results"].([]any)[0].(map[string]any)
		if first["threadId"] != mail.IDKey("<a@x>") || first["integrationId"] != rec.ID {
			t.Errorf("thread of %s: first result %v", id, first)
		}
	}
	if code, got := f.get("u1", "/v1/items/"+d+"/thread"); code != 200 || !slices.Equal(titles(got), []string{"Other plan"}) {
		t.Errorf("thread of d: %d %v", code, titles(got))
	}
	if code, got := f.get("u2", "/v1/items/"+a+"/thread"); code != 404 || got["error"].(map[string]any)["code"] != "item_not_found" {
		t.Errorf("another user's thread: %d %v", code, got)
	}
}

// TestSearchCollapseThread: collapse=thread answers one result per
// conversation, its best hit, with the conversation's size, a reply that
// names only its parent (In-Reply-To, no References) included; a bad
// collapse value is a 400 naming it.
func TestSearchCollapseThread(t *testing.T) {
	f := newSearchFixture(t)
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.mail.Mu.Lock()
	f.mail.Boxes["ann"] = []fakemail.Msg{
		threadMsg("e", "Re: Re: Re: plan", "Message-ID: <e@x>\r\nIn-Reply-To: <c@x>\r\n", day.Add(3*time.Hour)),
		threadMsg("c", "Re: Re: plan", "Message-ID: <c@x>\r\nIn-Reply-To: <b@x>\r\nReferences: <a@x> <b@x>\r\n", day.Add(2*time.Hour)),
		threadMsg("b", "Re: plan", "Message-ID: <b@x>\r\nIn-Reply-To: <a@x>\r\nReferences: <a@x>\r\n", day.Add(time.Hour)),
		threadMsg("d", "Other plan", "Message-ID: <d@x>\r\n", day.Add(90*time.Minute)),
		threadMsg("a", "Plan", "Message-ID: <a@x>\r\n", day),
	}
	f.mail.Mu.Unlock()
	f.connectManual("u1", "ann")
	f.runOnce()

	code, body := f.search("u1", "q=harbour")
	if code != 200 || body["count"] != 5.0 {
		t.Fatalf("without collapse: %d %v", code, body["count"])
	}
	code, body = f.search("u1", "q=harbour&collapse=thread")
	if code != 200 || body["count"] != 2.0 || body["total"] != 2.0 {
		t.Fatalf("collapse=thread: %d count %v total %v %v", code, body["count"], body["total"], titles(body))
	}
	counts := map[string]float64{}
	for _, r := range body["results"].([]any) {
		m := r.(map[string]any)
		counts[m["threadId"].(string)] = m["threadCount"].(float64)
	}
	if counts[mail.IDKey("<a@x>")] != 4 || counts[mail.IDKey("<d@x>")] != 1 {
		t.Errorf("threadCount by thread: %v", counts)
	}
	code, body = f.search("u1", "q=harbour&collapse="+url.QueryEscape("people"))
	details, _ := body["error"].(map[string]any)["details"].([]any)
	if code != 400 || len(details) != 1 || details[0].(map[string]any)["field"] != "collapse" || details[0].(map[string]any)["message"] != "must be thread" {
		t.Errorf("collapse=people: %d %v", code, body)
	}
}
