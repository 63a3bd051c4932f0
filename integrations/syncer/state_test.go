package syncer

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"searchsvc/integrations/vault"
)

// TestSyncState: a record's kept values are sealed in the log, survive a
// restart, merge, forget an emptied key, are re-sealed by a key rotation
// and go with the record's disconnect.
func TestSyncState(t *testing.T) {
	f := newSyncFixture(t, 1)
	rec := f.connectManual("u1", "lee")
	r := &run{s: f.syncer, rec: rec, log: f.syncer.log, b: batch{seen: map[string]bool{}}}
	r.stageState(map[string]string{"cursor": "AAHf-secret-cursor", "other": "x"})
	if got := r.stateValue("cursor"); got != "AAHf-secret-cursor" {
		t.Errorf("staged: got %q", got)
	}
	if err := r.flush(true); err != nil {
		t.Fatal(err)
	}
	f.assertNothingPlain("secret-cursor")

	f.reopen()
	r = &run{s: f.syncer, rec: rec, log: f.syncer.log, b: batch{seen: map[string]bool{}}}
	if got := r.stateValue("cursor"); got != "AAHf-secret-cursor" {
		t.Errorf("after a restart: got %q", got)
	}
	r.stageState(map[string]string{"other": ""})
	if err := r.flush(true); err != nil {
		t.Fatal(err)
	}
	m, err := f.syncer.loadState(&rec)
	if err != nil || len(m) != 1 || m["cursor"] != "AAHf-secret-cursor" {
		t.Errorf("after forgetting other: got %v, %v", m, err)
	}

	oldKey, newK := bytes.Repeat([]byte{9}, vault.KeySize), testKey(t)
	f.vault = testVaultOf(t, newK, oldKey)
	f.reopen()
	if n, err := f.syncer.rotateState(); err != nil || n != 1 {
		t.Errorf("rotate: got %d, %v; want 1", n, err)
	}
	f.vault = testVaultOf(t, newK)
	f.reopen()
	if m, err := f.syncer.loadState(&rec); err != nil || m["cursor"] != "AAHf-secret-cursor" {
		t.Errorf("under the new key alone: got %v, %v", m, err)
	}

	if err := f.syncer.Disconnect(rec); err != nil {
		t.Fatal(err)
	}
	if rows := f.syncer.state.Find(stateIndexRecord, rec.ID); len(rows) != 0 {
		t.Errorf("the kept state outlived the disconnect: %d rows", len(rows))
	}
}

// TestSyncStateWritesChangedKeysOnly: a batch that sets one key writes
// that key's row, whatever else the record keeps, so a listing that keeps
// a key per page writes what the page costs.
func TestSyncStateWritesChangedKeysOnly(t *testing.T) {
	f := newSyncFixture(t, 1)
	rec := f.connectManual("u1", "lee")
	r := &run{s: f.syncer, rec: rec, log: f.syncer.log, b: batch{seen: map[string]bool{}}}
	big := map[string]string{}
	for i := range 50 {
		big[fmt.Sprintf("page.%d", i)] = strings.Repeat("x", 1000)
	}
	r.stageState(big)
	if err := r.flush(true); err != nil {
		t.Fatal(err)
	}
	r.stageState(map[string]string{"page.50": "y"})
	ops, _, err := r.stateOps(f.syncer.now())
	if err != nil || len(ops) != 1 {
		t.Fatalf("one key changed: got %d ops, %v; want 1", len(ops), err)
	}
}

// TestCheckKeysSeesSyncState: a kept state sealed under a key the vault
// does not hold stops the start, as credentials sealed so do, rather than
// a start whose every sync reads an empty state and lists everything.
func TestCheckKeysSeesSyncState(t *testing.T) {
	f := newSyncFixture(t, 1)
	rec := f.connectManual("u1", "lee")
	if err := f.syncer.CheckKeys(); err != nil {
		t.Fatalf("before: %v", err)
	}
	other := testVaultOf(t, bytes.Repeat([]byte{7}, vault.KeySize))
	row := stateRow{ID: rec.ID, UserID: rec.UserID, Integration: rec.Integration}
	sealed, err := other.Seal(row.aad(), []byte(`{"cursor":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	row.Value = sealed
	if err := f.syncer.st.Commit(f.syncer.state.Put(row)); err != nil {
		t.Fatal(err)
	}
	if err := f.syncer.CheckKeys(); !errors.Is(err, vault.ErrUnknownKey) || !strings.Contains(err.Error(), "1 sealed values") {
		t.Errorf("a state under another key: got %v, want vault.ErrUnknownKey counting 1 sealed value", err)
	}
}
