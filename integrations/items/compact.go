package items

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"searchsvc/storage"
)

// Compaction of a record's packs: the policy is in pack.go.

// compactDue compacts the record's packs whose dead bytes reach
// 1/packDeadShare of their size.
func (s *Store) compactDue(recordID string) error {
	p := s.content.packsOf(recordID)
	var errs []error
	for _, n := range p.due() {
		if _, err := s.compactPack(recordID, p, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// compactPack rewrites pack n of the record: renamed pack-<n>.old (if it
// is not already, after a crash midway), the live items' sealed bytes
// copied to the current pack and fsynced, their new references
// committed, the old file removed. An item whose bytes do not read back
// whole is left pointing at the old pack, whose removal then makes its
// text missing: it was damaged already, and the others are kept. It
// returns how many items it moved. A pack that holds texts staged and
// not yet published is left for a later compaction: their references are
// not committed, so it would not copy them. A record's texts are staged,
// published and committed by the one sync run of the record at a time,
// which compacts only between its batches (RemoveFiles after a commit).
func (s *Store) compactPack(recordID string, p *packSet, n int) (int, error) {
	p.compact.Lock()
	defer p.compact.Unlock()
	if p.busy(n) {
		return 0, nil
	}
	old := p.path(n) + oldSuffix
	if err := os.Rename(p.path(n), old); err == nil {
		if err := storage.SyncDir(p.dir); err != nil {
			return 0, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("compact item content: %w", err)
	} else if _, err := os.Stat(old); err != nil {
		return 0, nil // gone already
	}
	p.mu.Lock()
	if p.cur != nil && p.curN == n {
		// Appends go to the next pack from now on; cur is pack-<n>.old.
		p.cur.Close()
		p.cur = nil
	}
	p.mu.Unlock()

	var moved, stale []contentRef
	var ops []storage.Op
	for _, it := range s.ForRecord(recordID) {
		ref, err := parseRef(it.Content)
		if !it.Live() || err != nil || ref.pack != n {
			continue
		}
		b, err := readRef(p.dir, ref)
		if err != nil {
			continue // damaged: see above
		}
		to, err := p.appendSealed(b, false)
		if err != nil {
			return 0, err
		}
		from := it.Content
		ops = append(ops, s.t.UpdateIfExists(it.ID, func(raw []byte) ([]byte, string, error) {
			var cur ItemRecord
			if err := json.Unmarshal(raw, &cur); err != nil {
				return nil, "", err
			}
			if !cur.Live() || cur.Content != from {
				stale = append(stale, to) // deleted or moved meanwhile
				return nil, "", nil
			}
			cur.Content = to.String()
			b, err := json.Marshal(&cur)
			return b, cur.Key, err
		}))
		moved = append(moved, to)
	}
	if err := p.sync(); err != nil {
		return 0, err
	}
	for i := 0; i < len(ops); i += rotateBatch {
		if err := s.st.Commit(ops[i:min(i+rotateBatch, len(ops))]...); err != nil {
			return 0, err
		}
	}
	if len(stale) > 0 {
		if err := p.zero(stale); err != nil {
			return 0, err
		}
	}
	if err := os.Remove(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("compact item content: %w", err)
	}
	if err := storage.SyncDir(p.dir); err != nil {
		return 0, err
	}
	p.mu.Lock()
	delete(p.dead, n)
	p.mu.Unlock()
	return len(moved) - len(stale), nil
}

// packOwnFiles moves the texts of the record's live items that an earlier
// build stored in files of their own into the record's pack: their sealed
// bytes appended as they are, fsynced, their references committed, then
// the files removed. A crash before the commit leaves dead bytes in the
// pack and the files in place; after it, files that the next sweep
// removes here, their items having references. It returns how many
// items it moved.
func (s *Store) packOwnFiles(recordID string) (int, error) {
	p := s.content.packsOf(recordID)
	p.compact.Lock()
	defer p.compact.Unlock()
	var ops []storage.Op
	var done []string // files to remove once committed
	for _, it := range s.ForRecord(recordID) {
		path := filepath.Join(p.dir, it.ID)
		if !it.Live() {
			continue
		}
		if it.Content != "" {
			if _, err := os.Stat(path); err == nil {
				done = append(done, path) // moved, not yet removed
			}
			continue
		}
		b, err := s.content.readSealed(&it)
		if err != nil {
			continue // missing or unreadable: left as it is
		}
		to, err := p.appendSealed(b, false)
		if err != nil {
			return 0, err
		}
		ops = append(ops, s.t.UpdateIfExists(it.ID, func(raw []byte) ([]byte, string, error) {
			var cur ItemRecord
			if err := json.Unmarshal(raw, &cur); err != nil {
				return nil, "", err
			}
			if !cur.Live() || cur.Content != "" {
				return nil, "", nil
			}
			cur.Content = to.String()
			b, err := json.Marshal(&cur)
			return b, cur.Key, err
		}))
		done = append(done, path)
	}
	if err := p.sync(); err != nil {
		return 0, err
	}
	for i := 0; i < len(ops); i += rotateBatch {
		if err := s.st.Commit(ops[i:min(i+rotateBatch, len(ops))]...); err != nil {
			return 0, err
		}
	}
	for _, path := range done {
		os.Remove(path)
	}
	return len(ops), storage.SyncDir(p.dir)
}
