package storage

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// keeper is a ColdTable's caller for tests: a map of positions, the
// unique key of each record being its value's "k" field as text.
type keeper struct {
	refs    map[string]ColdRef
	keys    map[string]string // key → id
	keyOf   map[string]string // id → key
	applied int               // batches applied after Open
	opened  bool
}

func newKeeper() *keeper {
	return &keeper{refs: make(map[string]ColdRef), keys: make(map[string]string), keyOf: make(map[string]string)}
}

func (k *keeper) config() ColdConfig {
	return ColdConfig{
		Apply: func(puts []ColdPut, dels []string, replaying bool) error {
			if !replaying {
				k.applied++
			}
			for _, id := range dels {
				delete(k.keys, k.keyOf[id])
				delete(k.keyOf, id)
				delete(k.refs, id)
			}
			for _, p := range puts {
				if strings.Contains(string(p.V), `"bad"`) {
					return errors.New("a bad value")
				}
				delete(k.keys, k.keyOf[p.ID])
				key := ""
				if _, rest, ok := strings.Cut(string(p.V), `"k":"`); ok {
					key, _, _ = strings.Cut(rest, `"`)
				}
				k.refs[p.ID], k.keyOf[p.ID] = p.Ref, key
				if key != "" {
					k.keys[key] = p.ID
				}
			}
			return nil
		},
		Opened: func(time.Time) { k.opened = true },
		Keep: func(_ time.Time, fn func(string, ColdRef)) {
			for id, ref := range k.refs {
				fn(id, ref)
			}
		},
		Moved: func(refs []ColdPut) {
			for _, r := range refs {
				k.refs[r.ID] = r.Ref
			}
		},
		Ref:   func(id string) (ColdRef, bool) { r, ok := k.refs[id]; return r, ok },
		Owner: func(key string, _ func(string, ColdRef) ([]byte, error)) string { return k.keys[key] },
		Len:   func() int { return len(k.refs) },
	}
}

// TestColdTableKeptByCaller: a ColdTable's caller keeps positions only; every value
// reads back whole from the log through them, after commits, a
// compaction and a restart; an update sees the value as of the commits
// ahead of it; a taken key, an insert of a present id and a failed op
// leave nothing behind; a value the caller refuses at Open is a
// *CorruptError.
func TestColdTableKeptByCaller(t *testing.T) {
	dir := t.TempDir()
	open := func() (*Store, *ColdTable, *keeper) {
		t.Helper()
		s := New(dir, Options{Sync: SyncNone})
		k := newKeeper()
		ct := RegisterCold(s, "things", k.config())
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		if !k.opened {
			t.Fatal("Opened not called")
		}
		return s, ct, k
	}
	s, ct, k := open()
	want := map[string]string{}
	check := func(when string) {
		t.Helper()
		if got := slices.Sorted(maps.Keys(k.refs)); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
			t.Fatalf("%s: records %v, want %v", when, got, slices.Sorted(maps.Keys(want)))
		}
		for id, v := range want {
			if got, err := ct.Load(id); err != nil || string(got) != v {
				t.Fatalf("%s: Load(%s): %s, %v; want %s", when, id, got, err, v)
			}
		}
	}
	if err := s.Commit(ct.Insert("a", []byte(`{"k":"ka","n":1}`), "ka"), ct.Put("b", []byte(`{"k":"kb","n":1}`), "kb")); err != nil {
		t.Fatal(err)
	}
	want["a"], want["b"] = `{"k":"ka","n":1}`, `{"k":"kb","n":1}`
	check("after inserts")

	// Two updates of a in one commit: the second sees the first.
	bump := func(cur []byte) ([]byte, string, error) {
		return []byte(strings.Replace(string(cur), `"n":1`, `"n":2`, 1)), "ka", nil
	}
	again := func(cur []byte) ([]byte, string, error) {
		return []byte(strings.Replace(string(cur), `"n":2`, `"n":3`, 1)), "ka", nil
	}
	if err := s.Commit(ct.UpdateIfExists("a", bump), ct.UpdateIfExists("a", again), ct.UpdateIfExists("zz", bump)); err != nil {
		t.Fatal(err)
	}
	want["a"] = `{"k":"ka","n":3}`
	check("after updates")

	// Refused commits leave nothing: a key another holds, a present id,
	// a value that is not JSON.
	var ue *UniqueError
	if err := s.Commit(ct.Put("c", []byte(`{"k":"ka"}`), "ka")); !errors.As(err, &ue) {
		t.Errorf("put of a taken key: got %v, want a *UniqueError", err)
	}
	if err := s.Commit(ct.Put("c", []byte(`{"k":"kc"}`), "kc"), ct.Insert("a", []byte(`{}`), "")); !errors.Is(err, ErrExists) {
		t.Errorf("insert of a present id: got %v, want ErrExists", err)
	}
	if err := s.Commit(ct.Put("c", []byte(`{"k"`), "")); !errors.Is(err, ErrInvalid) {
		t.Errorf("put of a value that is not JSON: got %v, want ErrInvalid", err)
	}
	check("after refused commits")

	if err := s.Commit(ct.Delete("b"), ct.Delete("nothing")); err != nil {
		t.Fatal(err)
	}
	delete(want, "b")
	if err := s.Commit(ct.Put("c", []byte(`{"k":"kb"}`), "kb")); err != nil {
		t.Fatalf("put of a key freed by a delete: %v", err)
	}
	want["c"] = `{"k":"kb"}`
	check("after a delete")

	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	check("after a compaction")
	s.Close()
	s, ct, k = open()
	check("after a restart")
	s.Close()

	// A value the caller refuses at Open: a *CorruptError, no open.
	s, ct, _ = open()
	if err := s.Commit(ct.Put("d", []byte(`{"bad":1}`), "")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := New(dir, Options{Sync: SyncNone})
	RegisterCold(s2, "things", newKeeper().config())
	var ce *CorruptError
	if err := s2.Open(); !errors.As(err, &ce) || ce.File != filepath.Join(dir, logName(2)) {
		t.Errorf("open with a value the caller refuses: got %v, want a *CorruptError in %s", err, logName(2))
	}
	if _, err := os.Stat(filepath.Join(dir, logName(2))); err != nil {
		t.Errorf("the log: %v", err)
	}
}
