package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrDiskFull is matched by the error of a store that refuses writes
// because its disk is full. Unlike ErrFailed it is not for good: nothing
// of the refused line stays in the log, reads go on, and the store tries
// again with the next Commit (and at most once a second with
// CheckSpace), taking writes again as soon as one fits.
var ErrDiskFull error = &unavailableError{"storage: disk full, refusing writes until space comes back"}

// spaceProbeBytes is what CheckSpace writes to see whether space came
// back: a small batch's worth, and more than the file system's reserve
// for a single block.
const spaceProbeBytes = 64 << 10

// spaceProbeName is the probe's file in the store's directory; it is
// removed as soon as it is written.
const spaceProbeName = "space-probe"

// minProbeInterval spaces the probes CheckSpace makes, so that polling
// /readyz cannot make the writer write 64 KiB a request.
const minProbeInterval = time.Second

// isNoSpace reports whether err says the disk (or the user's quota) is
// full.
func isNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// Writable returns nil while the store takes writes: the error of Err, or
// one matching ErrDiskFull while the disk is full.
func (s *Store) Writable() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.failed != nil {
		return s.failed
	}
	return s.full
}

// CheckSpace returns Writable(), having first tried, while the disk is
// full and at most once a second, whether there is room again: so a
// readiness check turns green without waiting for a user's write.
func (s *Store) CheckSpace() error {
	if err := s.Writable(); err == nil || !errors.Is(err, ErrDiskFull) {
		return err
	}
	return s.send(&request{probe: true, done: make(chan error, 1)})
}

// noSpace handles a write or fsync of the active log that failed for want
// of space: the log is cut back to size, the durable end before the line,
// and that cut made durable, so nothing of the line survives to be
// replayed; then the store refuses writes with ErrDiskFull until one fits.
// Retrying after a failed fsync is sound here only because the cut
// removes everything the failed fsync covered: earlier lines were synced
// before. If the cut fails, the store fails for good.
func (s *Store) noSpace(size int64, err error) error {
	if terr := s.file.Truncate(size); terr != nil {
		return s.fail(errors.Join(err, fmt.Errorf("cut back to %d: %w", size, terr)))
	}
	if s.opts.Sync == SyncFsync {
		serr := s.file.Sync()
		s.count(1, 0)
		if serr != nil {
			return s.fail(errors.Join(err, fmt.Errorf("sync the cut: %w", serr)))
		}
	}
	return s.setFull(err)
}

// setFull puts the store into the disk-full state and returns its error.
func (s *Store) setFull(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fullSeen = true
	if s.full == nil {
		s.log.Warn("disk full, refusing writes until space comes back", "err", err)
	}
	s.full = fmt.Errorf("%w: %s: %w", ErrDiskFull, s.dir, err)
	return s.full
}

// clearFull leaves the disk-full state after a write that fitted.
func (s *Store) clearFull() {
	if !s.fullSeen {
		return // the common case: no lock taken
	}
	s.fullSeen = false
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full != nil {
		s.log.Info("disk space is back, taking writes again")
		s.full = nil
	}
}

// probeSpace writes, syncs and removes a spaceProbeBytes file, in the
// writer goroutine, and leaves the disk-full state if that worked.
func (s *Store) probeSpace() error {
	if err := s.Writable(); err == nil || !errors.Is(err, ErrDiskFull) {
		return err
	}
	now := s.now()
	if now.Sub(s.lastProbe) < minProbeInterval && !now.Before(s.lastProbe) {
		return s.Writable()
	}
	s.lastProbe = now
	name := filepath.Join(s.dir, spaceProbeName)
	f, err := s.fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err == nil {
		_, err = f.Write(make([]byte, spaceProbeBytes))
		if err == nil {
			err = f.Sync()
		}
		err = errors.Join(err, f.Close())
		if rerr := s.fsys.Remove(name); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if err != nil {
		s.log.Debug("disk still full", "err", err)
		return s.Writable()
	}
	s.clearFull()
	return nil
}
