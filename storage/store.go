package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// SyncMode says when a write counts as done.
type SyncMode int

const (
	// SyncFsync acknowledges a Commit only after its log line is fsynced.
	SyncFsync SyncMode = iota
	// SyncNone acknowledges a Commit once its line is written to the OS,
	// without fsync: for tests and tmpfs, where a power cut loses
	// everything anyway.
	SyncNone
)

// String returns the STORE_SYNC spelling of m.
func (m SyncMode) String() string {
	switch m {
	case SyncFsync:
		return "fsync"
	case SyncNone:
		return "none"
	}
	return fmt.Sprintf("SyncMode(%d)", int(m))
}

// ParseSyncMode parses a STORE_SYNC value: "fsync" or "none".
func ParseSyncMode(s string) (SyncMode, error) {
	switch s {
	case "fsync":
		return SyncFsync, nil
	case "none":
		return SyncNone, nil
	}
	return 0, fmt.Errorf("storage: sync mode %q: want fsync or none", s)
}

// Defaults for Options.
const (
	// DefaultCompactMinBytes is the log size below which automatic
	// compaction does not run. Rewriting a small log often wears an SD card
	// more than the dead records it would free cost in space or replay time.
	DefaultCompactMinBytes = 4 << 20
	// DefaultCommitWindow is how long the writer waits for more concurrent
	// commits to share an fsync. It is below the cost of one fsync on an SD
	// card, so waiting is cheaper than syncing twice.
	DefaultCommitWindow = 2 * time.Millisecond
)

// Options configure a Store. The zero value is the production setting.
type Options struct {
	// Sync is when a Commit is acknowledged. Default SyncFsync.
	Sync SyncMode
	// FS is the file system. nil: the operating system.
	FS FS
	// Logger receives recovery and compaction events. nil: discard.
	Logger *slog.Logger
	// Now is the clock used to drop expired records. nil: time.Now.
	Now func() time.Time
	// CompactMinBytes is the log size floor for automatic compaction.
	// 0: DefaultCompactMinBytes.
	CompactMinBytes int64
	// CommitWindow is the longest the writer waits to gather more commits
	// into one fsync, used only when the previous batch held more than one
	// commit, so a lone writer never waits. 0: DefaultCommitWindow. A
	// negative value turns group commit off: every Commit gets its own write
	// and fsync, which is only useful as a baseline in benchmarks.
	CommitWindow time.Duration
	// LoneWindow is how long a commit that arrives alone waits for another
	// to share its fsync, when the one before it came less than
	// 10 × LoneWindow earlier: commits that arrive one by one but close
	// together, such as logins spaced by the limit on concurrent password
	// hashes. A commit after a quiet spell never waits, and every commit
	// is still acknowledged only once it is on disk. 0: never wait.
	LoneWindow time.Duration
}

// Stats are a store's counters since Open, and the state of its log.
type Stats struct {
	Commits        int64     // acknowledged Commit calls
	Records        int64     // ops written by acknowledged commits
	Batches        int64     // log lines appended, one per group commit
	Fsyncs         int64     // file and directory fsyncs, compaction and open included
	BytesWritten   int64     // bytes written to log files, compaction included
	LiveRecords    int64     // records held, soft-deleted ones included
	DeadRecords    int64     // ops in the active log superseded by later ones
	FileBytes      int64     // size of the active log file
	Compactions    int64     // compactions completed
	LastCompaction time.Time // when the last one completed; zero if none
}

// Store is one append-only log in its own directory, with the typed tables
// registered on it. Create it with New, Register its tables, then Open.
// It is safe for concurrent use.
type Store struct {
	dir  string
	opts Options
	fsys FS
	log  *slog.Logger
	now  func() time.Time

	// mu guards the committed state of every table, failed and stats.
	// Readers hold it for reading; the writer goroutine holds it for
	// writing only while it applies a durable batch.
	mu     sync.RWMutex
	failed error
	full   error // ErrDiskFull while the disk is full; cleared by a write that fits
	stats  Stats

	// life guards the lifecycle and sending on reqs, so that Close cannot
	// close reqs under a sender.
	life      sync.RWMutex
	opened    bool
	running   bool
	closed    bool
	reqs      chan *request
	done      chan struct{} // closed when the writer goroutine exits
	closeOnce sync.Once
	closeErr  error

	tables []table // registration order, then tables found only in the log
	byName map[string]table

	// Owned by Open, then by the writer goroutine.
	lock    File
	file    File   // the active log, opened for appending
	gen     uint64 // generation of the active log
	seq     uint64 // sequence number of its last line
	fileOps int64  // ops in it
	b       batch

	// replayErr is the first record a cold table's caller refused during
	// the replay; Open fails with it.
	replayErr *CorruptError

	lastProbe time.Time // owned by the writer: when probeSpace last wrote
	lastLone  time.Time // owned by the writer: when the last lone commit was taken
	fullSeen  bool      // owned by the writer: full may be set

	// noCompactUntil postpones automatic compaction after one ran out of
	// space, so that every batch does not write a whole new log to learn
	// the disk is still full.
	noCompactUntil time.Time
}

