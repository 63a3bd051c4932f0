package api_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"searchsvc/integrations"
	"searchsvc/storage/uuid"
)

func TestSubmitCredentials(t *testing.T) {
	f := newFixture(t)
	good := map[string]any{"url": f.dav.URL, "username": davUser, "password": davPassword, "insecure": false}
	const path = "/v1/user-integrations/dav/credentials"

	t.Run("refusals", func(t *testing.T) {
		const op = "userIntegration.create"
		f.do("POST", "/v1/user-integrations/nope/credentials", "u1", map[string]any{"fields": good}).
			want(t, http.StatusNotFound, op, "integration_not_found", "integration not found")

		r := f.do("POST", "/v1/user-integrations/acme/credentials", "u1", map[string]any{"fields": good})
		r.want(t, http.StatusBadRequest, op, "validation_failed", "validation failed")
		if d := r.details()["integration"]; !strings.Contains(d, "/v1/user-integration/oauth/acme/authorize") {
			t.Errorf("oauth integration detail: got %q, want a pointer to the authorize endpoint", d)
		}

		f.do("POST", path, "u1", map[string]any{"fields": good, "extra": 1}).
			want(t, http.StatusBadRequest, op, "invalid_request_body", "invalid request body")

		bad := map[string]any{"url": "not a url", "password": davPassword, "depth": "deep", "insecure": "maybe",
			"surprise": "x", "username": []string{"a"}}
		r = f.do("POST", path, "u1", map[string]any{"fields": bad})
		r.want(t, http.StatusBadRequest, op, "validation_failed", "validation failed")
		want := map[string]string{
			"fields.surprise": "is not a field of this form",
			"fields.url":      "must be an absolute URL",
			"fields.username": "must be a string, a number or a boolean",
			"fields.depth":    "must be a number",
			"fields.insecure": "must be true or false",
		}
		if got := r.details(); !maps.Equal(got, want) {
			t.Errorf("details: got %v, want %v", got, want)
		}

		r = f.do("POST", path, "u1", map[string]any{"fields": map[string]any{"url": f.dav.URL, "password": "  "}})
		r.want(t, http.StatusBadRequest, op, "validation_failed", "validation failed")
		if got := r.details(); got["fields.username"] != "is required" || len(got) != 1 {
			t.Errorf("required: got %v, want fields.username only (a password of spaces is a password)", got)
		}

		wrong := map[string]any{"url": f.dav.URL, "username": davUser, "password": "wrong password"}
		r = f.do("POST", path, "u1", map[string]any{"fields": wrong})
		r.want(t, http.StatusBadRequest, op, "validation_failed", "validation failed")
		if got := r.details()["fields.password"]; got != "the server refused the user name or password" {
			t.Errorf("wrong password detail: got %q", got)
		}

		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		unreachable := map[string]any{"url": down.URL, "username": davUser, "password": davPassword}
		f.do("POST", path, "u1", map[string]any{"fields": unreachable}).
			want(t, http.StatusBadGateway, op, "integration_unreachable", "could not check the credentials with dav; try again later")

		if n := len(f.records.ForUser("u1")); n != 0 {
			t.Errorf("records after refusals: got %d, want 0", n)
		}
	})

	var id string
	t.Run("connect", func(t *testing.T) {
		r := f.do("POST", path, "u1", map[string]any{"fields": good})
		r.want(t, http.StatusCreated, "userIntegration.create", "", "")
		res, _ := r.body["result"].(map[string]any)
		id, _ = res["id"].(string)
		if res["integration"] != "dav" || res["userId"] != "u1" || res["status"] != "connected" || !uuid.Valid(id) {
			t.Errorf("result: got %v", res)
		}
		if _, ok := res["credentials"]; ok || strings.Contains(r.raw, davPassword) {
			t.Errorf("response shows credentials: %s", r.raw)
		}
		rec, _ := f.records.ByID(id)
		creds, err := f.records.Credentials(rec)
		if err != nil {
			t.Fatal(err)
		}
		wantFields := map[string]string{"url": f.dav.URL, "username": davUser, "password": davPassword, "depth": "3", "insecure": "false"}
		if !maps.Equal(creds.Fields, wantFields) {
			t.Errorf("stored fields: got keys %v, want %v", creds, slices.Sorted(maps.Keys(wantFields)))
		}

		// Submitting again replaces the credentials of the same record.
		r = f.do("POST", path, "u1", map[string]any{"fields": good})
		r.want(t, http.StatusOK, "userIntegration.create", "", "")
		if res, _ := r.body["result"].(map[string]any); res["id"] != id {
			t.Errorf("resubmit: got record %v, want %s", res["id"], id)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if !slices.Equal(f.connected, []string{id, id}) {
			t.Errorf("OnConnect: got %v, want [%s %s]", f.connected, id, id)
		}
	})

	assertNotOnDisk(t, f.dir, davPassword)
	if strings.Contains(f.logs.String(), davPassword) {
		t.Errorf("log holds the password:\n%s", f.logs.String())
	}
}

func TestCheckForm(t *testing.T) {
	m := dav().Manifest
	raw := func(s string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	got, errs := m.CheckForm(raw(`{"url":" https://x.example/dav ","username":"a","password":" p ","depth":7,"insecure":"1"}`))
	want := map[string]string{"url": "https://x.example/dav", "username": "a", "password": " p ", "depth": "7", "insecure": "true"}
	if errs != nil || !maps.Equal(got, want) {
		t.Errorf("CheckForm: got %v, %v; want %v", got, errs, want)
	}
	_, errs = m.CheckForm(raw(`{"url":null,"username":"` + strings.Repeat("a", integrations.MaxFieldBytes+1) + `","password":"p"}`))
	if len(errs) != 2 || errs[0].Field != "url" || errs[0].Message != "is required" || errs[1].Field != "username" {
		t.Errorf("CheckForm: got %v, want url required and username too long", errs)
	}
	many := map[string]json.RawMessage{}
	for i := range 500 {
		many[strings.Repeat("k", i%60+1)+string(rune('a'+i%26))] = json.RawMessage(`"x"`)
	}
	if _, errs := m.CheckForm(many); len(errs) > 20 {
		t.Errorf("CheckForm of 500 unknown fields: got %d errors, want a bounded number", len(errs))
	}
}
