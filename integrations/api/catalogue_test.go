package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestCatalogue(t *testing.T) {
	f := newFixture(t)
	r := f.do("GET", "/v1/integrations", "u1", nil)
	r.want(t, http.StatusOK, "integration.readMany", "", "")
	got := map[string]map[string]any{}
	for _, e := range r.results() {
		got[e["domain"].(string)] = e
	}
	if len(got) != 3 || r.body["count"] != 3.0 {
		t.Fatalf("catalogue: got %d entries, count %v; want 3", len(got), r.body["count"])
	}
	tests := []struct {
		domain, authType string
		configured       bool
		scopes, fields   int
	}{
		{"acme", "oauth", true, 2, 0},
		{"dav", "manual", true, 0, 5},
		{"other", "oauth", false, 1, 0}, // OTHER_OAUTH_CLIENT_ID is not set
	}
	for _, tt := range tests {
		e := got[tt.domain]
		if e == nil {
			t.Errorf("%s: missing", tt.domain)
			continue
		}
		scopes, _ := e["scopes"].([]any)
		fields, _ := e["fields"].([]any)
		if e["authType"] != tt.authType || e["configured"] != tt.configured || len(scopes) != tt.scopes ||
			len(fields) != tt.fields || e["displayName"] == "" || e["kind"] == nil {
			t.Errorf("%s: got %v", tt.domain, e)
		}
		if e["scopes"] == nil || e["fields"] == nil {
			t.Errorf("%s: scopes or fields is null, want []", tt.domain)
		}
	}
	pw := got["dav"]["fields"].([]any)[2].(map[string]any)
	if pw["name"] != "password" || pw["secret"] != true || pw["type"] != "password" {
		t.Errorf("dav password field: got %v", pw)
	}
	if strings.Contains(r.raw, clientSecret) || strings.Contains(r.raw, clientID) {
		t.Errorf("catalogue shows client configuration: %s", r.raw)
	}

	r = f.do("GET", "/v1/integrations?inIds=acme,dav&ninIds=dav", "u1", nil)
	if res := r.results(); len(res) != 1 || res[0]["domain"] != "acme" {
		t.Errorf("inIds=acme,dav&ninIds=dav: got %v, want acme only", res)
	}
	long := strings.Repeat("x", 200)
	f.do("GET", "/v1/integrations?inIds="+long, "u1", nil).want(t, http.StatusBadRequest, "integration.readMany", "validation_failed", "validation failed")
}
