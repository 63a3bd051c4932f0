package storage

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// shouldCompact reports whether dead records are at least half of the log
// and the log is above the size floor.
func (s *Store) shouldCompact() bool {
	st := s.Stats()
	return st.DeadRecords >= st.LiveRecords && st.FileBytes >= s.opts.CompactMinBytes
}

// compact rewrites the log as the next generation holding one line per
// live, unexpired record. It runs in the writer goroutine, so no commit
// interleaves with it. The order of steps makes every crash leave either
// the old log or the complete new one:
//
//  1. write log.<gen+1>.jsonl.tmp and fsync it;
//  2. rename it to log.<gen+1>.jsonl and fsync the directory;
//  3. switch appends to it, then remove the old log.
//
// Open removes temp files (step 1 unfinished) and generations older than
// the newest (step 3 unfinished or still not durable), so the old log's
// removal needs no directory fsync of its own.
func (s *Store) compact() error {
	now := s.now()
	gen := s.gen + 1
	final := filepath.Join(s.dir, logName(gen))
	tmp := final + ".tmp"
	f, err := s.fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return s.compactFailed(fmt.Errorf("create %s: %w", tmp, err))
	}
	abort := func(err error) error {
		for _, t := range s.tables {
			t.switchRefs(false)
		}
		f.Close()
		if rerr := s.fsys.Remove(tmp); rerr != nil {
			s.log.Warn("cannot remove unfinished compaction", "file", tmp, "err", rerr)
		}
		return err
	}

	cw := &countWriter{w: f}
	expired, seq, dropped, err := s.writeCompacted(cw, tmp, now)
	if err != nil {
		return abort(err)
	}
	if s.opts.Sync == SyncFsync {
		err = f.Sync()
		s.count(1, 0)
		if err != nil {
			return abort(s.compactFailed(fmt.Errorf("fsync %s: %w", tmp, err)))
		}
	}
	if err := s.fsys.Rename(tmp, final); err != nil {
		return abort(s.fail(fmt.Errorf("rename %s: %w", tmp, err)))
	}
	if s.opts.Sync == SyncFsync {
		err = s.fsys.SyncDir(s.dir)
		s.count(1, 0)
		if err != nil {
			// The rename may or may not be durable: the old log must stay,
			// and so must the new one. Refuse writes until a restart sorts
			// out which is newest.
			for _, t := range s.tables {
				t.switchRefs(false)
			}
			f.Close()
			return s.fail(fmt.Errorf("fsync %s: %w", s.dir, err))
		}
	}
	s.switchLog(f, gen, seq, cw.n, expired, now)
	s.log.Info("compacted the log", "file", logName(gen), "records", seq, "bytes", cw.n, "expired_dropped", dropped)
	return nil
}

// writeCompacted writes the live records of every table to cw, through a
// buffer, one line each numbered from 1, and returns the ids of the
// expired records it left out, per table, the last line's number and how
// many it left out. Its errors are ready to return from compact: an I/O
// error is a failed compaction; a record that does not read back whole
// puts compactions off for compactDamageBackoff.
func (s *Store) writeCompacted(cw *countWriter, tmp string, now time.Time) (expired map[table][]string, seq uint64, dropped int, err error) {
	bw := bufio.NewWriterSize(cw, 256<<10)
	var lb lineBuilder
	var pos int64 // bytes emitted so far: the offset of the next line
	var ioErr error
	emit := func(table, id string, v []byte) (int64, error) {
		seq++
		lb.reset(seq)
		at := pos + int64(lb.addPut(table, id, v))
		line := lb.finish()
		pos += int64(len(line))
		_, ioErr = bw.Write(line)
		return at, ioErr
	}
	expired = make(map[table][]string)
	for _, t := range s.tables {
		ids, err := t.writeLive(now, emit)
		if ioErr != nil {
			s.count(0, cw.n)
			return nil, 0, 0, s.compactFailed(fmt.Errorf("write %s: %w", tmp, ioErr))
		}
		if err != nil {
			// A record that does not read back whole (a cold record whose
			// bytes were damaged since they were written) stays as it is
			// in the log; compacting again at every commit would only
			// rewrite the rest to throw it away.
			s.count(0, cw.n)
			s.noCompactUntil = s.now().Add(compactDamageBackoff)
			return nil, 0, 0, fmt.Errorf("storage: compact: %w", err)
		}
		expired[t] = ids
		dropped += len(ids)
	}
	err = bw.Flush()
	s.count(0, cw.n)
	if err != nil {
		return nil, 0, 0, s.compactFailed(fmt.Errorf("write %s: %w", tmp, err))
	}
	return expired, seq, dropped, nil
}

// switchLog makes f, the compacted log of generation gen holding seq
// lines and size bytes, the store's log, drops the expired records it
// left out, and closes and removes the log it replaces.
func (s *Store) switchLog(f File, gen, seq uint64, size int64, expired map[table][]string, now time.Time) {
	// The file, the generation and the cold records' positions in it
	// change together under the lock, so a Load reads one log or the
	// other, never a position of one in the other.
	old, oldFile := filepath.Join(s.dir, logName(s.gen)), s.file
	s.mu.Lock()
	s.file = f
	for _, t := range s.tables {
		t.switchRefs(true)
	}
	for t, ids := range expired {
		t.drop(ids)
	}
	s.gen, s.seq, s.fileOps = gen, seq, int64(seq)
	s.stats.FileBytes = size
	s.stats.Compactions++
	s.stats.LastCompaction = now
	s.mu.Unlock()
	if err := oldFile.Close(); err != nil {
		s.log.Warn("close superseded log", "file", old, "err", err)
	}
	if err := s.fsys.Remove(old); err != nil {
		s.log.Warn("cannot remove superseded log", "file", old, "err", err)
	}
}

// compactNoSpaceBackoff is how long automatic compaction waits after one
// ran out of space, and compactDamageBackoff after one met a record that
// does not read back (damage, which only an operator's Verify and Repair
// mend).
const (
	compactNoSpaceBackoff = 10 * time.Minute
	compactDamageBackoff  = time.Hour
)

// compactFailed handles an error writing the compaction's temp file, which
// the caller removes: the active log is untouched, so a full disk only
// puts the store in the disk-full state (and postpones automatic
// compaction); any other error fails it.
func (s *Store) compactFailed(err error) error {
	if isNoSpace(err) {
		s.noCompactUntil = s.now().Add(compactNoSpaceBackoff)
		return s.setFull(err)
	}
	return s.fail(err)
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
