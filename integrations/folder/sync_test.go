package folder_test

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/folder"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer/syncfx"
)

// rig is a connected folder synced by the real Syncer into a real
// store, counting the files the sync opens.
type rig struct {
	t     testing.TB
	dir   string // the connected folder
	fx    *syncfx.Fixture
	rec   records.Record
	opens *atomic.Int64
}

// countingOpen is Config.Open, counting each file opened.
func countingOpen(n *atomic.Int64) func(*os.Root, string) (*os.File, error) {
	return func(root *os.Root, name string) (*os.File, error) {
		n.Add(1)
		return root.OpenFile(name, os.O_RDONLY, 0)
	}
}

func newRig(t testing.TB, dir string, cfg folder.Config) *rig {
	t.Helper()
	opens := &atomic.Int64{}
	cfg.Roots = []string{filepath.Dir(dir)}
	cfg.Open = countingOpen(opens)
	fx := syncfx.New(t, syncfx.Options{Definition: folder.Definition(cfg)})
	rec := fx.Connect("u1", integrations.Credentials{Fields: map[string]string{folder.FieldPath: dir}})
	return &rig{t: t, dir: dir, fx: fx, rec: rec, opens: opens}
}

// sync syncs and returns how many files it opened; it fails the test if
// the sync changed anything in the folder.
func (r *rig) sync() int64 {
	r.t.Helper()
	before := snapshot(r.t, r.dir)
	n0 := r.opens.Load()
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	if after := snapshot(r.t, r.dir); after != before {
		r.t.Fatalf("the sync changed the folder:\nbefore %s\nafter  %s", before, after)
	}
	return r.opens.Load() - n0
}

// byPath returns the record's live items by their path.
func (r *rig) byPath() map[string]syncfx.Item {
	r.t.Helper()
	out := map[string]syncfx.Item{}
	for _, it := range r.fx.Items(r.rec) {
		out[it.Path] = it
	}
	return out
}

// snapshot describes every entry under dir: path, mode, size, mtime.
func snapshot(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%q %v %d %d;", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func write(t testing.TB, path, text string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

var day = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// TestSyncFolder: the first sync stores every regular file not hidden,
// titled by its name, with its path inside the folder and its
// modification time, and its text; hidden entries, symbolic links (one
// out of the folder among them) and a pipe are left out. A rescan with
// nothing changed opens no file; a changed file is read again and its
// old version leaves; a renamed and moved file keeps its item, with its
// new name and path, without being read; a removed file's item leaves
// the store and the index and the record's count goes down. Nothing in
// the folder is ever changed (rig.sync checks).
func TestSyncFolder(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	dir := filepath.Join(base, "docs")
	write(t, filepath.Join(dir, "alpha.txt"), "alpha words here", day)
	write(t, filepath.Join(dir, "sub", "beta.md"), "# beta\n\nbeta notes", day.Add(time.Hour))
	write(t, filepath.Join(dir, "photo.raw"), "\x00\x01\x02 binary", day)
	write(t, filepath.Join(dir, ".hidden", "secret.txt"), "hidden folder", day)
	write(t, filepath.Join(dir, ".dotfile.txt"), "hidden file", day)
	write(t, filepath.Join(outside, "escape.txt"), "outside the folder", day)
	if err := os.Symlink(filepath.Join(outside, "escape.txt"), filepath.Join(dir, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "outdir")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, dir, folder.Config{})

	if n := r.sync(); n != 2 {
		t.Errorf("first sync opened %d files, want 2 (alpha.txt, sub/beta.md; photo.raw is stored by name)", n)
	}
	got := r.byPath()
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"alpha.txt", "photo.raw", "sub/beta.md"}) {
		t.Fatalf("first sync stored %q, want alpha.txt, photo.raw, sub/beta.md", keys)
	}
	alpha, beta := got["alpha.txt"], got["sub/beta.md"]
	if alpha.Title != "alpha.txt" || !alpha.Date.Equal(day) || alpha.Size != 16 || alpha.Text != "alpha.txt\n\nalpha words here" {
		t.Errorf("alpha.txt: got %+v", alpha)
	}
	if beta.Title != "beta.md" || !beta.Date.Equal(day.Add(time.Hour)) || !strings.Contains(beta.Text, "beta notes") {
		t.Errorf("sub/beta.md: got %+v", beta)
	}
	if rec := r.fx.Record(r.rec); rec.ItemsSynced != 3 || rec.Status != records.StatusConnected {
		t.Errorf("record: %d items, status %s; want 3, connected", rec.ItemsSynced, rec.Status)
	}

	// Nothing changed: nothing opened, nothing stored again.
	if n := r.sync(); n != 0 {
		t.Errorf("rescan opened %d files, want 0", n)
	}
	if again := r.byPath(); again["alpha.txt"].ID != alpha.ID || len(again) != 3 {
		t.Errorf("rescan: got %d items, alpha.txt %s; want 3, %s", len(again), again["alpha.txt"].ID, alpha.ID)
	}

	// A changed file is read again; its old version leaves.
	write(t, filepath.Join(dir, "alpha.txt"), "alpha rewritten entirely", day.Add(2*time.Hour))
	if n := r.sync(); n != 1 {
		t.Errorf("after a change: opened %d files, want 1", n)
	}
	got = r.byPath()
	if a := got["alpha.txt"]; len(got) != 3 || a.Text != "alpha.txt\n\nalpha rewritten entirely" || !a.Date.Equal(day.Add(2*time.Hour)) {
		t.Errorf("after a change: %d items, alpha.txt %+v", len(got), a)
	}
	if _, ok := r.fx.Index.Live[alpha.ID]; ok {
		t.Errorf("the old version of alpha.txt is still in the index")
	}

	// Renamed and moved: same item, new name and path, not read.
	if err := os.MkdirAll(filepath.Join(dir, "archive"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "sub", "beta.md"), filepath.Join(dir, "archive", "beta-2025.md")); err != nil {
		t.Fatal(err)
	}
	if n := r.sync(); n != 0 {
		t.Errorf("after a rename: opened %d files, want 0", n)
	}
	got = r.byPath()
	moved, ok := got["archive/beta-2025.md"]
	if !ok || moved.ID != beta.ID || moved.Title != "beta-2025.md" || moved.Text != beta.Text || len(got) != 3 {
		t.Errorf("after a rename: got %+v (%d items), want item %s titled beta-2025.md", moved, len(got), beta.ID)
	}
	if ix := r.fx.Index.Live[beta.ID]; ix.Title != "beta-2025.md" || ix.Text != beta.Text {
		t.Errorf("after a rename the index holds %q with text %q, want beta-2025.md and the text unchanged", ix.Title, ix.Text)
	}

	// Removed: the item leaves the store and the index; the count goes down.
	photo := got["photo.raw"]
	if err := os.Remove(filepath.Join(dir, "photo.raw")); err != nil {
		t.Fatal(err)
	}
	r.sync()
	got = r.byPath()
	if _, ok := got["photo.raw"]; ok || len(got) != 2 {
		t.Errorf("after a removal: %d items, photo.raw still there: %v", len(got), ok)
	}
	if _, ok := r.fx.Index.Live[photo.ID]; ok {
		t.Errorf("photo.raw is still in the index")
	}
	if rec := r.fx.Record(r.rec); rec.ItemsSynced != 2 {
		t.Errorf("Items synced after a removal: got %d, want 2", rec.ItemsSynced)
	}
}

