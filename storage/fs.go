package storage

import (
	"io"
	"io/fs"
	"os"
	"sort"
)

// FS is the small set of file-system operations the store uses. The
// production implementation is the operating system; tests substitute a
// recorder that can inject errors and simulate a power cut.
//
// Names are slash- or OS-separated paths as given to the store; an FS need not
// support anything beyond what the store asks of it.
type FS interface {
	// OpenFile opens name like os.OpenFile. The store uses os.O_RDONLY,
	// os.O_RDWR, os.O_WRONLY, os.O_CREATE, os.O_EXCL, os.O_TRUNC and
	// os.O_APPEND.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Rename renames oldpath to newpath, replacing newpath. It is durable
	// only after SyncDir of the directory.
	Rename(oldpath, newpath string) error
	// Remove removes a file. It is durable only after SyncDir.
	Remove(name string) error
	// ReadDir returns the names of the entries of a directory, sorted.
	ReadDir(name string) ([]string, error)
	// MkdirAll creates a directory and its parents with perm.
	MkdirAll(name string, perm fs.FileMode) error
	// SyncDir makes the directory's entries (creations, renames, removals)
	// durable.
	SyncDir(name string) error
	// Lock opens or creates name (mode 0600) and takes an exclusive lock on
	// it without waiting. It returns an error that errors.Is ErrLocked if
	// another holder has it. Closing the returned File releases the lock.
	Lock(name string) (File, error)
}

// File is an open file of an FS. *os.File satisfies it.
type File interface {
	io.Reader
	// ReaderAt reads what a cold table keeps only in the log, while the
	// file is also appended to.
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes the file's contents and size durable.
	Sync() error
	// Truncate changes the size of the file.
	Truncate(size int64) error
	// Stat describes the file; the store uses its Size.
	Stat() (fs.FileInfo, error)
}

// osFS is the production FS: the operating system.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }

func (osFS) ReadDir(name string) ([]string, error) {
	entries, err := os.ReadDir(name)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) SyncDir(name string) error { return SyncDir(name) }

func (osFS) Lock(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readAll reads a whole (small) file through fsys.
func readAll(fsys FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
