package storage

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// memFS is an in-memory FS that records what is durable. A file's data is
// durable up to its last Sync; a directory's entries (creations, renames,
// removals) only once the directory is SyncDir'd. It can fail the nth
// operation of a kind, and crash at the nth operation of any kind, keeping
// a snapshot of what a power cut at that moment could leave behind.
type memFS struct {
	mu     sync.Mutex
	root   *memNode
	ops    int            // operations so far
	counts map[string]int // operations so far, by kind
	faults []fault

	noSpace bool // every write fails with ENOSPC after writing half, as a full disk does

	crashAt   int // crash at this operation; 0: never
	crashed   bool
	snapshots map[crashMode]*memFS
}

type memNode struct {
	isDir   bool
	data    []byte              // file contents as read
	durable []byte              // file contents that survive a crash
	entries map[string]*memNode // directory entries as seen
	durEnts map[string]*memNode // directory entries that survive a crash
	locked  bool
}

type fault struct {
	kind string
	n    int
	err  error
}

// crashMode is what a crash keeps beyond what was synced.
type crashMode int

const (
	// keepSynced keeps only fsynced data and SyncDir'd entries: the worst
	// case of a power cut.
	keepSynced crashMode = iota
	// keepEntries keeps every directory change but only fsynced data, as a
	// file system that journals metadata but not data may.
	keepEntries
	// keepAll keeps everything written, as after kill -9.
	keepAll
)

var crashModes = []crashMode{keepSynced, keepEntries, keepAll}

func (m crashMode) String() string {
	return [...]string{"keepSynced", "keepEntries", "keepAll"}[m]
}

// errCrashed is what every operation returns after the crash point.
var errCrashed = errors.New("memfs: crashed")

func newMemFS() *memFS {
	root := &memNode{isDir: true, entries: map[string]*memNode{}, durEnts: map[string]*memNode{}}
	return &memFS{root: root, counts: map[string]int{}}
}

// failAt makes the nth (from 1) operation of kind fail with err. Kinds:
// open, read, write, sync, truncate, close, rename, remove, readdir,
// mkdir, syncdir, lock.
func (f *memFS) failAt(kind string, n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, fault{kind, n, err})
}

// setNoSpace makes the disk full (every write fails with ENOSPC) or
// gives the space back.
func (f *memFS) setNoSpace(full bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noSpace = full
}

// begin counts an operation and returns the error it must fail with. For a
// write that crashes or fails, torn says to write half of it first.
func (f *memFS) begin(kind string) (err error, torn bool) {
	if f.crashed {
		return errCrashed, false
	}
	f.ops++
	f.counts[kind]++
	if f.crashAt > 0 && f.ops == f.crashAt {
		f.crashed = true
		if kind != "write" { // Write snapshots after writing half
			f.crashNow()
		}
		return errCrashed, true
	}
	for _, ft := range f.faults {
		if ft.kind == kind && ft.n == f.counts[kind] {
			return ft.err, true
		}
	}
	if f.noSpace && kind == "write" {
		return syscall.ENOSPC, true
	}
	return nil, false
}

// crashNow takes the snapshots of a crash at this moment.
func (f *memFS) crashNow() {
	f.snapshots = map[crashMode]*memFS{}
	for _, m := range crashModes {
		f.snapshots[m] = f.clone(m)
	}
}

// afterCrash returns what a crash in mode m left, or nil if none happened.
func (f *memFS) afterCrash(m crashMode) *memFS {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snapshots[m]
}

func (f *memFS) clone(m crashMode) *memFS {
	seen := map[*memNode]*memNode{}
	var cp func(n *memNode) *memNode
	cp = func(n *memNode) *memNode {
		if c := seen[n]; c != nil {
			return c
		}
		c := &memNode{isDir: n.isDir}
		seen[n] = c
		if !n.isDir {
			src := n.durable
			if m == keepAll {
				src = n.data
			}
			c.data, c.durable = slices.Clone(src), slices.Clone(src)
			return c
		}
		src := n.durEnts
		if m != keepSynced {
			src = n.entries
		}
		c.entries, c.durEnts = map[string]*memNode{}, map[string]*memNode{}
		for name, child := range src {
			cc := cp(child)
			c.entries[name], c.durEnts[name] = cc, cc
		}
		return c
	}
	out := newMemFS()
	out.root = cp(f.root)
	return out
}

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// walk returns the node at name in the current view.
func (f *memFS) walk(name string) (*memNode, error) {
	n := f.root
	for _, part := range strings.Split(strings.Trim(filepath.Clean(name), "/"), "/") {
		if part == "" {
			continue
		}
		if !n.isDir {
			return nil, syscall.ENOTDIR
		}
		if n = n.entries[part]; n == nil {
			return nil, fs.ErrNotExist
		}
	}
	return n, nil
}