// New returns a store for dir, still closed: call Open.
func New(dir string, opts Options) *Store {
	if opts.FS == nil {
		opts.FS = osFS{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CompactMinBytes == 0 {
		opts.CompactMinBytes = DefaultCompactMinBytes
	}
	if opts.CommitWindow == 0 {
		opts.CommitWindow = DefaultCommitWindow
	}
	s := &Store{
		dir:    dir,
		opts:   opts,
		fsys:   opts.FS,
		log:    opts.Logger.With("dir", dir),
		now:    opts.Now,
		byName: make(map[string]table),
	}
	s.b.s = s
	return s
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) register(t table) {
	s.life.Lock()
	defer s.life.Unlock()
	if s.opened || s.closed {
		panic(fmt.Sprintf("storage: Register(%q) after Open", t.tableName()))
	}
	if _, dup := s.byName[t.tableName()]; dup {
		panic(fmt.Sprintf("storage: table %q registered twice", t.tableName()))
	}
	s.byName[t.tableName()] = t
	s.tables = append(s.tables, t)
}

// Open creates the directory (0700) if needed, takes its lock, removes
// leftovers of an interrupted compaction, replays the log into the tables
// and starts the writer. A torn tail is cut off and logged; damage before it
// is a *CorruptError and the store does not open. A store whose Open failed
// cannot be opened again: make a new one.
func (s *Store) Open() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.opened {
		return errors.New("storage: Open called twice")
	}
	s.opened = true
	if err := s.open(); err != nil {
		s.closed = true
		s.closeFiles()
		return err
	}
	s.running = true
	s.reqs = make(chan *request, maxBatch)
	s.done = make(chan struct{})
	go s.writer()
	return nil
}

// Close stops accepting commits, finishes those already queued (each is
// acknowledged or refused as usual), stops the writer, closes the log and
// releases the lock. It is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.life.Lock()
		running := s.running
		s.running, s.closed = false, true
		s.life.Unlock()
		if !running {
			return
		}
		close(s.reqs)
		<-s.done
		s.closeErr = s.closeFiles()
	})
	return s.closeErr
}

func (s *Store) closeFiles() error {
	var errs []error
	s.mu.Lock() // a Load may be reading the file
	f := s.file
	s.file = nil
	s.mu.Unlock()
	if f != nil {
		errs = append(errs, f.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
		s.lock = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("storage: close %s: %w", s.dir, err)
	}
	return nil
}

// Err returns nil, or the error that put the store into the failed state:
// it matches ErrFailed and wraps the write, fsync or rename error behind it.
// A failed store refuses every Commit and Compact but still serves reads of
// the last durable state.
func (s *Store) Err() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.failed
}

// fail puts the store into the failed state, once, and returns the error.
// An fsync is never retried: after a failed fsync Linux may have dropped
// the dirty pages, so a later successful fsync would prove nothing.
func (s *Store) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = fmt.Errorf("%w: %s: %w", ErrFailed, s.dir, err)
		s.log.Error("store failed, refusing writes until restart", "err", err)
	}
	return s.failed
}

// Position identifies what the store holds as committed: the generation
// of its log and the sequence number of its last line. Two equal
// positions of one store mean nothing was committed in between, so data
// derived from the store (the search index) records the position it has
// caught up to and knows at start whether it missed anything.
type Position struct{ Gen, Seq uint64 }

// Position returns the store's position.
func (s *Store) Position() Position {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Position{Gen: s.gen, Seq: s.seq}
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.stats
	st.LiveRecords = 0
	for _, t := range s.tables {
		st.LiveRecords += int64(t.count())
	}
	st.DeadRecords = s.fileOps - st.LiveRecords
	return st
}

// count adds to the I/O counters.
func (s *Store) count(fsyncs, bytes int64) {
	s.mu.Lock()
	s.stats.Fsyncs += fsyncs
	s.stats.BytesWritten += bytes
	s.mu.Unlock()
}
