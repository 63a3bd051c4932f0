package items

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"searchsvc/integrations"
	"searchsvc/storage"
)

// TestEntrySize: what memory keeps of an item is 44 bytes in the slice of
// entries (the hash tables and page orders add about 13 more): the key is
// a 3-byte fingerprint, the user is the record's, the position in the log
// 12 bytes, and no field is aligned to 8.
func TestEntrySize(t *testing.T) {
	if got := unsafe.Sizeof(entry{}); got != 44 {
		t.Errorf("entry: got %d bytes, want 44", got)
	}
	if got := unsafe.Sizeof([entryChunk]entry{}); got != 44*entryChunk {
		t.Errorf("chunk: got %d bytes, want %d", got, 44*entryChunk)
	}
}

// printTwins returns two provider ids of the record whose keys differ
// but share their fingerprint (keyPrint), found by the birthday bound in
// a few thousand tries.
func printTwins(t *testing.T, recordID string) (string, string) {
	t.Helper()
	seen := map[uint32]string{}
	for i := range 1 << 16 {
		pid := fmt.Sprint("m", i)
		k, _ := parseKey(itemKey(recordID, pid))
		if other, ok := seen[keyPrint(k)]; ok {
			return other, pid
		}
		seen[keyPrint(k)] = pid
	}
	t.Fatal("no two keys with one fingerprint")
	return "", ""
}

