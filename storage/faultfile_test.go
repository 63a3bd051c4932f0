package storage

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// memFile is an open file of a memFS.
type memFile struct {
	fs     *memFS
	n      *memNode
	name   string
	flag   int
	off    int64
	lock   bool
	closed bool
}

func (mf *memFile) Read(p []byte) (int, error) {
	mf.fs.mu.Lock()
	defer mf.fs.mu.Unlock()
	if err, _ := mf.fs.begin("read"); err != nil {
		return 0, pathErr("read", mf.name, err)
	}
	if mf.off >= int64(len(mf.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, mf.n.data[mf.off:])
	mf.off += int64(n)
	return n, nil
}

func (mf *memFile) ReadAt(p []byte, off int64) (int, error) {
	mf.fs.mu.Lock()
	defer mf.fs.mu.Unlock()
	if err, _ := mf.fs.begin("read"); err != nil {
		return 0, pathErr("read", mf.name, err)
	}
	if off >= int64(len(mf.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, mf.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (mf *memFile) Write(p []byte) (int, error) {
	mf.fs.mu.Lock()
	defer mf.fs.mu.Unlock()
	err, torn := mf.fs.begin("write")
	if err != nil && !torn {
		return 0, pathErr("write", mf.name, err)
	}
	if err != nil {
		p = p[:len(p)/2]
	}
	if mf.flag&os.O_APPEND != 0 {
		mf.off = int64(len(mf.n.data))
	}
	if end := mf.off + int64(len(p)); end > int64(len(mf.n.data)) {
		mf.n.data = append(mf.n.data, make([]byte, end-int64(len(mf.n.data)))...)
	}
	copy(mf.n.data[mf.off:], p)
	mf.off += int64(len(p))
	if err != nil {
		if errors.Is(err, errCrashed) {
			mf.fs.crashNow()
		}
		return len(p), pathErr("write", mf.name, err)
	}
	return len(p), nil
}

func (mf *memFile) op(kind string) error {
	if err, _ := mf.fs.begin(kind); err != nil {
		return pathErr(kind, mf.name, err)
	}
	return nil
}

func (mf *memFile) Sync() error {
	mf.fs.mu.Lock()
	defer mf.fs.mu.Unlock()
	if err := mf.op("sync"); err != nil {
		return err
	}
	mf.n.durable = slices.Clone(mf.n.data)
	return nil
}

func (mf *memFile) Truncate(size int64) error {
	mf.fs.mu.Lock()
	defer mf.fs.mu.Unlock()
	if err := mf.op("truncate"); err != nil {
		return err
	}
	if size < int64(len(mf.n.data)) {
		mf.n.data = mf.n.data[:size]
	} else {
		mf.n.data = append(mf.n.data, make([]byte, size-int64(len(mf.n.data)))...)
	}
	return nil
}

func (mf *memFile) Stat() (fs.FileInfo, error) {
	mf.fs.mu.Lock()
	defer mf.fs.mu.Unlock()
	if err := mf.op("stat"); err != nil {
		return nil, err
	}
	return memInfo{name: mf.name, size: int64(len(mf.n.data))}, nil
}

// memInfo is the fs.FileInfo of a memFile.
type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return filepath.Base(i.name) }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o600 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

func (mf *memFile) Close() error {
	mf.fs.mu.Lock()
	defer mf.fs.mu.Unlock()
	if mf.closed {
		return pathErr("close", mf.name, fs.ErrClosed)
	}
	mf.closed = true
	if mf.lock {
		mf.n.locked = false
	}
	return mf.op("close")
}

// TestMemFS checks the recorder's own model of durability.
func TestMemFS(t *testing.T) {
	f := newMemFS()
	if err := f.MkdirAll("/d", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := f.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string, sync bool) {
		t.Helper()
		w, err := f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
		if sync {
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
	}
	write("/d/a", "synced", true)
	if err := f.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	write("/d/a", "+unsynced", false)
	write("/d/b", "new", true) // data synced, entry not
	if err := f.Rename("/d/a", "/d/c"); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.crashNow()
	f.mu.Unlock()

	tests := []struct {
		mode  crashMode
		files map[string]string
	}{
		{keepSynced, map[string]string{"a": "synced"}},
		{keepEntries, map[string]string{"b": "new", "c": "synced"}},
		{keepAll, map[string]string{"b": "new", "c": "synced+unsynced"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			c := f.afterCrash(tt.mode)
			names, err := c.ReadDir("/d")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := names, slices.Sorted(maps.Keys(tt.files)); !slices.Equal(got, want) {
				t.Fatalf("entries: got %v, want %v", got, want)
			}
			for name, want := range tt.files {
				got, err := readAll(c, "/d/"+name)
				if err != nil || string(got) != want {
					t.Errorf("%s: got %q, %v; want %q", name, got, err, want)
				}
			}
		})
	}
}
