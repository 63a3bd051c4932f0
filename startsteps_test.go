package main

import (
	"log/slog"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/items"
)

// TestStartSteps: the start's one-off work runs as a step of serve's
// start, before it listens: the syncer's sweep sets a record's item count
// that was off (a commit), the dashboard has its first sample, and the
// position returned, which the index compares its checkpoint with, is the
// store's from before that commit (compared after it, an index level with
// the store would be caught up for nothing).
func TestStartSteps(t *testing.T) {
	env := map[string]string{"DATA_DIR": t.TempDir(), "SESSION_SECURE": "false", "STORE_SYNC": "none"}
	c, err := loadConfig(envFunc(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.devSecrets(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	a, err := openApp(c, envFunc(env), log)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close(log)
	const userID = "00000000-0000-4000-8000-000000000001"
	rec, err := a.records.Connect(userID, "gmail", integrations.Credentials{AccessToken: "a", RefreshToken: "r"})
	if err != nil {
		t.Fatal(err)
	}
	// An item stored without its record's count (ItemsSynced stays 0).
	its := a.syncer.Items()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	it, err := its.NewItem(items.Owner{UserID: userID, RecordID: rec.ID, Integration: rec.Integration},
		&integrations.Item{ProviderID: "m1", Title: "Invoice", Date: now}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.mainStore.Commit(its.InsertOp(it)); err != nil {
		t.Fatal(err)
	}
	before := a.mainStore.Position()
	if _, ok := a.dashboard.growth.Latest(); ok {
		t.Fatal("the dashboard has a sample before the start's steps")
	}

	pos := startSteps(a)

	if pos != before {
		t.Errorf("position returned: %+v, want the store's before the steps, %+v", pos, before)
	}
	if after := a.mainStore.Position(); after == before {
		t.Errorf("the store's position did not move: the recount committed nothing")
	}
	if got, ok := a.records.ByID(rec.ID); !ok || got.ItemsSynced != 1 {
		t.Errorf("record after the steps: itemsSynced %d (found %v), want 1", got.ItemsSynced, ok)
	}
	if _, ok := a.dashboard.growth.Latest(); !ok {
		t.Error("the dashboard has no sample after the start's steps")
	}
}
