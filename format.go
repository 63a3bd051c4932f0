package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"searchsvc/storage"
)

// formatFile, in DATA_DIR (and in a backup, which has DATA_DIR's layout),
// names the format of what the stores hold sealed. Builds before the one
// vault wrote no such file; their sealed values (text credentials, three
// key schemes) do not open under this one. No release ever wrote them, so
// such a directory is refused at start with what to do, not converted.
const formatFile = "format"

// dataFormat is formatFile's content: the vault's binary sealed values.
const dataFormat = "searchsvc data 2\n"

// errOldFormat is the one sentence a directory of an older build gets.
func errOldFormat(dir string) error {
	return fmt.Errorf("%s was written by a development build of searchsvc from before its sealed format %q "+
		"(it has no %s file) and this build cannot open its data: move it aside and start with an empty directory",
		dir, dataFormat[:len(dataFormat)-1], formatFile)
}

// checkDataFormat reports whether dir holds data in this build's format:
// it does if formatFile says so or if no store holds anything yet.
func checkDataFormat(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, formatFile))
	switch {
	case err == nil && string(b) == dataFormat:
		return nil
	case err == nil:
		return fmt.Errorf("%s holds data of format %q, which this build of searchsvc does not know: run the build that wrote it",
			dir, b)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s: %w", formatFile, err)
	}
	for _, name := range []string{mainStoreDir, sessionStoreDir, itemsDir} {
		entries, err := os.ReadDir(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if len(entries) > 0 {
			return errOldFormat(dir)
		}
	}
	return nil
}

// ensureDataFormat is checkDataFormat, then, for a directory that holds
// nothing yet, writes formatFile. It runs before any store opens, so a
// store never holds data without the file beside it: a crash before the
// file is durable leaves a directory that is still empty.
func ensureDataFormat(dir string) error {
	if err := checkDataFormat(dir); err != nil {
		return err
	}
	path := filepath.Join(dir, formatFile)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := storage.ReplaceFile(path, ".tmp", []byte(dataFormat), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", formatFile, err)
	}
	return nil
}
