//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package storage

import (
	"errors"
	"fmt"
	"os"
)

// flock is not implemented on this platform: the store refuses to open
// rather than run without protection against a second writer.
func flock(f *os.File) error {
	return fmt.Errorf("lock %s: %w", f.Name(), errors.ErrUnsupported)
}
