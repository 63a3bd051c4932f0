package items

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// packFixture is an item store with small packs and n items of the
// record, each with a text of its own, committed.
type packFixture struct {
	t     *testing.T
	dir   string
	st    *storage.Store
	s     *Store
	items []ItemRecord
	pids  []string
}

var packOwner = Owner{UserID: "u1", RecordID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", Integration: "gmail"}

// packText is item i's text: about 600 bytes that compress to about 300.
func packText(i int) string {
	var b strings.Builder
	for j := range 10 {
		fmt.Fprintf(&b, "item %d line %d %x\n", i, j, sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(j)}))
	}
	return b.String()
}

func newPackFixture(t *testing.T, n int) *packFixture {
	f := &packFixture{t: t, dir: t.TempDir()}
	f.open()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var staged []Staged
	var ops []storage.Op
	for i := range n {
		pid := fmt.Sprintf("m%d", i)
		it, err := f.s.NewItem(packOwner, &integrations.Item{ProviderID: pid, Title: pid, Date: now.Add(time.Duration(i) * time.Minute)}, now)
		if err != nil {
			t.Fatal(err)
		}
		sg, err := f.s.Stage(&it, packText(i))
		if err != nil {
			t.Fatal(err)
		}
		staged = append(staged, sg)
		ops = append(ops, f.s.InsertOp(it))
		f.items, f.pids = append(f.items, it), append(f.pids, pid)
	}
	if err := f.s.Publish(staged); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *packFixture) open() {
	f.st = storage.New(filepath.Join(f.dir, "main"), storage.Options{})
	f.s = New(f.st, testVault(f.t, 3), filepath.Join(f.dir, "items"))
	f.s.content.packMax = 4 << 10
	if err := f.st.Open(); err != nil {
		f.t.Fatal(err)
	}
}

func (f *packFixture) reopen() {
	f.st.Close()
	f.open()
}

// packBytes returns the packs' total size and their contents joined.
func (f *packFixture) packBytes() (int64, []byte) {
	paths, _ := filepath.Glob(filepath.Join(f.s.RecordDir(packOwner.RecordID), "pack-*"))
	var total int64
	var all []byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.t.Fatal(err)
		}
		total += int64(len(b))
		all = append(all, b...)
	}
	return total, all
}

// checkLive checks that every live item's text reads back, and returns
// the bytes of the live items' sealed texts.
func (f *packFixture) checkLive() (live int64) {
	f.t.Helper()
	for _, it := range f.s.ForRecord(packOwner.RecordID) {
		if !it.Live() {
			continue
		}
		m, err := f.s.OpenMeta(&it)
		if err != nil {
			f.t.Fatal(err)
		}
		var i int
		fmt.Sscanf(m.ProviderID, "m%d", &i)
		if text, err := f.s.Text(&it); err != nil || text != packText(i) {
			f.t.Fatalf("item %s: text %q, %v", m.ProviderID, text, err)
		}
		ref, _ := parseRef(it.Content)
		live += ref.n
	}
	return live
}

// TestPackDeleteCompact: deleting items erases their sealed texts from the
// packs at once (no byte of them is left), and packs half dead are
// compacted, so the packs hold at most twice the live texts; what the
// compaction copies is at most what was deleted; every other item reads
// back, after a restart too.
func TestPackDeleteCompact(t *testing.T) {
	f := newPackFixture(t, 60)
	before, _ := f.packBytes()
	if n, _ := filepath.Glob(filepath.Join(f.s.RecordDir(packOwner.RecordID), "pack-*")); len(n) < 4 {
		t.Fatalf("%d packs of 4 KiB for 60 items, want several", len(n))
	}
	// Delete two items of every three.
	var gonePids []string
	var goneSealed [][]byte
	for i, pid := range f.pids {
		if i%3 != 0 {
			gonePids = append(gonePids, pid)
			b, err := f.s.content.readSealed(&f.items[i])
			if err != nil {
				t.Fatal(err)
			}
			goneSealed = append(goneSealed, b)
		}
	}
	p := f.s.content.packsOf(packOwner.RecordID)
	appended := p.appended
	ops, gone := f.s.RemoveProviderOps(packOwner.RecordID, gonePids, time.Now())
	if err := f.st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	var deleted int64
	for _, b := range goneSealed {
		deleted += int64(len(b))
	}
	if err := f.s.RemoveFiles(gone); err != nil {
		t.Fatal(err)
	}
	after, all := f.packBytes()
	for i, b := range goneSealed {
		if bytes.Contains(all, b[len(b)-32:]) {
			t.Errorf("deleted item %s: its sealed text is still in a pack", gonePids[i])
		}
	}
	live := f.checkLive()
	if after > 2*live {
		t.Errorf("packs: %d bytes for %d live, want at most twice", after, live)
	}
	// A pack is compacted once half dead: what the compaction copied is
	// at most what was deleted.
	copied := p.appended - appended
	if copied == 0 || copied > deleted {
		t.Errorf("compaction copied %d bytes for %d deleted, want some, and at most as many", copied, deleted)
	}
	t.Logf("packs: %d bytes, %d after deleting %d (compaction copied %d); %d live", before, after, deleted, copied, live)

	f.reopen()
	if removed, missing, err := f.s.Sweep(); removed != 0 || missing != 0 || err != nil {
		t.Errorf("sweep after a restart: %d removed, %d missing, %v", removed, missing, err)
	}
	f.checkLive()
}

