package search

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"

	"searchsvc/storage"
)

// SetCheckpoint records that every Add and Delete the caller made before
// this call covers its store up to v (an opaque number, such as the
// store's sequence). Checkpoint returns v once all of it is on disk.
func (ix *Index) SetCheckpoint(v uint64) {
	ix.mu.Lock()
	ix.cpWant = v
	ix.mu.Unlock()
	ix.kick(ix.flushKick)
}

// Checkpoint is the last value of SetCheckpoint known durable: after a
// crash the caller catches up from it (re-adding is harmless).
func (ix *Index) Checkpoint() uint64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.cpDone
}

const checkpointName = "CHECKPOINT"

func (ix *Index) readCheckpoint() error {
	b, err := readBounded(filepath.Join(ix.cfg.Dir, checkpointName), 1<<10)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil {
		var plain []byte
		plain, _, err = openFile(ix.s, manMagic, b, blockID{kind: kindCheckpoint})
		if err == nil {
			r := &reader{b: plain}
			ix.cpDone = r.uvarint()
			err = r.err
		}
	}
	if err != nil {
		// A damaged checkpoint only means catching up from the start.
		ix.log.Error("search checkpoint damaged, catching up from the start", "err", err)
		ix.cpDone = 0
	}
	return nil
}

func (ix *Index) writeCheckpoint(v uint64) error {
	var plain [10]byte
	n := binary.PutUvarint(plain[:], v)
	b := sealFile(ix.s, manMagic, plain[:n], blockID{kind: kindCheckpoint})
	if err := storage.ReplaceFile(filepath.Join(ix.cfg.Dir, checkpointName), ".tmp", b, 0o600); err != nil {
		return err
	}
	ix.stats.written.Add(int64(len(b)))
	return nil
}

// Stats are the index's figures for the metrics.
type Stats struct {
	Users        int
	Docs         int // live documents
	Pending      int // documents only in memory, waiting for a flush
	Segments     int
	BytesOnDisk  int64 // segment files
	BytesWritten int64 // since Open: segments, manifests, checkpoint
	Flushes      int64
	Merges       int64
	Queries      int64
	QueryNanos   int64  // total time answering queries
	CacheBytes   int64  // opened blocks held
	CacheHits    uint64 // block reads served by the cache
	CacheMisses  uint64 // block reads that opened a block
}

// Stats returns the current figures.
func (ix *Index) Stats() Stats {
	var st Stats
	for _, u := range ix.userList() {
		st.Users++
		u.mu.RLock()
		for _, p := range u.parts {
			st.Docs += p.live()
			if p.seg != nil {
				st.Segments++
				st.BytesOnDisk += p.seg.size
			} else {
				st.Pending += p.live()
			}
		}
		u.mu.RUnlock()
	}
	st.BytesWritten = ix.stats.written.Load()
	st.Flushes = ix.stats.flushes.Load()
	st.Merges = ix.stats.merges.Load()
	st.Queries = ix.stats.queries.Load()
	st.QueryNanos = ix.stats.queryNanos.Load()
	ix.cache.mu.Lock()
	st.CacheBytes = ix.cache.used
	st.CacheHits, st.CacheMisses = ix.cache.hits, ix.cache.misses
	ix.cache.mu.Unlock()
	return st
}
