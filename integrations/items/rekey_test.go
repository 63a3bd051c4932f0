package items

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/storage"
)

// rekeyStore is a Store on a real store in a temporary directory, with
// three items of one record (a, b, c), their content files published,
// and one of another record (a).
func rekeyStore(t *testing.T) (*Store, *storage.Store, map[string]ItemRecord) {
	t.Helper()
	dir := t.TempDir()
	st := storage.New(filepath.Join(dir, "main"), storage.Options{Sync: storage.SyncNone})
	s := New(st, testVault(t, 3), filepath.Join(dir, "items"))
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)
	byPID := map[string]ItemRecord{}
	var ops []storage.Op
	var files []Staged
	for _, x := range []struct{ rec, pid string }{{"r1", "a"}, {"r1", "b"}, {"r1", "c"}, {"r2", "a"}} {
		out := &integrations.Item{ProviderID: x.pid, Title: "title " + x.pid, From: "ana@example.com", Date: now}
		it, err := s.NewItem(Owner{UserID: "u1", RecordID: x.rec, Integration: "imap"}, out, now)
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.Stage(&it, "text of "+x.pid)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		ops = append(ops, s.InsertOp(it))
		if x.rec == "r1" {
			byPID[x.pid] = it
		}
	}
	if err := s.Publish(files); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	return s, st, byPID
}

func TestRekeyOps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rekeys  []integrations.Rekey
		wantN   int
		wantIDs []string // r1's provider ids afterwards, sorted
	}{
		{"one", []integrations.Rekey{{From: "a", To: "a2"}}, 1, []string{"a2", "b", "c"}},
		{"two", []integrations.Rekey{{From: "a", To: "a2"}, {From: "b", To: "b2"}}, 2, []string{"a2", "b2", "c"}},
		{"unknown from", []integrations.Rekey{{From: "x", To: "x2"}}, 0, []string{"a", "b", "c"}},
		{"to taken", []integrations.Rekey{{From: "a", To: "b"}}, 0, []string{"a", "b", "c"}},
		{"to twice", []integrations.Rekey{{From: "a", To: "z"}, {From: "b", To: "z"}}, 1, []string{"b", "c", "z"}},
		{"empty to", []integrations.Rekey{{From: "a", To: ""}}, 0, []string{"a", "b", "c"}},
		{"same", []integrations.Rekey{{From: "a", To: "a"}}, 0, []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, st, byPID := rekeyStore(t)
			ops, n, err := s.RekeyOps("r1", tc.rekeys)
			if err != nil || n != tc.wantN || len(ops) != n {
				t.Fatalf("RekeyOps: got %d ops, n=%d, %v; want %d", len(ops), n, err, tc.wantN)
			}
			if err := st.Commit(ops...); err != nil {
				t.Fatal(err)
			}
			got, _ := s.ProviderIDs("r1")
			slices.Sort(got)
			if !slices.Equal(got, tc.wantIDs) {
				t.Errorf("provider ids: got %q, want %q", got, tc.wantIDs)
			}
			// Known follows: the new ids are known, the old ones not.
			for _, pid := range []string{"a", "b", "c", "a2", "b2", "z", "x", "x2"} {
				if got, want := s.Known("r1", pid), slices.Contains(tc.wantIDs, pid); got != want {
					t.Errorf("Known(%q): got %v, want %v", pid, got, want)
				}
			}
			// Same item, same content, same title: only the id moved.
			for pid, before := range byPID {
				it, err := s.Get(before.UserID, before.ID)
				if err != nil {
					t.Fatalf("item %s (%s) gone after a re-key", before.ID, pid)
				}
				m, err := s.OpenMeta(&it)
				if err != nil || m.Title != "title "+pid || m.From != "ana@example.com" {
					t.Errorf("item %s metadata: got %+v, %v; want title %q kept", pid, m, err, "title "+pid)
				}
				text, err := s.Text(&it)
				if err != nil || text != "text of "+pid {
					t.Errorf("item %s content: got %q, %v; want it untouched", pid, text, err)
				}
			}
			// The other record's item with the same provider id is not
			// touched.
			if !s.Known("r2", "a") {
				t.Error("r2's item a: not known after r1's re-key, want it untouched")
			}
		})
	}
}
