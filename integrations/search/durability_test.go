package search

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestDeletes(t *testing.T) {
	for _, flushFirst := range []bool{false, true} {
		name := "buffered"
		if flushFirst {
			name = "flushed"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ix := openTest(t, dir)
			ix.Add(userA, handDocs()...)
			if flushFirst {
				ix.Flush()
			}
			if err := ix.Delete(userA, "d1"); err != nil {
				t.Fatal(err)
			}
			if err := ix.DeleteRecord(userA, "r2"); err != nil {
				t.Fatal(err)
			}
			// Re-adding replaces: d2 no longer says "lunch".
			d2 := handDocs()[1]
			d2.Text = "A report of dinner plans."
			ix.Add(userA, d2)
			check := func(stage string) {
				t.Helper()
				cases := []struct {
					q    Node
					want []string
				}{
					{qterm("quarterly"), []string{"d5"}},
					{qterm("invoice"), []string{}},
					{qterm("lunch"), []string{"d2"}}, // the title still says Lunch
					{qfield(FieldText, "lunch"), []string{}},
					{qterm("dinner"), []string{"d2"}},
					{Not{Child: qterm("zeppelin")}, []string{"d2", "d4", "d5"}},
				}
				for _, tc := range cases {
					res := search(t, ix, userA, Request{Query: tc.q})
					if got := sorted(hitIDs(res)); !slices.Equal(got, tc.want) || res.Total != len(tc.want) {
						t.Errorf("%s %#v: got %v (total %d), want %v", stage, tc.q, got, res.Total, tc.want)
					}
				}
				ids, _ := ix.IDs(userA)
				if got := sorted(ids); !slices.Equal(got, []string{"d2", "d4", "d5"}) {
					t.Errorf("%s IDs: got %v", stage, got)
				}
			}
			check("at once")
			ix.Flush()
			check("flushed")
			ix.Close()
			ix = openTest(t, dir)
			check("reopened")
			if err := ix.DeleteUser(userA); err != nil {
				t.Fatal(err)
			}
			if res := search(t, ix, userA, Request{Query: qterm("report")}); len(res.Hits) != 0 {
				t.Errorf("after DeleteUser: got %v", hitIDs(res))
			}
			if _, err := os.Stat(filepath.Join(dir, userA)); !os.IsNotExist(err) {
				t.Errorf("after DeleteUser the directory is still there: %v", err)
			}
			ix.Close()
			ix = openTest(t, dir)
			if res := search(t, ix, userA, Request{Query: qterm("report")}); len(res.Hits) != 0 {
				t.Errorf("after DeleteUser and reopen: got %v", hitIDs(res))
			}
		})
	}
}

func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir)
	if got := ix.Checkpoint(); got != 0 {
		t.Errorf("fresh index: checkpoint %d, want 0", got)
	}
	ix.Add(userA, handDocs()...)
	ix.SetCheckpoint(42)
	if got := ix.Checkpoint(); got != 0 {
		t.Errorf("before the flush: checkpoint %d, want 0", got)
	}
	ix.Flush()
	if got := ix.Checkpoint(); got != 42 {
		t.Errorf("after the flush: checkpoint %d, want 42", got)
	}
	ix.Close()
	ix = openTest(t, dir)
	if got := ix.Checkpoint(); got != 42 {
		t.Errorf("reopened: checkpoint %d, want 42", got)
	}
}

// TestDamage flips a byte in each block of a segment in turn: the damage
// is found, reported, and queries keep answering from the rest.
func TestDamage(t *testing.T) {
	base := t.TempDir()
	ix := openTest(t, base)
	ix.Add(userA, handDocs()[:3]...)
	ix.Flush()
	ix.Add(userA, handDocs()[3:]...)
	ix.Flush()
	ix.Close()
	segs, _ := filepath.Glob(filepath.Join(base, userA, "*.seg"))
	if len(segs) != 2 {
		t.Fatalf("segments: got %d, want 2", len(segs))
	}
	slices.Sort(segs)
	orig, _ := os.ReadFile(segs[0])
	for off := 0; off < len(orig); off += max(1, len(orig)/40) {
		dir := t.TempDir()
		copyDir(t, base, dir)
		b := slices.Clone(orig)
		b[off] ^= 0x20
		os.WriteFile(filepath.Join(dir, userA, filepath.Base(segs[0])), b, 0o600)
		var mu sync.Mutex
		var reported []string
		ix := openTest(t, dir, func(c *Config) {
			c.OnDamage = func(u string) { mu.Lock(); reported = append(reported, u); mu.Unlock() }
		})
		// Queries find damage in the blocks they read, Verify in any.
		for _, tc := range queryCases {
			if _, err := ix.Search(userA, Request{Query: tc.q}); err != nil {
				t.Fatalf("offset %d: %s: %v", off, tc.name, err)
			}
		}
		if err := ix.Verify(); err != nil {
			t.Fatal(err)
		}
		res := search(t, ix, userA, Request{Query: qterm("budget")})
		if got := hitIDs(res); !slices.Equal(got, []string{"d4"}) {
			t.Errorf("offset %d: the intact segment answers %v, want [d4]", off, got)
		}
		if got := ix.NeedsRebuild(); !slices.Equal(got, []string{userA}) {
			t.Errorf("offset %d: NeedsRebuild %v, want [%s]", off, got, userA)
		}
		mu.Lock()
		if !slices.Equal(reported, []string{userA}) {
			t.Errorf("offset %d: OnDamage got %v", off, reported)
		}
		mu.Unlock()
		// The caller reconciles: re-adds what the index lacks.
		ids, _ := ix.IDs(userA)
		for _, d := range handDocs() {
			if !slices.Contains(ids, d.ID) {
				ix.Add(userA, d)
			}
		}
		ix.Rebuilt(userA)
		ix.Close()
		ix = openTest(t, dir)
		checkQueries(t, ix)
		if got := ix.NeedsRebuild(); len(got) != 0 {
			t.Errorf("offset %d: after the rebuild NeedsRebuild %v", off, got)
		}
		ix.Close()
	}
}

