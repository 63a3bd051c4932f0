package syncer

import (
	"fmt"
	"testing"

	"searchsvc/integrations"
)

// TestItemsSyncedGoesDown: a record's itemsSynced is what it holds now:
// items the provider reports deleted leave the count, as they leave the
// store; and a count kept before that rule (one that only went up) is set
// right at the next start, before any sync.
func TestItemsSyncedGoesDown(t *testing.T) {
	gone := []string{}
	s := &stubScript{run: func(env integrations.Env, task integrations.Task) (integrations.TaskResult, error) {
		var res integrations.TaskResult
		for i := range 5 {
			res.Output = append(res.Output, integrations.Item{ProviderID: fmt.Sprint("m", i), Title: fmt.Sprint("Mail ", i)})
		}
		res.Removed = gone
		return res, nil
	}}
	f, rec := newStubFixture(t, s)
	if err := f.syncer.SyncNow(rec.UserID, rec.ID); err != nil {
		t.Fatal(err)
	}
	f.runOnce()
	if got := f.record(rec.ID).ItemsSynced; got != 5 {
		t.Fatalf("first sync: itemsSynced %d, want 5", got)
	}
	// Two mails deleted at the provider: the count goes down with them.
	gone = []string{"m1", "m3"}
	s.run = func(env integrations.Env, task integrations.Task) (integrations.TaskResult, error) {
		return integrations.TaskResult{Removed: gone}, nil
	}
	f.clock.Advance(2 * syncPoll)
	if err := f.syncer.SyncNow(rec.UserID, rec.ID); err != nil {
		t.Fatal(err)
	}
	f.runOnce()
	if got, live := f.record(rec.ID).ItemsSynced, len(f.liveItems(rec.ID)); got != 3 || live != 3 {
		t.Fatalf("after two deletions: itemsSynced %d, live items %d; want 3, 3", got, live)
	}
	// A count that only ever went up, as kept before: the next start sets
	// it to what the record holds.
	if err := f.st.Commit(f.records.CountOp(rec.ID, 9)); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	s.run = func(env integrations.Env, task integrations.Task) (integrations.TaskResult, error) {
		return integrations.TaskResult{}, nil
	}
	f.runOnce()
	if got := f.record(rec.ID).ItemsSynced; got != 3 {
		t.Errorf("after a restart: itemsSynced %d, want 3", got)
	}
}
