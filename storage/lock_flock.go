//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package storage

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// flock takes an exclusive advisory lock on f without waiting. The kernel
// releases it when the last descriptor of f is closed, including when the
// process is killed, so a crashed server never leaves a stale lock.
func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("flock %s: %w", f.Name(), ErrLocked)
	}
	if err != nil {
		return fmt.Errorf("flock %s: %w", f.Name(), err)
	}
	return nil
}