// TestKeyFingerprintTwins: two mails whose keys share a fingerprint are
// told apart by the key in the record read back, before and after a
// restart: the second is not taken for known, its key is free to store,
// and each one's removal finds its own item.
func TestKeyFingerprintTwins(t *testing.T) {
	dir := t.TempDir()
	st, s := pageStore(t, dir)
	owner := Owner{UserID: "u1", RecordID: "r1", Integration: "gmail"}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	a, b := printTwins(t, owner.RecordID)
	itA, err := s.NewItem(owner, &integrations.Item{ProviderID: a, Title: "a", Date: now}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(s.InsertOp(itA)); err != nil {
		t.Fatal(err)
	}
	if !s.Known("r1", a) || s.Known("r1", b) {
		t.Fatalf("Known: got %v for a, %v for its twin; want true, false", s.Known("r1", a), s.Known("r1", b))
	}
	itB, err := s.NewItem(owner, &integrations.Item{ProviderID: b, Title: "b", Date: now}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(s.InsertOp(itB)); err != nil {
		t.Fatalf("storing the twin: %v", err)
	}
	st.Close()
	st, s = pageStore(t, dir)
	if !s.Known("r1", a) || !s.Known("r1", b) || s.Known("r1", "neither") {
		t.Fatalf("after a restart: Known a %v, b %v", s.Known("r1", a), s.Known("r1", b))
	}
	// The key of a live item is still refused to another.
	dup := itA
	dup.ID = "0b9f7a2e-1111-4c6e-9a57-000000000009"
	var ue *storage.UniqueError
	if err := st.Commit(s.InsertOp(dup)); !errors.As(err, &ue) {
		t.Fatalf("a second item with a's key: got %v, want a *storage.UniqueError", err)
	}
	ops, gone := s.RemoveProviderOps("r1", []string{b}, now)
	if len(gone) != 1 || gone[0].ID != itB.ID {
		t.Fatalf("RemoveProviderOps(b): got %d items, want b's", len(gone))
	}
	if err := st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	if !s.Known("r1", a) || s.Known("r1", b) {
		t.Fatalf("after removing b: Known a %v, b %v; want true, false", s.Known("r1", a), s.Known("r1", b))
	}
}

// TestItemsReadBackFromLog: after a restart memory holds no item's sealed
// metadata: Get, Page and the items of a record read it back from the
// log, checked, so bytes damaged since they were written are a
// *storage.CorruptError, while what memory keeps (Known, the page order)
// still answers.
func TestItemsReadBackFromLog(t *testing.T) {
	dir := t.TempDir()
	st, s := pageStore(t, dir)
	owner := Owner{UserID: "u1", RecordID: "r1", Integration: "gmail"}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	var ops []storage.Op
	for i, pid := range []string{"a", "b", "c"} {
		it, err := s.NewItem(owner, &integrations.Item{ProviderID: pid, Title: "title " + pid,
			Date: now.Add(time.Duration(i) * time.Minute)}, now)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, it.ID)
		ops = append(ops, s.InsertOp(it))
	}
	if err := st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, s = pageStore(t, dir)

	// Whole, after the restart.
	it, err := s.Get(owner.UserID, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if m, err := s.OpenMeta(&it); err != nil || m.Title != "title b" || m.ProviderID != "b" {
		t.Fatalf("item b: got %+v, %v; want title %q", m, err, "title b")
	}
	q := Query{UserID: owner.UserID, Records: map[string]bool{owner.RecordID: true}, Limit: 10}
	if page, _ := mustPage(t, s, q); !slices.Equal(pageIDs(page), []string{ids[2], ids[1], ids[0]}) {
		t.Fatalf("page: got %v, want %v", pageIDs(page), []string{ids[2], ids[1], ids[0]})
	}

	// One byte of b's sealed metadata changed in the log.
	logs, _ := filepath.Glob(filepath.Join(dir, "main", "log.*.jsonl"))
	raw, err := os.ReadFile(logs[len(logs)-1])
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(raw, []byte(`"v":{"id":"`+ids[1]+`"`))
	meta := bytes.Index(raw[at:], []byte(`"meta":"`))
	if at < 0 || meta < 0 {
		t.Fatalf("item b's metadata not found in the log")
	}
	off := int64(at + meta + len(`"meta":"`) + 10)
	c := raw[off] ^ 1
	f, err := os.OpenFile(logs[len(logs)-1], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{c}, off); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var ce *storage.CorruptError
	if _, err := s.Get(owner.UserID, ids[1]); !errors.As(err, &ce) {
		t.Errorf("Get of the damaged item: got %v, want a *storage.CorruptError", err)
	}
	if _, _, err := s.Page(q); !errors.As(err, &ce) {
		t.Errorf("page holding the damaged item: got %v, want a *storage.CorruptError", err)
	}
	if _, err := s.Get(owner.UserID, ids[0]); err != nil {
		t.Errorf("Get of an undamaged item: %v", err)
	}
	if !s.Known(owner.RecordID, "b") {
		t.Error("Known(b): false, want true (memory keeps the key)")
	}
	if got := s.LiveIDs(owner.UserID); !slices.Equal(got, []string{ids[2], ids[1], ids[0]}) {
		t.Errorf("live ids: got %v, want %v", got, []string{ids[2], ids[1], ids[0]})
	}
	// What takes no error gives the damaged item without its metadata, so
	// that opening it fails where it is used.
	for _, it := range s.ForRecord(owner.RecordID) {
		if it.ID == ids[1] {
			if _, err := s.OpenMeta(&it); err == nil {
				t.Error("ForRecord's damaged item opens, want an error")
			}
		}
	}
}

// TestInsertRefusesWhatMemoryCannotKeep: an item whose id is not a UUID
// fails its commit (ErrInvalid) rather than being kept in the log and not
// in memory; a key another live item holds is a *storage.UniqueError.
func TestInsertRefusesWhatMemoryCannotKeep(t *testing.T) {
	st, s := pageStore(t, t.TempDir())
	if err := st.Commit(s.InsertOp(testItem("i1", "u1", "r1", 0))); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("insert of id i1: got %v, want ErrInvalid", err)
	}
	a := testItem("0000000a-0000-4000-8000-000000000000", "u1", "r1", 0)
	b := testItem("0000000b-0000-4000-8000-000000000000", "u1", "r1", 0)
	b.Key = a.Key
	if err := st.Commit(s.InsertOp(a)); err != nil {
		t.Fatal(err)
	}
	var ue *storage.UniqueError
	if err := st.Commit(s.InsertOp(b)); !errors.As(err, &ue) {
		t.Errorf("insert of a taken key: got %v, want a *storage.UniqueError", err)
	}
	if n := s.Len(); n != 1 {
		t.Errorf("items: got %d, want 1", n)
	}
}

// TestFastFields: the fields a start reads without encoding/json are
// those encoding/json reads, for live and deleted items; a value not in
// json.Marshal's layout (an escape, another order) is left to it.
func TestFastFields(t *testing.T) {
	at := time.Date(2026, 11, 1, 2, 3, 4, 5, time.UTC)
	live := ItemRecord{ID: "0000000a-0000-4000-8000-000000000000", UserID: "u1", RecordID: "r1", Integration: "gmail",
		Key: itemKey("r1", "p"), Meta: []byte("sealed meta"), Date: at, Size: 12, CreatedAt: at}
	gone := live
	scrub(&gone, at.Add(time.Hour))
	odd := live
	odd.UserID = `u"1`
	packed := live
	packed.Content = "3.1048576.912"
	for _, tc := range []struct {
		name string
		it   ItemRecord
		fast bool
	}{{"live", live, true}, {"deleted", gone, true}, {"escaped", odd, false}, {"packed", packed, true}} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(&tc.it)
			if err != nil {
				t.Fatal(err)
			}
			var want, got coldFields
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if ok := fastFields(raw, &got); ok != tc.fast {
				t.Fatalf("fast path: got %v, want %v", ok, tc.fast)
			}
			if !tc.fast {
				return
			}
			if got.ID != want.ID || got.UserID != want.UserID || got.RecordID != want.RecordID || got.Integ != want.Integ ||
				got.Key != want.Key || string(got.Meta) != string(want.Meta) || !got.Date.Equal(want.Date) ||
				(got.DeletedAt == nil) != (want.DeletedAt == nil) || got.DeletedAt != nil && !got.DeletedAt.Equal(*want.DeletedAt) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
	if ok := fastFields([]byte(`{"userId":"u1","id":"x"}`), new(coldFields)); ok {
		t.Error("fields in another order: fast path taken, want encoding/json")
	}
}

// TestReadersBesideCommits: pages, lookups and lists read while commits
// of new users' items are checked and applied (run with -race: the
// writer's check must change nothing readers read).
func TestReadersBesideCommits(t *testing.T) {
	st, s := pageStore(t, t.TempDir())
	done := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, u := range s.Users() {
					if _, _, err := s.Page(Query{UserID: u, Records: map[string]bool{"r-" + u: true}, Limit: 5}); err != nil {
						t.Error(err)
						return
					}
					s.LiveIDs(u)
				}
				s.Known("r-u1", "p")
			}
		})
	}
	for i := range 200 {
		u := fmt.Sprintf("u%d", i)
		it := testItem(fmt.Sprintf("%08x-0000-4000-8000-000000000000", i), u, "r-"+u, i)
		if err := st.Commit(s.InsertOp(it)); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	readers.Wait()
	if n := len(s.Users()); n != 200 {
		t.Errorf("users with items: got %d, want 200", n)
	}
}
