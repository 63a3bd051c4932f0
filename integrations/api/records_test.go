package api_test

import (
	"net/http"
	"testing"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/records"
	"searchsvc/storage/uuid"
)

func TestHandlersWithoutUser(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct{ method, path, op string }{
		{"GET", "/v1/user-integrations", "userIntegration.readMany"},
		{"GET", "/v1/user-integrations/" + uuid.New(), "userIntegration.readOne"},
		{"DELETE", "/v1/user-integrations/" + uuid.New(), "userIntegration.deleteOne"},
	} {
		f.do(tt.method, tt.path, "", nil).want(t, http.StatusInternalServerError, tt.op, "internal_error", "internal error")
	}
}

func TestStoreFailureIs503(t *testing.T) {
	f := newFixture(t)
	a, _ := f.connectAcme("u1")
	f.st.Close()
	f.do("DELETE", "/v1/user-integrations/"+a.ID, "u1", nil).
		want(t, http.StatusServiceUnavailable, "userIntegration.deleteOne", "unavailable", "service unavailable")
	good := map[string]any{"url": f.dav.URL, "username": davUser, "password": davPassword}
	f.do("POST", "/v1/user-integrations/dav/credentials", "u1", map[string]any{"fields": good}).
		want(t, http.StatusServiceUnavailable, "userIntegration.create", "unavailable", "service unavailable")
}

// TestOperations checks that each handler names its operation, so that
// auth's Require answers its 401s under the same name.
func TestOperations(t *testing.T) {
	h, err := api.New(api.Config{Registry: &integrations.Registry{}, Records: &records.Records{}, Sync: fakeSync{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		h  http.Handler
		op string
	}{
		{h.Catalogue(), "integration.readMany"},
		{h.List(), "userIntegration.readMany"},
		{h.Get(), "userIntegration.readOne"},
		{h.Delete(), "userIntegration.deleteOne"},
		{h.SubmitCredentials(), "userIntegration.create"},
	} {
		if got := httpx.OperationOf(tt.h, ""); got != tt.op {
			t.Errorf("got %T with operation %q, want %s", tt.h, got, tt.op)
		}
	}
}
