package items

import (
	"slices"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/storage"
)

// TestProviderIDs: the live items of one record, and only those: not
// another record's, not one removed at the provider.
func TestProviderIDs(t *testing.T) {
	s, owners := fillUsers(t, 2, 3)
	now := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	ops, gone := s.RemoveProviderOps(owners[0].RecordID, []string{"msg-1"}, now)
	if len(gone) != 1 {
		t.Fatalf("remove: got %d items, want 1", len(gone))
	}
	extra, err := s.NewItem(owners[1], &integrations.Item{ProviderID: "file@v2", Title: "x"}, now)
	if err != nil {
		t.Fatal(err)
	}
	ops = append(ops, s.InsertOp(extra))
	if err := s.st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		record string
		want   []string
	}{
		{owners[0].RecordID, []string{"msg-0", "msg-2"}},
		{owners[1].RecordID, []string{"file@v2", "msg-0", "msg-1", "msg-2"}},
		{"no-such-record", nil},
	} {
		got, err := s.ProviderIDs(tc.record)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ProviderIDs(%s): got %q, %v; want %q", tc.record, got, err, tc.want)
		}
	}
}

// TestProviderIDsSealed: metadata sealed under a key the store does not
// hold is an error, not a silent gap that would make a sync download
// everything again.
func TestProviderIDsSealed(t *testing.T) {
	st := storage.New(t.TempDir(), storage.Options{Sync: storage.SyncNone})
	s := New(st, testVault(t, 3), t.TempDir())
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	owner := Owner{UserID: "u", RecordID: "r", Integration: "dropbox"}
	it, err := New(storage.New(t.TempDir(), storage.Options{}), testVault(t, 4), t.TempDir()).NewItem(owner, &integrations.Item{ProviderID: "p"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(s.InsertOp(it)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ProviderIDs("r"); err == nil {
		t.Errorf("got %q, nil; want an error", got)
	}
}
