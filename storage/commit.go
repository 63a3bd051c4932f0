package storage

import (
	"fmt"
	"io"
	"time"
)

// maxBatch bounds the commits gathered into one log line.
const maxBatch = 1024

// request is one Commit (ops) or one Compact (compact) waiting for the
// writer. done is buffered so the writer never blocks on an answer.
type request struct {
	ops     []Op
	compact bool
	probe   bool // CheckSpace
	done    chan error
}

// batch is the writer's state while it builds one log line.
type batch struct {
	s    *Store
	lb   lineBuilder
	undo []func()
	ok   []*request // commits in the line, acknowledged after it is durable
}

// Commit writes ops as one log line, so they all take effect or none do,
// and returns once that line is durable (SyncFsync) and visible to reads.
// A Commit whose ops are all IfExists ops of missing records writes
// nothing; it is answered with the line of the commits ahead of it in the
// same batch, if any, so a delete it relied on is durable by then.
// Ops are checked in the writer goroutine against the current state and
// the ops of commits ahead of this one, so of two concurrent conflicting
// commits exactly one succeeds. A failed check fails only this Commit: the
// error is ErrExists, ErrNotFound, a *UniqueError, ErrInvalid, or what an
// Update func returned. After a write or fsync error the Commit, and every
// later one, fails with an error matching ErrFailed. Commit with no ops
// does nothing.
func (s *Store) Commit(ops ...Op) error {
	if len(ops) == 0 {
		return nil
	}
	for _, o := range ops {
		if o.p == nil {
			return fmt.Errorf("%w: zero Op", ErrInvalid)
		}
	}
	return s.send(&request{ops: ops, done: make(chan error, 1)})
}

// Compact rewrites the log with only the live, unexpired records, now. It
// waits for commits queued ahead of it.
func (s *Store) Compact() error {
	return s.send(&request{compact: true, done: make(chan error, 1)})
}

func (s *Store) send(r *request) error {
	s.life.RLock()
	if !s.running {
		s.life.RUnlock()
		return ErrClosed
	}
	if err := s.Err(); err != nil {
		s.life.RUnlock()
		return err
	}
	s.reqs <- r
	s.life.RUnlock()
	return <-r.done
}

// writer is the one goroutine that writes the log. It takes the first
// waiting request, gathers the others, writes them as one line with one
// write and one fsync, applies them to memory, then acknowledges them.
func (s *Store) writer() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var reqs []*request
	last := 0 // commits in the previous batch
	for {
		r, ok := <-s.reqs
		if !ok {
			return
		}
		reqs = append(reqs[:0], r)
		reqs, ok = s.gather(reqs, last, timer)
		last = s.process(reqs)
		clear(reqs)
		if !ok {
			return
		}
	}
}

// gather adds queued requests to reqs. If the previous batch held several
// commits, more writers are likely on their way back, so it waits up to
// CommitWindow until as many have arrived. It reports false once reqs is
// closed and drained.
func (s *Store) gather(reqs []*request, last int, timer *time.Timer) ([]*request, bool) {
	if s.opts.CommitWindow < 0 {
		return reqs, true
	}
drain:
	for len(reqs) < maxBatch {
		select {
		case r, ok := <-s.reqs:
			if !ok {
				return reqs, false
			}
			reqs = append(reqs, r)
		default:
			break drain
		}
	}
	want, window := last, s.opts.CommitWindow
	if len(reqs) == 1 && last <= 1 && s.opts.LoneWindow > 0 {
		now := time.Now()
		recent := now.Sub(s.lastLone) < 10*s.opts.LoneWindow
		s.lastLone = now
		if !recent {
			return reqs, true
		}
		want, window = 2, s.opts.LoneWindow
	} else if last <= 1 || len(reqs) >= last {
		return reqs, true
	}
	timer.Reset(window)
	defer timer.Stop()
	for len(reqs) < want && len(reqs) < maxBatch {
		select {
		case r, ok := <-s.reqs:
			if !ok {
				return reqs, false
			}
			reqs = append(reqs, r)
		case <-timer.C:
			return reqs, true
		}
	}
	return reqs, true
}

// process runs one batch of requests and returns the number of commits in
// it. Compactions asked for run after the batch's commits.
func (s *Store) process(reqs []*request) int {
	commits := 0
	compact := false
	b := &s.b
	b.lb.reset(s.seq + 1)
	b.ok = b.ok[:0]
	failed := s.Err()
	probe := false
	for _, r := range reqs {
		if r.compact {
			compact = true
			continue
		}
		if r.probe {
			probe = true
			continue
		}
		commits++
		if failed != nil {
			r.done <- failed
			continue
		}
		if err := b.add(r); err != nil {
			r.done <- err
			continue
		}
		b.ok = append(b.ok, r)
	}
	if len(b.ok) > 0 {
		var err error
		if b.lb.nops > 0 {
			err = s.writeBatch()
		} else { // every op was an IfExists of a missing record: nothing to write
			s.mu.Lock()
			s.stats.Commits += int64(len(b.ok))
			s.mu.Unlock()
		}
		for _, r := range b.ok {
			r.done <- err
		}
		clear(b.ok)
	}
	if probe {
		err := s.probeSpace()
		for _, r := range reqs {
			if r.probe {
				r.done <- err
			}
		}
	}
	if compact {
		err := s.Err()
		if err == nil {
			err = s.compact()
		}
		for _, r := range reqs {
			if r.compact {
				r.done <- err
			}
		}
	} else if s.Writable() == nil && s.shouldCompact() && !s.now().Before(s.noCompactUntil) {
		if err := s.compact(); err != nil {
			s.log.Error("automatic compaction failed", "err", err)
		}
	}
	return commits
}

// add prepares a commit's ops into the batch, or undoes all of them.
func (b *batch) add(r *request) error {
	n, nops := b.lb.mark()
	b.undo = b.undo[:0]
	for _, o := range r.ops {
		if err := o.p.prepare(b); err != nil {
			for i := len(b.undo) - 1; i >= 0; i-- {
				b.undo[i]()
			}
			clear(b.undo)
			b.lb.rollback(n, nops)
			return err
		}
	}
	clear(b.undo)
	return nil
}

// writeBatch writes the batch's line with one write, syncs it, and only then
// applies the batch to memory. On any error the store fails and nothing of
// the batch becomes visible.
func (s *Store) writeBatch() error {
	line := s.b.lb.finish()
	nops := int64(s.b.lb.nops)
	size := s.stats.FileBytes // the writer's own field: the log's durable end
	n, err := s.file.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	s.count(0, int64(n))
	if err != nil {
		s.discardPending()
		err = fmt.Errorf("write %s: %w", logName(s.gen), err)
		if isNoSpace(err) {
			return s.noSpace(size, err)
		}
		return s.fail(err)
	}
	if s.opts.Sync == SyncFsync {
		err = s.file.Sync()
		s.count(1, 0)
		if err != nil {
			s.discardPending()
			err = fmt.Errorf("fsync %s: %w", logName(s.gen), err)
			if isNoSpace(err) {
				return s.noSpace(size, err)
			}
			return s.fail(err)
		}
	}
	s.clearFull()
	s.mu.Lock()
	for _, t := range s.tables {
		t.applyPending(size)
	}
	s.seq++
	s.fileOps += nops
	s.stats.Commits += int64(len(s.b.ok))
	s.stats.Records += nops
	s.stats.Batches++
	s.stats.FileBytes += int64(len(line))
	s.mu.Unlock()
	return nil
}

func (s *Store) discardPending() {
	for _, t := range s.tables {
		t.clearPending()
	}
}