func (f *memFS) parent(name string) (*memNode, string, error) {
	dir, err := f.walk(filepath.Dir(name))
	if err != nil {
		return nil, "", err
	}
	if !dir.isDir {
		return nil, "", syscall.ENOTDIR
	}
	return dir, filepath.Base(name), nil
}

func (f *memFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.begin("open"); err != nil {
		return nil, pathErr("open", name, err)
	}
	return f.open(name, flag)
}

func (f *memFS) open(name string, flag int) (*memFile, error) {
	dir, base, err := f.parent(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	n := dir.entries[base]
	switch {
	case n == nil && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, fs.ErrNotExist)
	case n == nil:
		n = &memNode{}
		dir.entries[base] = n
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		return nil, pathErr("open", name, fs.ErrExist)
	case n.isDir:
		return nil, pathErr("open", name, syscall.EISDIR)
	case flag&os.O_TRUNC != 0:
		n.data = n.data[:0]
	}
	return &memFile{fs: f, n: n, name: name, flag: flag}, nil
}

func (f *memFS) Rename(oldpath, newpath string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.begin("rename"); err != nil {
		return pathErr("rename", oldpath, err)
	}
	od, ob, err := f.parent(oldpath)
	if err != nil {
		return pathErr("rename", oldpath, err)
	}
	nd, nb, err := f.parent(newpath)
	if err != nil {
		return pathErr("rename", newpath, err)
	}
	n := od.entries[ob]
	if n == nil {
		return pathErr("rename", oldpath, fs.ErrNotExist)
	}
	delete(od.entries, ob)
	nd.entries[nb] = n
	return nil
}

func (f *memFS) Remove(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.begin("remove"); err != nil {
		return pathErr("remove", name, err)
	}
	dir, base, err := f.parent(name)
	if err != nil {
		return pathErr("remove", name, err)
	}
	if dir.entries[base] == nil {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	delete(dir.entries, base)
	return nil
}

func (f *memFS) ReadDir(name string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.begin("readdir"); err != nil {
		return nil, pathErr("readdir", name, err)
	}
	n, err := f.walk(name)
	if err != nil {
		return nil, pathErr("readdir", name, err)
	}
	if !n.isDir {
		return nil, pathErr("readdir", name, syscall.ENOTDIR)
	}
	return slices.Sorted(maps.Keys(n.entries)), nil
}

func (f *memFS) MkdirAll(name string, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.begin("mkdir"); err != nil {
		return pathErr("mkdir", name, err)
	}
	n := f.root
	for _, part := range strings.Split(strings.Trim(filepath.Clean(name), "/"), "/") {
		if part == "" {
			continue
		}
		c := n.entries[part]
		if c == nil {
			c = &memNode{isDir: true, entries: map[string]*memNode{}, durEnts: map[string]*memNode{}}
			n.entries[part] = c
		}
		if !c.isDir {
			return pathErr("mkdir", name, syscall.ENOTDIR)
		}
		n = c
	}
	return nil
}

func (f *memFS) SyncDir(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.begin("syncdir"); err != nil {
		return pathErr("fsync", name, err)
	}
	n, err := f.walk(name)
	if err != nil {
		return pathErr("fsync", name, err)
	}
	n.durEnts = maps.Clone(n.entries)
	return nil
}

func (f *memFS) Lock(name string) (File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.begin("lock"); err != nil {
		return nil, pathErr("lock", name, err)
	}
	mf, err := f.open(name, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if mf.n.locked {
		return nil, pathErr("lock", name, ErrLocked)
	}
	mf.n.locked, mf.lock = true, true
	return mf, nil
}
