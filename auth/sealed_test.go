package auth

import (
	"bytes"
	"testing"
	"time"

	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// openUsers opens a main store in dir with the users tables sealed by v.
func openUsers(t testing.TB, dir string, v *vault.Vault) (*Users, *storage.Store) {
	t.Helper()
	st := storage.New(dir, storage.Options{Sync: storage.SyncNone})
	u, err := NewUsers(st, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return u, st
}

func mustVault(t testing.TB, current []byte, previous ...[]byte) *vault.Vault {
	t.Helper()
	v, err := vault.New(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUsersRotateKeys: a user sealed under a previous CREDENTIALS_KEY
// opens, is re-sealed under the current one with its email index
// recomputed, and is then found by email without the previous key; a user
// under a key not given stops the rotation.
func TestUsersRotateKeys(t *testing.T) {
	dir := t.TempDir()
	oldKey, newKey := bytes.Repeat([]byte{1}, vault.KeySize), bytes.Repeat([]byte{2}, vault.KeySize)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ada := User{ID: "u1", Email: "ada@example.org", Name: "Ada", Role: RoleUser, PasswordHash: "h", CreatedAt: now, UpdatedAt: now}

	u, st := openUsers(t, dir, mustVault(t, oldKey))
	if err := st.Commit(u.InsertOp(ada)); err != nil {
		t.Fatal(err)
	}
	st.Close()

	u, st = openUsers(t, dir, mustVault(t, newKey, oldKey))
	if got, ok := u.Get("u1"); !ok || got.Email != ada.Email {
		t.Fatalf("Get under the previous key: got %+v, %v", got, ok)
	}
	if n, err := u.RotateKeys(); n != 1 || err != nil {
		t.Fatalf("RotateKeys: got %d, %v; want 1, nil", n, err)
	}
	if n, err := u.RotateKeys(); n != 0 || err != nil {
		t.Errorf("RotateKeys again: got %d, %v; want 0, nil", n, err)
	}
	st.Close()

	u, st = openUsers(t, dir, mustVault(t, newKey))
	if got, ok := u.byEmail("ADA@example.org"); !ok || got.ID != "u1" || got.Name != "Ada" {
		t.Errorf("byEmail under the new key alone: got %+v, %v", got, ok)
	}
	st.Close()

	u, _ = openUsers(t, dir, mustVault(t, bytes.Repeat([]byte{3}, vault.KeySize)))
	if _, ok := u.Get("u1"); ok {
		t.Error("Get under an unrelated key: got the user")
	}
	if _, err := u.RotateKeys(); err == nil {
		t.Error("RotateKeys with a user under an unknown key: got nil, want an error")
	}
}
