package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"searchsvc/integrations"
	"searchsvc/storage/uuid"
)

func TestListGetFilters(t *testing.T) {
	f := newFixture(t)
	a, creds := f.connectAcme("u1")
	b, err := f.records.Connect("u1", "dav", integrations.Credentials{Fields: map[string]string{"password": davPassword}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.connectAcme("u2")
	secrets := []string{creds.AccessToken, creds.RefreshToken, clientSecret, davPassword}

	ids := func(r response) []string {
		var out []string
		for _, x := range r.results() {
			out = append(out, x["id"].(string))
			if _, ok := x["credentials"]; ok {
				t.Errorf("list item shows credentials: %v", x)
			}
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s ...string) []string { slices.Sort(s); return s }
	tests := []struct {
		query string
		want  []string
	}{
		{"", sorted(a.ID, b.ID)},
		{"?inIds=" + a.ID, []string{a.ID}},
		{"?ninIds=" + a.ID, []string{b.ID}},
		{"?inIds=" + a.ID + "," + c.ID, []string{a.ID}}, // another user's id is never listed
		{"?inIds=" + a.ID + "&ninIds=" + a.ID, nil},
	}
	for _, tt := range tests {
		r := f.do("GET", "/v1/user-integrations"+tt.query, "u1", nil)
		r.want(t, http.StatusOK, "userIntegration.readMany", "", "")
		if got := ids(r); !slices.Equal(got, tt.want) {
			t.Errorf("list%s: got %v, want %v", tt.query, got, tt.want)
		}
		for _, s := range secrets {
			if strings.Contains(r.raw, s) {
				t.Errorf("list%s shows a secret", tt.query)
			}
		}
	}
	if r := f.do("GET", "/v1/user-integrations", "u3", nil); r.body["count"] != 0.0 || r.body["results"] == nil {
		t.Errorf("empty list: got %s, want results [] and count 0", r.raw)
	}

	const op = "userIntegration.readOne"
	r := f.do("GET", "/v1/user-integrations/"+a.ID, "u1", nil)
	r.want(t, http.StatusOK, op, "", "")
	if res, _ := r.body["result"].(map[string]any); res["id"] != a.ID || res["integration"] != "acme" || res["credentials"] != nil ||
		res["pendingTasks"] != float64(len(a.ID)%7) || res["activity"] != "downloading" || res["itemsLeft"] != float64(len(a.ID)%5) ||
		res["itemsTotal"] != 40.0 || res["itemsSynced"] != 0.0 || res["sources"] != nil || res["retryAt"] != nil {
		t.Errorf("get: got %v, want the record with pendingTasks %d, activity downloading, itemsLeft %d, itemsTotal 40", res, len(a.ID)%7, len(a.ID)%5)
	}
	for _, s := range secrets {
		if strings.Contains(r.raw, s) {
			t.Error("get shows a secret")
		}
	}
	for _, path := range []string{c.ID, uuid.New(), "not-a-uuid"} {
		f.do("GET", "/v1/user-integrations/"+path, "u1", nil).
			want(t, http.StatusNotFound, op, "integration_record_not_found", "integration record not found")
	}
	var many []string
	for range 101 {
		many = append(many, uuid.New())
	}
	f.do("GET", "/v1/user-integrations?inIds="+strings.Join(many, ","), "u1", nil).
		want(t, http.StatusBadRequest, "userIntegration.readMany", "validation_failed", "validation failed")
}
