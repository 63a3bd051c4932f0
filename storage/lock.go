package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// lockName is the lock file in a store's directory.
const lockName = "LOCK"

// lockDir takes dir's lock and writes who holds it into the lock file.
func lockDir(fsys FS, dir string) (File, error) {
	path := filepath.Join(dir, lockName)
	f, err := fsys.Lock(path)
	if errors.Is(err, ErrLocked) {
		holder, _ := readAll(fsys, path)
		return nil, &LockError{Dir: dir, Holder: strings.TrimSpace(string(holder))}
	}
	if err != nil {
		return nil, fmt.Errorf("storage: lock %s: %w", dir, err)
	}
	host, _ := os.Hostname()
	info := fmt.Sprintf("pid %d on host %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	// One err for both steps: a failed Truncate or Write leaves the lock
	// file naming a stale or no holder, so Open must not proceed on it.
	if err = f.Truncate(0); err == nil {
		_, err = f.Write([]byte(info))
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("storage: write lock %s: %w", path, err)
	}
	return f, nil
}
