package syncer

import (
	"testing"
	"time"

	"searchsvc/integrations/records"
)

// idleFixture is a record synced once, its mailbox holding 5 mails.
func idleFixture(t *testing.T) (*syncFixture, records.Record, time.Time) {
	t.Helper()
	f := newSyncFixture(t, 2)
	f.mail.Fill("alice", 5, f.clock.Now().Add(-time.Hour))
	rec := f.connectManual("u1", "alice")
	f.runOnce()
	got := f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 5 || got.LastSyncAt == nil {
		t.Fatalf("first sync: itemsSynced %d, lastSyncAt %v; want 5, set", got.ItemsSynced, got.LastSyncAt)
	}
	return f, rec, *got.LastSyncAt
}

// poll advances the clock a poll interval and runs the due polls; it
// returns how many lists the provider was asked for.
func (f *syncFixture) poll() int {
	f.t.Helper()
	before := len(f.mail.Listed())
	f.clock.Advance(syncPoll)
	f.runOnce()
	return len(f.mail.Listed()) - before
}

func TestIdlePollsCommitNothing(t *testing.T) {
	f, rec, first := idleFixture(t)
	commits := f.st.Stats().Commits
	for i := range 3 { // 45 minutes: under idleSaveEvery
		if n := f.poll(); n == 0 {
			t.Fatalf("poll %d did not list the mailbox", i)
		}
	}
	if n := f.st.Stats().Commits - commits; n != 0 {
		t.Errorf("3 idle polls: %d store commits, want 0", n)
	}
	stored := f.record(rec.ID)
	if !stored.LastSyncAt.Equal(first) || stored.ItemsSynced != 5 {
		t.Errorf("stored record after idle polls: lastSyncAt %v, itemsSynced %d; want %v, 5", stored.LastSyncAt, stored.ItemsSynced, first)
	}
	if at := f.syncer.LastSyncAt(stored); at == nil || !at.Equal(f.clock.Now()) {
		t.Errorf("LastSyncAt shown: %v, want the last poll's %v", at, f.clock.Now())
	}
	if a := f.syncer.Activity(rec.ID); a != (Activity{State: ActivityIdle, LastSyncAt: f.clock.Now()}) {
		t.Errorf("Activity after idle polls: %+v, want idle with the last poll's time", a)
	}
	if n := f.syncer.Pending(rec.ID); n != 0 || f.tasks.tasks.Len() != 0 {
		t.Errorf("tasks after idle polls: pending %d, table %d; want none", n, f.tasks.tasks.Len())
	}
	// A poll not yet due does not run: the schedule counts from the poll
	// kept in memory, not from the stored lastSyncAt.
	f.clock.Advance(syncPoll - time.Second)
	before := len(f.mail.Listed())
	f.runOnce()
	if n := len(f.mail.Listed()) - before; n != 0 {
		t.Errorf("lists before the next poll is due: %d, want 0", n)
	}

	if err := f.syncer.Close(); err != nil {
		t.Fatal(err)
	}
	want := f.clock.Now().Add(-(syncPoll - time.Second))
	if n := f.st.Stats().Commits - commits; n != 1 {
		t.Errorf("Close: %d store commits, want 1", n)
	}
	if got := f.record(rec.ID).LastSyncAt; got == nil || !got.Equal(want) {
		t.Errorf("stored lastSyncAt after Close: %v, want %v", got, want)
	}
	if err := f.syncer.Close(); err != nil || f.st.Stats().Commits-commits != 1 {
		t.Errorf("a second Close: err %v, commits %d; want nil, still 1", err, f.st.Stats().Commits-commits)
	}
}

func TestIdlePollsSavedHourly(t *testing.T) {
	f, rec, _ := idleFixture(t)
	commits := f.st.Stats().Commits
	for range 5 {
		f.poll()
	}
	// The 5th pass is an hour after the first unsaved poll: it stores the
	// 4th poll's time before polling, the 5th staying in memory.
	if n := f.st.Stats().Commits - commits; n != 1 {
		t.Errorf("5 idle polls over an hour: %d store commits, want 1", n)
	}
	if got, want := f.record(rec.ID).LastSyncAt, f.clock.Now().Add(-syncPoll); got == nil || !got.Equal(want) {
		t.Errorf("stored lastSyncAt: %v, want the 4th poll's %v", got, want)
	}
}

func TestIdlePollCrashLosesNothing(t *testing.T) {
	f, rec, first := idleFixture(t)
	f.poll()
	f.poll()
	f.mail.Fill("alice", 2, f.clock.Now())
	// A crash: the store is reopened without the syncer's Close.
	f.reopen()
	got := f.record(rec.ID)
	if !got.LastSyncAt.Equal(first) || f.tasks.tasks.Len() != 0 {
		t.Fatalf("after the crash: lastSyncAt %v, tasks %d; want %v, none", got.LastSyncAt, f.tasks.tasks.Len(), first)
	}
	// The schedule polls at once from the stored lastSyncAt, and finds
	// the new mails.
	before := len(f.mail.Listed())
	f.runOnce()
	if n := len(f.mail.Listed()) - before; n == 0 {
		t.Errorf("no poll after the restart")
	}
	got = f.wantStatus(rec, records.StatusConnected, "")
	if got.ItemsSynced != 7 || len(f.liveItems(rec.ID)) != 7 || !got.LastSyncAt.Equal(f.clock.Now()) {
		t.Errorf("after the restart's poll: itemsSynced %d, items %d, lastSyncAt %v; want 7, 7, %v",
			got.ItemsSynced, len(f.liveItems(rec.ID)), got.LastSyncAt, f.clock.Now())
	}
}
