package syncer

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"searchsvc/integrations/records"
)

// recordingIndexer is an Indexer that writes down what it is told.
type recordingIndexer struct {
	mu    sync.Mutex
	calls []string
	items map[string]IndexedItem // by item id, as indexed
}

func (x *recordingIndexer) Index(userID string, its []IndexedItem) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.items == nil {
		x.items = make(map[string]IndexedItem)
	}
	for _, it := range its {
		x.items[it.ID] = it
	}
	x.calls = append(x.calls, fmt.Sprintf("index %s %d", userID, len(its)))
}

func (x *recordingIndexer) Remove(userID string, ids []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	ids = slices.Sorted(slices.Values(ids))
	x.calls = append(x.calls, "remove "+userID+" "+strings.Join(ids, ","))
}

func (x *recordingIndexer) RemoveRecord(userID, recordID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.calls = append(x.calls, "removeRecord "+userID+" "+recordID)
}

func (x *recordingIndexer) RemoveUser(userID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.calls = append(x.calls, "removeUser "+userID)
}

func (x *recordingIndexer) take() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := x.calls
	x.calls = nil
	return out
}

// TestIndexerHook: the Indexer hears of every item stored (with its
// text), of items the provider deleted, of a disconnected record and of a
// deleted user, each once its change is committed.
func TestIndexerHook(t *testing.T) {
	f := newSyncFixture(t, 1)
	ix := &recordingIndexer{}
	f.syncer.index = ix
	f.mail.Fill("alice", 5, f.clock.Now())
	rec, _ := f.connect("u1", "alice")
	f.runOnce()

	// Stored: one batch of five, with their opened metadata and text.
	if got, want := ix.take(), []string{"index u1 5"}; !slices.Equal(got, want) {
		t.Fatalf("calls after the first sync: got %q, want %q", got, want)
	}
	live := f.liveItems(rec.ID)
	if len(live) != 5 || len(ix.items) != 5 {
		t.Fatalf("items: %d live, %d indexed; want 5 and 5", len(live), len(ix.items))
	}
	bodies := make(map[string]string)
	for _, m := range f.mail.Boxes["alice"] {
		bodies[m.Subject] = m.Body
	}
	for _, it := range live {
		got, ok := ix.items[it.ID]
		if !ok || got.RecordID != rec.ID || got.Integration != rec.Integration || !got.Date.Equal(it.Date) {
			t.Errorf("item %s: indexed %+v, want its ids and date", it.ID, got)
			continue
		}
		if got.Title == "" || got.Text != bodies[got.Title] || len(got.To) != 1 {
			t.Errorf("item %s: indexed title %q text %q, want the message's", it.ID, got.Title, got.Text)
		}
	}

	// Deleted at the provider: the next start reports two ids, which
	// leave the item store, their files and the index.
	f.mail.Mu.Lock()
	gone := f.mail.Boxes["alice"][:2]
	f.mail.Boxes["alice"] = slices.Clone(f.mail.Boxes["alice"][2:])
	f.mail.Deleted["alice"] = []string{gone[0].ID, gone[1].ID, "never-synced"}
	f.mail.Mu.Unlock()
	var goneIDs []string
	for _, it := range live {
		if m, _ := f.syncer.items.OpenMeta(&it); m.ProviderID == gone[0].ID || m.ProviderID == gone[1].ID {
			goneIDs = append(goneIDs, it.ID)
			defer func(path string) {
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("content file of an item deleted at the provider: %v, want it removed", err)
				}
			}(f.syncer.items.Path(&it))
		}
	}
	slices.Sort(goneIDs)
	if err := f.syncer.SyncNow(rec.UserID, rec.ID); err != nil {
		t.Fatal(err)
	}
	f.runOnce()
	if got, want := ix.take(), []string{"remove u1 " + strings.Join(goneIDs, ",")}; !slices.Equal(got, want) {
		t.Errorf("calls after a provider deletion: got %q, want %q", got, want)
	}
	if n := len(f.liveItems(rec.ID)); n != 3 {
		t.Errorf("live items after a provider deletion: got %d, want 3", n)
	}

	// Disconnected.
	if err := f.syncer.Disconnect(rec); err != nil {
		t.Fatal(err)
	}
	if got, want := ix.take(), []string{"removeRecord u1 " + rec.ID}; !slices.Equal(got, want) {
		t.Errorf("calls after a disconnect: got %q, want %q", got, want)
	}
	if n := len(f.liveItems(rec.ID)); n != 0 {
		t.Errorf("live items after a disconnect: got %d, want 0", n)
	}

	// A deleted user: the ops go with the user's own soft delete, the
	// Indexer hears once it is committed.
	f.mail.Fill("bob", 2, f.clock.Now())
	bob, _ := f.connect("u2", "bob")
	f.runOnce()
	ix.take()
	if err := f.st.Commit(f.syncer.DeleteUserOps("u2")...); err != nil {
		t.Fatal(err)
	}
	f.syncer.DeletedUser("u2")
	if got, want := ix.take(), []string{"removeUser u2"}; !slices.Equal(got, want) {
		t.Errorf("calls after a user deletion: got %q, want %q", got, want)
	}
	if got := f.record(bob.ID); got.Status != records.StatusDisconnected || len(f.liveItems(bob.ID)) != 0 {
		t.Errorf("bob's record after the user's deletion: %s with %d live items, want disconnected and none", got.Status, len(f.liveItems(bob.ID)))
	}
}
