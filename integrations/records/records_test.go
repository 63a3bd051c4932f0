package records

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

func openRecords(t *testing.T, dir string, v *vault.Vault) (*Records, *storage.Store) {
	t.Helper()
	st := storage.New(dir, storage.Options{Sync: storage.SyncNone})
	clock := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rs := New(st, v, func() time.Time { return clock })
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return rs, st
}

func testVault(t *testing.T, fill byte, previous ...[]byte) *vault.Vault {
	t.Helper()
	v, err := vault.New(bytes.Repeat([]byte{fill}, vault.KeySize), previous...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRecordsConnectReconnectDisconnect(t *testing.T) {
	dir := t.TempDir()
	rs, st := openRecords(t, dir, testVault(t, 1))
	creds := integrations.Credentials{AccessToken: "ya29.secret-access", RefreshToken: "1//secret-refresh"}

	rec, err := rs.Connect("u1", "gmail", creds)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != StatusConnected || rec.UserID != "u1" || rec.Integration != "gmail" || len(rec.Credentials) == 0 {
		t.Fatalf("connect: got %+v", rec.View())
	}
	got, err := rs.Credentials(rec)
	if err != nil || got.AccessToken != creds.AccessToken || got.RefreshToken != creds.RefreshToken {
		t.Fatalf("credentials round trip: got %v, %v", got, err)
	}

	// needs_reauth, then the user reconnects: the same record is updated.
	if err := rs.SetStatus(rec.ID, StatusNeedsReauth, "refresh token revoked"); err != nil {
		t.Fatal(err)
	}
	again, err := rs.Connect("u1", "gmail", integrations.Credentials{AccessToken: "ya29.new"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != rec.ID || again.Status != StatusConnected || again.LastError != "" {
		t.Errorf("reconnect: got id %s status %s lastError %q; want the same record %s, connected, no error", again.ID, again.Status, again.LastError, rec.ID)
	}
	if n := len(rs.ForUser("u1")); n != 1 {
		t.Errorf("records of u1: got %d, want 1", n)
	}

	// Sealed to the record: another record's identity does not open it.
	other := again
	other.ID = "another-record"
	if _, err := rs.Credentials(other); err == nil {
		t.Error("credentials opened under another record's identity")
	}

	if _, err := rs.Disconnect(rec.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Get("u1", rec.ID); !errors.Is(err, ErrNotFound) {
		t.Error("disconnected record is still live")
	}
	if _, err := rs.Disconnect(rec.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second disconnect: got %v, want ErrNotFound", err)
	}
	raw, _ := rs.t.Get(rec.ID)
	if raw.Status != StatusDisconnected || raw.DeletedAt == nil || raw.Credentials != nil {
		t.Errorf("soft-deleted record: got status %s deletedAt %v credentials %q", raw.Status, raw.DeletedAt, raw.Credentials)
	}
	// A new connection after a disconnect is a new record.
	fresh, err := rs.Connect("u1", "gmail", creds)
	if err != nil || fresh.ID == rec.ID {
		t.Errorf("connect after disconnect: got %s, %v; want a new record", fresh.ID, err)
	}

	st.Close()
	for _, secret := range []string{"ya29.secret-access", "1//secret-refresh", "ya29.new"} {
		filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(secret)) {
					t.Errorf("%s holds %q in plain text", path, secret)
				}
			}
			return nil
		})
	}
}

func TestRecordsRotateKeys(t *testing.T) {
	dir := t.TempDir()
	oldKey := bytes.Repeat([]byte{1}, vault.KeySize)
	rs, st := openRecords(t, dir, testVault(t, 1))
	for _, u := range []string{"u1", "u2", "u3"} {
		if _, err := rs.Connect(u, "gmail", integrations.Credentials{AccessToken: "tok-" + u}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	rs, st = openRecords(t, dir, testVault(t, 2, oldKey))
	n, err := rs.RotateKeys()
	if err != nil || n != 3 {
		t.Fatalf("rotate: got %d, %v; want 3, nil", n, err)
	}
	if n, _ := rs.RotateKeys(); n != 0 {
		t.Errorf("second rotate: got %d, want 0", n)
	}
	// Now the new key alone opens everything.
	st.Close()
	only, _ := openRecords(t, dir, testVault(t, 2))
	for _, u := range []string{"u1", "u2", "u3"} {
		r, _ := only.Find(u, "gmail")
		c, err := only.Credentials(r)
		if err != nil || c.AccessToken != "tok-"+u {
			t.Errorf("%s after rotation: got %v, %v", u, c, err)
		}
	}
}

func TestRecordsFailClosedOnUnknownKey(t *testing.T) {
	dir := t.TempDir()
	rs, st := openRecords(t, dir, testVault(t, 1))
	if _, err := rs.Connect("u1", "gmail", integrations.Credentials{AccessToken: "a"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	rs, _ = openRecords(t, dir, testVault(t, 9))
	r, _ := rs.Find("u1", "gmail")
	if c, err := rs.Credentials(r); err == nil || c.AccessToken != "" {
		t.Errorf("opened under the wrong key: %v, %v", c, err)
	}
	// A ciphertext under a key the vault does not know is left alone, not
	// "rotated" into something else.
	if n, err := rs.RotateKeys(); n != 0 || err != nil {
		t.Errorf("rotate with an unrelated key: got %d, %v; want 0, nil", n, err)
	}
}

// TestRecordsCredentials: credentials are sealed to the record as JSON and
// open back whole; sealed data that is not credentials JSON gives an error
// that does not quote it.
func TestRecordsCredentials(t *testing.T) {
	v := testVault(t, 3)
	rs, _ := openRecords(t, t.TempDir(), v)
	c := integrations.Credentials{AccessToken: "ya29.SECRET", RefreshToken: "1//SECRET",
		ExpiresAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Fields: map[string]string{"password": "SECRET-pw"}}
	r := Record{ID: "r1", UserID: "u1", Integration: "gmail"}
	sealed, err := rs.SealCredentials(&r, c)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("SECRET")) {
		t.Fatal("sealed credentials hold a secret in clear")
	}
	r.Credentials = sealed
	got, err := rs.Credentials(r)
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessToken != c.AccessToken || got.Fields["password"] != c.Fields["password"] || !got.ExpiresAt.Equal(c.ExpiresAt) {
		t.Errorf("Credentials: got %v, want the sealed credentials", got)
	}
	r.Credentials = v.Seal(r.AAD(), []byte("not json SECRET"))
	if _, err := rs.Credentials(r); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("Credentials of non-JSON: got %v, want an error without the plaintext", err)
	}
	other := r
	other.UserID = "u2"
	other.Credentials = sealed
	if _, err := rs.Credentials(other); !errors.Is(err, vault.ErrCannotOpen) {
		t.Errorf("another user's record: got %v, want vault.ErrCannotOpen", err)
	}
}

// TestRecordsGetOwnership: Get answers the owner only; another user's
// record is ErrNotFound like an unknown one.
func TestRecordsGetOwnership(t *testing.T) {
	v := testVault(t, 3)
	rs, _ := openRecords(t, t.TempDir(), v)
	rec, err := rs.Connect("u1", "gmail", integrations.Credentials{AccessToken: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rs.Get("u1", rec.ID); err != nil || got.ID != rec.ID {
		t.Errorf("owner: got %v, %v; want the record", got.ID, err)
	}
	for _, tc := range []struct{ user, id string }{{"u2", rec.ID}, {"u1", "no-such-id"}} {
		if _, err := rs.Get(tc.user, tc.id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%s, %s): got %v, want ErrNotFound", tc.user, tc.id, err)
		}
	}
}
