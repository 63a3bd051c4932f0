package syncer

import (
	"bytes"
	"testing"

	"searchsvc/integrations/fakemail"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
)

func TestSyncRotateKeys(t *testing.T) {
	f := newSyncFixture(t, 2)
	f.mail.Fill("lee", 9, f.clock.Now())
	rec := f.connectManual("u1", "lee")
	f.runOnce()
	f.mail.Fill("lee", 3, f.clock.Now())
	f.clock.Advance(syncPoll)
	f.mail.FailNext(fakemail.Fail{Kind: "get", Status: 503, RetryAfter: "60"})
	f.runOnce() // leaves download tasks, with sealed payloads, queued
	if f.syncer.Pending(rec.ID) == 0 {
		t.Fatal("no task queued")
	}

	oldKey, newK := bytes.Repeat([]byte{9}, vault.KeySize), testKey(t)
	f.vault = testVaultOf(t, newK, oldKey)
	f.reopen()
	if _, err := f.records.RotateKeys(); err != nil {
		t.Fatal(err)
	}
	n, err := rotate(f)
	if err != nil {
		t.Fatal(err)
	}
	items := f.liveItems(rec.ID)
	if want := 9 + f.syncer.Pending(rec.ID); len(items) != 9 || n != want {
		t.Errorf("re-sealed: got %d, want %d (items and task payloads)", n, want)
	}

	// Without the old key everything still opens, and the run finishes.
	f.vault = testVaultOf(t, newK)
	f.reopen()
	for _, it := range f.liveItems(rec.ID) {
		if _, err := f.syncer.items.View(&it); err != nil {
			t.Errorf("item %s metadata: %v", it.ID, err)
		}
		if _, err := f.syncer.items.Text(&it); err != nil {
			t.Errorf("item %s content: %v", it.ID, err)
		}
	}
	f.clock.Advance(syncPoll)
	f.runOnce()
	if got := f.wantStatus(rec, records.StatusConnected, ""); got.ItemsSynced != 12 || len(f.liveItems(rec.ID)) != 12 {
		t.Errorf("itemsSynced: got %d, want 12", got.ItemsSynced)
	}
	if n, err := rotate(f); err != nil || n != 0 {
		t.Errorf("a second rotation: got %d, %v; want nothing to do", n, err)
	}
}

// rotate re-seals what rotate-key re-seals of the syncer's: the items and
// the tasks' payloads and kept values.
func rotate(f *syncFixture) (int, error) {
	n, err := f.syncer.items.RotateKeys()
	if err != nil {
		return n, err
	}
	nt, err := f.tasks.RotateKeys()
	return n + nt, err
}
