package storage

import (
	"fmt"
	"os"
	"path/filepath"
)

// The service's one set of crash-safe file helpers. The log engine, the
// item content files, backup and restore and the generated secrets all
// write through them, so that "written" means the same everywhere: the
// data fsynced, then the directory entry that names it.

// SyncDir fsyncs a directory, making the entries created, renamed or
// removed in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync directory: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// SyncClose fsyncs and closes f, reporting the first error of the two.
func SyncClose(f *os.File) error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	return nil
}

// WriteNew creates path with perm and flag (os.O_TRUNC to replace a file
// of that name, os.O_EXCL to refuse one), writes b and fsyncs it. A file
// it created and could not complete is removed. The directory is not
// fsynced: the caller renames or links the file into place first.
func WriteNew(path string, b []byte, perm os.FileMode, flag int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flag, perm)
	if err != nil {
		return err
	}
	if _, err = f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := SyncClose(f); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// ReplaceFile puts b at path atomically: a fsynced temporary file (path
// plus suffix) renamed over path, then the directory fsynced. A power cut
// leaves the old file or the new one, never a mix.
func ReplaceFile(path, suffix string, b []byte, perm os.FileMode) error {
	tmp := path + suffix
	if err := WriteNew(tmp, b, perm, os.O_TRUNC); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}