// TestPackCompactionCrash: a crash in the middle of a compaction leaves
// pack-<n>.old, whose items still read (from it), and which the start-up
// sweep compacts: its items moved, their references committed, the file
// gone.
func TestPackCompactionCrash(t *testing.T) {
	f := newPackFixture(t, 20)
	dir := f.s.RecordDir(packOwner.RecordID)
	// As a compaction leaves pack-1 when killed after its rename, with
	// some of pack-1's items already copied to the current pack
	// (uncommitted: dead bytes).
	p := f.s.content.packsOf(packOwner.RecordID)
	b, err := f.s.content.readSealed(&f.items[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.appendSealed(b, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "pack-1"), filepath.Join(dir, "pack-1.old")); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	f.checkLive()
	if _, _, err := f.s.Sweep(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pack-1.old")); !os.IsNotExist(err) {
		t.Errorf("pack-1.old after the sweep: %v, want it gone", err)
	}
	for _, it := range f.s.ForRecord(packOwner.RecordID) {
		if ref, _ := parseRef(it.Content); ref.pack == 1 {
			t.Errorf("item %s still refers to pack 1", it.ID)
		}
	}
	f.checkLive()
	f.reopen()
	f.checkLive()
}

// TestPackOwnFiles: a data directory of an earlier build, each item's text
// in a file of its own, still works: texts read, a deleted item's file is
// removed, new items go to a pack beside them; the start-up sweep then
// moves the others' texts into the pack and removes their files, and a
// crash after that commit, before the files went, leaves files the next
// sweep removes.
func TestPackOwnFiles(t *testing.T) {
	f := newPackFixture(t, 0)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var ops []storage.Op
	var old []ItemRecord
	for i := range 4 {
		it, err := f.s.NewItem(packOwner, &integrations.Item{ProviderID: fmt.Sprintf("m%d", i), Date: now}, now)
		if err != nil {
			t.Fatal(err)
		}
		// As builds before packs wrote it: no reference, a file of its own.
		if err := f.s.content.ensureDir(it.RecordID); err != nil {
			t.Fatal(err)
		}
		sealed := f.s.vault.Seal(contentAAD(&it), encodeContent(packText(i)))
		if err := os.WriteFile(filepath.Join(f.s.RecordDir(it.RecordID), it.ID), sealed, 0o600); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, f.s.InsertOp(it))
		old = append(old, it)
	}
	if err := f.st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	f.checkLive()
	it, _ := f.s.NewItem(packOwner, &integrations.Item{ProviderID: "m4", Date: now}, now)
	sg, err := f.s.Stage(&it, packText(4))
	if err != nil || f.s.Publish([]Staged{sg}) != nil || f.st.Commit(f.s.InsertOp(it)) != nil {
		t.Fatalf("a new item beside own files: %v", err)
	}
	ops, gone := f.s.RemoveProviderOps(packOwner.RecordID, []string{"m1"}, now)
	if err := f.st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RemoveFiles(gone); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.s.Path(&old[1])); !os.IsNotExist(err) {
		t.Errorf("own file of a deleted item: %v, want it removed", err)
	}
	f.checkLive()

	// A crash after the commit that moved m0, before its file went.
	p := f.s.content.packsOf(packOwner.RecordID)
	b, _ := f.s.content.readSealed(&old[0])
	to, err := p.appendSealed(b, false)
	if err != nil || p.sync() != nil {
		t.Fatal(err)
	}
	if err := f.st.Commit(f.s.rotateOp(old[0], old[0].Meta, to.String())); err != nil {
		t.Fatal(err)
	}

	f.reopen()
	if removed, missing, err := f.s.Sweep(); removed != 0 || missing != 0 || err != nil {
		t.Errorf("sweep of own files: %d removed, %d missing, %v", removed, missing, err)
	}
	for _, it := range old {
		if _, err := os.Stat(filepath.Join(f.s.RecordDir(it.RecordID), it.ID)); !os.IsNotExist(err) {
			t.Errorf("own file of %s after the sweep: %v, want it moved into the pack", it.ID, err)
		}
	}
	for _, it := range f.s.ForRecord(packOwner.RecordID) {
		if it.Live() && it.Content == "" {
			t.Errorf("item %s after the sweep: no reference", it.ID)
		}
	}
	f.checkLive()
	f.reopen()
	f.checkLive()
}