// TestFolderGone: a folder that cannot be opened (a NAS not mounted)
// fails the sync with a sentence that names no file, and removes no item;
// back, it syncs as before.
func TestFolderGone(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "nas")
	write(t, filepath.Join(dir, "a.txt"), "on the nas", day)
	r := newRig(t, dir, folder.Config{})
	r.sync()
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	r.fx.Clock.Advance(time.Hour)
	r.fx.Sync(r.rec)
	rec := r.fx.Record(r.rec)
	want := "the folder cannot be read: it is gone, not mounted, or the service may not read it"
	if rec.Status != records.StatusError || rec.LastError != want || rec.ItemsSynced != 1 {
		t.Errorf("folder gone: status %s, lastError %q, %d items; want error, %q, 1", rec.Status, rec.LastError, rec.ItemsSynced, want)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	if n := r.sync(); n != 0 || len(r.byPath()) != 1 {
		t.Errorf("back: opened %d, %d items; want 0, 1", n, len(r.byPath()))
	}
}

// TestMoveAndReplace: a file moved away while a new file takes its old
// path: the moved one keeps its item, unread, and only the new one is
// read.
func TestMoveAndReplace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "docs")
	write(t, filepath.Join(dir, "a.txt"), "the first text", day)
	r := newRig(t, dir, folder.Config{})
	r.sync()
	first := r.byPath()["a.txt"]
	if err := os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "z.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.txt"), "a new file at the old name", day.Add(time.Hour))
	if n := r.sync(); n != 1 {
		t.Errorf("opened %d files, want 1 (the new a.txt)", n)
	}
	got := r.byPath()
	if z := got["z.txt"]; z.ID != first.ID || z.Title != "z.txt" {
		t.Errorf("z.txt: got %+v, want item %s", z, first.ID)
	}
	if a := got["a.txt"]; a.ID == first.ID || a.Text != "a.txt\n\na new file at the old name" {
		t.Errorf("a.txt: got %+v, want a new item with the new text", a)
	}
}