func TestDamagedManifest(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir)
	ix.Add(userA, handDocs()...)
	ix.Add(userB, handDocs()...)
	ix.Close()
	path := filepath.Join(dir, userA, manifestName)
	b, _ := os.ReadFile(path)
	b[len(b)-3] ^= 1
	os.WriteFile(path, b, 0o600)
	ix = openTest(t, dir)
	if got := ix.NeedsRebuild(); !slices.Equal(got, []string{userA}) {
		t.Errorf("NeedsRebuild %v, want [%s]", got, userA)
	}
	if res := search(t, ix, userB, Request{Query: qterm("quarterly")}); res.Total != 3 {
		t.Errorf("the other user: total %d, want 3", res.Total)
	}
	if res := search(t, ix, userA, Request{Query: qterm("quarterly")}); res.Total != 0 {
		t.Errorf("damaged user: total %d, want 0 until rebuilt", res.Total)
	}
}

func TestWrongKey(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir)
	ix.Add(userA, handDocs()...)
	ix.SetCheckpoint(7)
	ix.Close()
	other := slices.Repeat([]byte{9}, 32)
	ix = openTest(t, dir, func(c *Config) { c.Vault = mustVault(other) })
	if got := ix.NeedsRebuild(); !slices.Equal(got, []string{userA}) {
		t.Errorf("wrong key: NeedsRebuild %v", got)
	}
	ix.Close()

	// Rotation: the new key with the old as previous, Reseal, then the
	// new key alone opens everything.
	dir = t.TempDir()
	ix = openTest(t, dir)
	ix.Add(userA, handDocs()...)
	ix.Flush()
	ix.Delete(userA, "d3")
	ix.SetCheckpoint(7)
	ix.Close()
	ix = openTest(t, dir, func(c *Config) { c.Vault = mustVault(other, testKey) })
	checkQueries(t, withoutD3(t, ix))
	if err := ix.Reseal(); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix = openTest(t, dir, func(c *Config) { c.Vault = mustVault(other) })
	if got := ix.NeedsRebuild(); len(got) != 0 {
		t.Errorf("after Reseal: NeedsRebuild %v", got)
	}
	if got := ix.Checkpoint(); got != 7 {
		t.Errorf("after Reseal: checkpoint %d, want 7", got)
	}
	checkQueries(t, ix) // d3 was added back before the Reseal
}

// withoutD3 re-adds d3 (deleted before) so the known answers hold.
func withoutD3(t *testing.T, ix *Index) *Index {
	t.Helper()
	res := search(t, ix, userA, Request{Query: qterm("invoice")})
	if len(res.Hits) != 0 {
		t.Errorf("deleted d3 found: %v", hitIDs(res))
	}
	ix.Add(userA, handDocs()[2])
	return ix
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIDs keeps ids as given: UUIDs (stored in 16 bytes) and any other.
func TestIDs(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir)
	want := []string{"0b9f7a2e-1111-4c6e-9a57-00000000000a", "0B9F7A2E-1111-4C6E-9A57-00000000000B", "plain", "x-y", "0b9f7a2e-1111-4c6e-9a57-00000000000g"}
	for _, id := range want {
		ix.Add(userA, Doc{ID: id, Kind: "email", Text: "same words"})
	}
	ix.Close()
	ix = openTest(t, dir)
	got, _ := ix.IDs(userA)
	if !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("IDs: got %v, want %v", sorted(got), sorted(want))
	}
	if err := ix.Delete(userA, want[0]); err != nil {
		t.Fatal(err)
	}
	res := search(t, ix, userA, Request{Query: qterm("same"), Limit: 10})
	if !slices.Equal(sorted(hitIDs(res)), sorted(want[1:])) {
		t.Errorf("after deleting a UUID id: got %v", hitIDs(res))
	}
}

// TestQuietFlush: once nothing was added for FlushAfter (by the injected
// clock), the flusher's round (flushDue, run here rather than waited for)
// writes the buffer and then the checkpoint; before, it writes nothing.
func TestQuietFlush(t *testing.T) {
	var mu sync.Mutex
	now := day("2026-01-01")
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	dir := t.TempDir()
	ix := openTest(t, dir, func(c *Config) { c.FlushAfter = 40 * time.Millisecond; c.Now = clock })
	ix.Add(userA, handDocs()...)
	ix.SetCheckpoint(5)
	ix.flushDue()
	if st := ix.Stats(); st.Pending != 5 || st.Segments != 0 || ix.Checkpoint() != 0 {
		t.Fatalf("before the quiet time: pending %d segments %d checkpoint %d, want 5, 0, 0", st.Pending, st.Segments, ix.Checkpoint())
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	ix.flushDue()
	if got := ix.Checkpoint(); got != 5 {
		t.Fatalf("after the quiet time: checkpoint %d, want 5 (%+v)", got, ix.Stats())
	}
	if st := ix.Stats(); st.Pending != 0 || st.Segments != 1 || st.Docs != 5 {
		t.Errorf("after the quiet time: %+v, want 0 pending, 1 segment, 5 docs", st)
	}
}