// TestPackRotateKeys: rotate-key re-seals the packed texts under the new
// key, commits their new places, and drops the packs that held them
// sealed under the old one: afterwards the new key alone reads every
// text, and no pack holds a text sealed under the old key.
func TestPackRotateKeys(t *testing.T) {
	f := newPackFixture(t, 30)
	var oldSealed [][]byte
	for i := range f.items {
		b, err := f.s.content.readSealed(&f.items[i])
		if err != nil {
			t.Fatal(err)
		}
		oldSealed = append(oldSealed, b)
	}
	f.st.Close()
	oldKey, newKey := bytes.Repeat([]byte{3}, 32), bytes.Repeat([]byte{4}, 32)
	open := func(keys ...[]byte) {
		v, err := vault.New(keys[0], keys[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		f.st = storage.New(filepath.Join(f.dir, "main"), storage.Options{})
		f.s = New(f.st, v, filepath.Join(f.dir, "items"))
		f.s.content.packMax = 4 << 10
		if err := f.st.Open(); err != nil {
			t.Fatal(err)
		}
	}
	open(newKey, oldKey)
	if n, err := f.s.RotateKeys(); n != 30 || err != nil {
		t.Fatalf("RotateKeys: %d, %v; want 30 metadata re-sealed", n, err)
	}
	f.st.Close()
	open(newKey)
	f.checkLive()
	_, all := f.packBytes()
	for i, b := range oldSealed {
		if bytes.Contains(all, b[len(b)-32:]) {
			t.Errorf("item %d: its text sealed under the old key is still in a pack", i)
		}
	}
	if removed, missing, err := f.s.Sweep(); removed != 0 || missing != 0 || err != nil {
		t.Errorf("sweep after rotate-key: %d removed, %d missing, %v", removed, missing, err)
	}
}

// TestPackCompactionSparesStaged: a pack holding a text staged and not
// yet published is not compacted, even all dead otherwise: the staged
// text's reference is committed after, and must find it there.
func TestPackCompactionSparesStaged(t *testing.T) {
	f := newPackFixture(t, 6)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	it, _ := f.s.NewItem(packOwner, &integrations.Item{ProviderID: "m6", Date: now}, now)
	sg, err := f.s.Stage(&it, packText(6))
	if err != nil {
		t.Fatal(err)
	}
	if ref, _ := parseRef(it.Content); ref.pack != 1 {
		t.Fatalf("staged into pack %d, want 1 beside the others", ref.pack)
	}
	ops, gone := f.s.RemoveProviderOps(packOwner.RecordID, f.pids, now)
	if err := f.st.Commit(ops...); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RemoveFiles(gone); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.s.RecordDir(packOwner.RecordID), "pack-1")); err != nil {
		t.Fatalf("pack-1 with a staged text: %v, want it kept", err)
	}
	if err := f.s.Publish([]Staged{sg}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Commit(f.s.InsertOp(it)); err != nil {
		t.Fatal(err)
	}
	f.checkLive()
	// Once published and committed, the next deletion compacts it.
	ops, gone = f.s.RemoveProviderOps(packOwner.RecordID, []string{"m6"}, now)
	if err := f.st.Commit(ops...); err != nil || f.s.RemoveFiles(gone) != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.s.RecordDir(packOwner.RecordID), "pack-1")); !os.IsNotExist(err) {
		t.Errorf("pack-1 all dead: %v, want it compacted away", err)
	}
}
