package storage

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with errors.Is; the store wraps them with detail.
var (
	// ErrNotFound is returned by Update and Delete ops for a missing id.
	ErrNotFound = errors.New("storage: not found")
	// ErrExists is returned by an Insert op whose id is already present.
	ErrExists = errors.New("storage: already exists")
	// ErrUnique is matched by every *UniqueError.
	ErrUnique = errors.New("storage: unique index violated")
	// ErrInvalid is returned for an op the store cannot log faithfully: an
	// empty id, an id that changes in a JSON round trip, a value that does
	// not encode, or an op of another store's table.
	ErrInvalid = errors.New("storage: invalid op")
	// ErrFailed is matched by the error of a store that refuses writes after
	// a write, fsync, rename or truncate error. Only a restart, which
	// recovers from what is on disk, clears it.
	ErrFailed error = &unavailableError{"storage: failed, refusing writes"}
	// ErrClosed is returned by Commit and Compact on a store that is not
	// open.
	ErrClosed error = &unavailableError{"storage: closed"}
	// ErrLocked is matched by a *LockError: another process (or another
	// Store in this one) holds the directory.
	ErrLocked = errors.New("storage: locked")
)

// UniqueError reports an op that would give two live records of Table the
// same Key in unique index Index.
type UniqueError struct {
	Table string
	Index string
	Key   string
}

func (e *UniqueError) Error() string {
	return fmt.Sprintf("storage: %s.%s %q already taken", e.Table, e.Index, e.Key)
}

// Is makes errors.Is(err, ErrUnique) true for a *UniqueError.
func (e *UniqueError) Is(target error) bool { return target == ErrUnique }

// CorruptError reports damage in a log file: the first bad byte offset and
// why it is bad. It is returned by Open for damage before the tail, and by
// Verify.
type CorruptError struct {
	File   string
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("storage: %s: damaged at byte offset %d: %s", e.File, e.Offset, e.Reason)
}

// LockError reports that Dir is held by another store. Holder is what the
// holder wrote into the lock file: its pid, host and start time.
type LockError struct {
	Dir    string
	Holder string
}

func (e *LockError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "an unknown process"
	}
	return fmt.Sprintf("storage: %s is locked by %s", e.Dir, holder)
}

// Is makes errors.Is(err, ErrLocked) true for a *LockError.
func (e *LockError) Is(target error) bool { return target == ErrLocked }

// unavailableError is an error meaning "this store takes no writes now".
// It reports Unavailable, which the HTTP layer answers with 503 without
// storage knowing of HTTP.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return e.msg }

// Unavailable reports true: the store cannot take writes now.
func (e *unavailableError) Unavailable() bool { return true }
