package syncer

import (
	"fmt"
	"testing"

	"searchsvc/integrations"
)

// TestSweepBeforeRun: Sweep runs the start's sweep at once (a count off
// is set right before any scheduling pass), and the loop that follows
// does not sweep a second time: serve sweeps as a step of its start,
// then runs the syncer.
func TestSweepBeforeRun(t *testing.T) {
	s := &stubScript{run: func(env integrations.Env, task integrations.Task) (integrations.TaskResult, error) {
		var res integrations.TaskResult
		for i := range 5 {
			res.Output = append(res.Output, integrations.Item{ProviderID: fmt.Sprint("m", i), Title: fmt.Sprint("Mail ", i)})
		}
		return res, nil
	}}
	f, rec := newStubFixture(t, s)
	if err := f.syncer.SyncNow(rec.UserID, rec.ID); err != nil {
		t.Fatal(err)
	}
	f.runOnce()
	if err := f.st.Commit(f.records.CountOp(rec.ID, 9)); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	f.syncer.Sweep()
	if got := f.record(rec.ID).ItemsSynced; got != 5 {
		t.Fatalf("after Sweep: itemsSynced %d, want 5", got)
	}
	// A count set off after the start's sweep stays as it is: the loop
	// sweeps only if Sweep has not.
	if err := f.st.Commit(f.records.CountOp(rec.ID, 9)); err != nil {
		t.Fatal(err)
	}
	s.run = func(env integrations.Env, task integrations.Task) (integrations.TaskResult, error) {
		return integrations.TaskResult{}, nil
	}
	f.runOnce()
	if got := f.record(rec.ID).ItemsSynced; got != 9 {
		t.Errorf("after Sweep and a pass: itemsSynced %d, want 9 (not swept twice)", got)
	}
}
