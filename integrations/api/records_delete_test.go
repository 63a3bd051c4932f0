package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"searchsvc/integrations/records"
)

func TestDelete(t *testing.T) {
	f := newFixture(t)
	a, creds := f.connectAcme("u1")
	other, _ := f.connectAcme("u2")
	for _, id := range []string{"i1", "i2"} {
		if err := f.st.Commit(f.items.Put(item{ID: id, RecordID: a.ID})); err != nil {
			t.Fatal(err)
		}
	}
	const op = "userIntegration.deleteOne"

	f.do("DELETE", "/v1/user-integrations/"+other.ID, "u1", nil).
		want(t, http.StatusNotFound, op, "integration_record_not_found", "integration record not found")
	if _, ok := f.records.ByID(other.ID); !ok {
		t.Fatal("another user's record was deleted")
	}

	r := f.do("DELETE", "/v1/user-integrations/"+a.ID, "u1", nil)
	r.want(t, http.StatusOK, op, "", "")
	if r.body["success"] != true {
		t.Errorf("body: got %s, want success true", r.raw)
	}
	if _, ok := f.records.ByID(a.ID); ok {
		t.Error("record still live after delete")
	}
	var got records.Record
	f.records.ScanAll(func(r records.Record) bool {
		if r.ID == a.ID {
			got = r
		}
		return true
	})
	if got.Status != records.StatusDisconnected || got.DeletedAt == nil || got.Credentials != nil {
		t.Errorf("stored record: got status %s deletedAt %v credentials %d bytes; want disconnected, set, none",
			got.Status, got.DeletedAt, len(got.Credentials))
	}
	for _, it := range f.itemsOf(a.ID) {
		if it.DeletedAt == "" {
			t.Errorf("item %s not soft-deleted by OnDisconnect's ops", it.ID)
		}
	}
	f.mu.Lock()
	revoked := slices.Clone(f.revoked)
	f.mu.Unlock()
	if !slices.Equal(revoked, []string{creds.RefreshToken}) {
		t.Errorf("revoked at provider: got %d tokens, want the record's refresh token", len(revoked))
	}
	if f.srv.Live(creds.RefreshToken) {
		t.Error("refresh token still live at the provider")
	}
	f.do("DELETE", "/v1/user-integrations/"+a.ID, "u1", nil).
		want(t, http.StatusNotFound, op, "integration_record_not_found", "integration record not found")
	f.do("GET", "/v1/user-integrations/"+a.ID, "u1", nil).
		want(t, http.StatusNotFound, "userIntegration.readOne", "integration_record_not_found", "integration record not found")

	// The same user connects again: a fresh record, not the disconnected one.
	again, _ := f.connectAcme("u1")
	if again.ID == a.ID {
		t.Error("reconnect after disconnect reused the disconnected record")
	}
}

func TestDeleteRevocationFailureDoesNotBlock(t *testing.T) {
	f := newFixture(t)
	f.revokeOK = false
	a, creds := f.connectAcme("u1")
	r := f.do("DELETE", "/v1/user-integrations/"+a.ID, "u1", nil)
	r.want(t, http.StatusOK, "userIntegration.deleteOne", "", "")
	if _, ok := f.records.ByID(a.ID); ok {
		t.Error("record still live after a delete whose revocation failed")
	}
	logs := f.logs.String()
	if !strings.Contains(logs, "revocation at the provider failed") || !strings.Contains(logs, "provider_error=temporarily_unavailable") ||
		!strings.Contains(logs, "status=503") {
		t.Errorf("log: want the failed revocation with the provider's code and status, got:\n%s", logs)
	}
	for _, s := range []string{creds.AccessToken, creds.RefreshToken, clientSecret} {
		if strings.Contains(logs, s) {
			t.Errorf("log holds a secret:\n%s", logs)
		}
	}
	assertNotOnDisk(t, f.dir, creds.AccessToken, creds.RefreshToken, clientSecret)
}
