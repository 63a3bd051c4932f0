// Package storagetest holds file systems for tests of code on a store:
// FullFS, the operating system's with a switch that fills the disk.
package storagetest

import (
	"io/fs"
	"os"
	"sort"
	"sync/atomic"
	"syscall"

	"searchsvc/storage"
)

// FullFS is the operating system's file system with a switch: while Full
// is set, every write fails with ENOSPC, as on a full SD card.
type FullFS struct{ Full *atomic.Bool }

type fullFile struct {
	*os.File
	full *atomic.Bool
}

func (f fullFile) Write(p []byte) (int, error) {
	if f.full.Load() {
		return 0, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

// OpenFile opens name as os.OpenFile does, its writes behind the switch.
func (x FullFS) OpenFile(name string, flag int, perm fs.FileMode) (storage.File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return fullFile{f, x.Full}, nil
}

// Rename is os.Rename.
func (FullFS) Rename(a, b string) error { return os.Rename(a, b) }

// Remove is os.Remove.
func (FullFS) Remove(name string) error { return os.Remove(name) }

// MkdirAll is os.MkdirAll.
func (FullFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }

// SyncDir does nothing: the tests do not cut the power.
func (FullFS) SyncDir(string) error { return nil }

// ReadDir lists name's entries, sorted.
func (FullFS) ReadDir(name string) ([]string, error) {
	es, err := os.ReadDir(name)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out, err
}

// Lock opens name for the store's lock.
func (x FullFS) Lock(name string) (storage.File, error) {
	return x.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
}
