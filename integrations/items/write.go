package items

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"searchsvc/storage"
)

// The item store's writes and deletions. The sync scheduler commits the
// ops they return in the same log line as its own (the tasks that
// produced or removed the items, the record's progress), and removes the
// content files once that line is durable.

// Stage seals an item's extracted text and appends it to its record's
// current pack (see pack.go), setting it.Content to where it lies; it is
// durable once Publish returns. The raw original is not kept (see
// content.go).
func (s *Store) Stage(it *ItemRecord, text string) (Staged, error) {
	return s.content.stage(it, text)
}

// Publish makes Staged texts durable: one fsync of each pack they were
// appended to. On error, Discard.
func (s *Store) Publish(files []Staged) error { return s.content.publish(files) }

// Discard forgets the texts of a batch that was not committed: their
// bytes are dead space of their pack, for its next compaction.
func (s *Store) Discard(files []Staged) { s.content.remove(files) }

// InsertOp returns the op that stores it, whose text is published.
func (s *Store) InsertOp(it ItemRecord) storage.Op {
	b, err := json.Marshal(&it)
	if err != nil {
		b = nil // the commit fails: not JSON
	}
	return s.t.Insert(it.ID, b, it.Key)
}

// RemoveRecordOps returns the ops that soft-delete the record's live items
// (their personal fields cleared), and the ids of those items. The
// record's content directory goes afterwards (RemoveRecordFiles).
func (s *Store) RemoveRecordOps(recordID string, now time.Time) ([]storage.Op, []string) {
	now = now.UTC()
	var ids []string
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) {
		for i := range d.ents.n {
			if e := d.ents.at(uint32(i)); e.live() && d.records[e.record()] == recordID {
				ids = append(ids, formatID(e.id))
			}
		}
	})
	ops := make([]storage.Op, len(ids))
	for i, id := range ids {
		ops[i] = s.scrubOp(id, now)
	}
	return ops, ids
}

// RemoveProviderOps returns the ops that soft-delete the record's live
// items with the given provider ids (the provider reported them deleted),
// and the removed items. Their content files go afterwards (RemoveFiles).
func (s *Store) RemoveProviderOps(recordID string, providerIDs []string, now time.Time) ([]storage.Op, []ItemRecord) {
	now = now.UTC()
	gone := s.readAll(func(d *dense, load func(uint32) ([]byte, error)) []uint32 {
		var slots []uint32
		for _, pid := range providerIDs {
			k, _ := parseKey(itemKey(recordID, pid))
			if sl, ok := d.findKey(k, load); ok && d.ents.at(sl).live() {
				slots = append(slots, sl)
			}
		}
		return slots
	})
	ops := make([]storage.Op, len(gone))
	for i := range gone {
		ops[i] = s.scrubOp(gone[i].ID, now)
	}
	return ops, gone
}

// scrubOp soft-deletes the item with id, if it is still there when the
// op is committed.
func (s *Store) scrubOp(id string, now time.Time) storage.Op {
	return s.t.UpdateIfExists(id, func(cur []byte) ([]byte, string, error) {
		var it ItemRecord
		if err := json.Unmarshal(cur, &it); err != nil {
			return nil, "", err
		}
		scrub(&it, now)
		b, err := json.Marshal(&it)
		return b, "", err
	})
}

// RemoveFiles removes the texts of items whose soft delete is committed:
// in a pack, their bytes are overwritten with zeros, and a pack then half
// dead is compacted (see pack.go); an item stored before packs has its
// file removed. A file already gone is not an error; what is left is the
// start-up sweep's to remove.
func (s *Store) RemoveFiles(its []ItemRecord) error {
	var errs []error
	refs := make(map[string][]contentRef)
	for i := range its {
		if ref, err := parseRef(its[i].Content); err == nil {
			refs[its[i].RecordID] = append(refs[its[i].RecordID], ref)
			continue
		}
		if err := os.Remove(s.content.path(&its[i])); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove item content: %w", err))
		}
	}
	for recordID, rs := range refs {
		p := s.content.packsOf(recordID)
		p.compact.Lock()
		err := p.zero(rs)
		p.compact.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
		if err := s.compactDue(recordID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RemoveRecordFiles deletes a record's content directory, once the soft
// delete of its items is committed.
func (s *Store) RemoveRecordFiles(recordID string) error { return s.content.removeRecord(recordID) }

// RecordDirs returns the ids of the records that have a content directory.
func (s *Store) RecordDirs() ([]string, error) { return listDir(s.content.dir) }

// Text returns the extracted text of the item, from its sealed content
// file; ErrContentMissing if the file is gone.
func (s *Store) Text(it *ItemRecord) (string, error) { return s.content.readText(it) }

// ForRecord returns every item of the record, live or not, read back
// from the log (see readAll).
func (s *Store) ForRecord(recordID string) []ItemRecord {
	return s.readAll(func(d *dense, _ func(uint32) ([]byte, error)) []uint32 {
		var slots []uint32
		for i := range d.ents.n {
			if e := d.ents.at(uint32(i)); !e.gone() && d.records[e.record()] == recordID {
				slots = append(slots, uint32(i))
			}
		}
		return slots
	})
}

// Scan calls fn for every item, live or not, read back from the log,
// until fn returns false. fn must not call the store. It is for commands
// (rotate-key) and tests: it reads every record (see readAll).
func (s *Store) Scan(fn func(ItemRecord) bool) {
	its := s.readAll(func(d *dense, _ func(uint32) ([]byte, error)) []uint32 {
		slots := make([]uint32, 0, d.n)
		for i := range d.ents.n {
			if !d.ents.at(uint32(i)).gone() {
				slots = append(slots, uint32(i))
			}
		}
		return slots
	})
	for _, it := range its {
		if !fn(it) {
			break
		}
	}
}

// MetaHeaders calls fn with the header of the sealed metadata of the live
// items (what names the key that sealed it, as vault.Holds reads it) and
// how many items have it: what start-up checks CREDENTIALS_KEY against,
// without reading the items back.
func (s *Store) MetaHeaders(fn func(head []byte, n int)) {
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) {
		n := make([]int, len(d.heads))
		for i := range d.ents.n {
			if e := d.ents.at(uint32(i)); e.live() {
				n[e.meta()]++
			}
		}
		for i := 1; i < len(d.heads); i++ {
			if n[i] > 0 {
				fn(d.heads[i], n[i])
			}
		}
	})
}

// LiveCounts returns how many live items each record holds, from the
// entries kept in memory (no item is read back).
func (s *Store) LiveCounts() map[string]int64 {
	n := map[string]int64{}
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) {
		for i := range d.ents.n {
			if e := d.ents.at(uint32(i)); e.live() {
				n[d.records[e.record()]]++
			}
		}
	})
	return n
}

// Sweep removes content files that no item needs (a crash between
// writing an item's own file and committing its metadata, or between a
// soft delete and the file's removal; packs of a record no item names),
// finishes the compactions a crash interrupted (pack-<n>.old), moves the
// texts of live items stored before packs, each in a file of its own,
// into their record's pack (packOwnFiles), and counts live items stored
// before packs whose file is missing. A packed item's
// text is checked when it is read (a checked pread; see pack.go).
func (s *Store) Sweep() (removed, missing int, err error) {
	names, err := listDir(s.content.dir)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for _, recID := range names {
		files, err := listDir(s.content.recordDir(recID))
		if err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", recID, err))
			continue
		}
		orphans, olds, own, lost := s.sweepRecord(recID, files)
		missing += lost
		for _, name := range orphans {
			os.Remove(filepath.Join(s.content.recordDir(recID), name))
			removed++
		}
		for _, n := range olds {
			if _, err := s.compactPack(recID, s.content.packsOf(recID), n); err != nil {
				errs = append(errs, fmt.Errorf("record %s: %w", recID, err))
			}
		}
		if own > 0 {
			if _, err := s.packOwnFiles(recID); err != nil {
				errs = append(errs, fmt.Errorf("record %s: %w", recID, err))
			}
		}
	}
	return removed, missing, errors.Join(errs...)
}

// sweepRecord sorts the files of a record's directory: what to remove,
// the packs whose compaction a crash interrupted, how many live items
// have a file of their own, and how many live items are missing their own
// file (counted only where the record has no pack: which items are packed
// only their log records say).
func (s *Store) sweepRecord(recID string, files []string) (orphans []string, olds []int, own, missing int) {
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) {
		known := slices.Contains(d.records, recID)
		have := make(map[uint32]bool, len(files))
		packed := false
		for _, name := range files {
			if n, old, ok := parsePackName(name); ok && known {
				packed = true
				if old {
					olds = append(olds, n)
				}
				continue
			}
			sl, ok := d.slot(name)
			if !known || !ok || !d.ents.at(sl).live() || d.records[d.ents.at(sl).record()] != recID {
				orphans = append(orphans, name)
				continue
			}
			have[sl] = true
		}
		own = len(have)
		for i := range d.ents.n {
			if e := d.ents.at(uint32(i)); known && !packed && d.records[e.record()] == recID && e.live() && !have[uint32(i)] {
				missing++
			}
		}
	})
	return orphans, olds, own, missing
}

// Len returns the number of items, live or not.
func (s *Store) Len() int {
	var n int
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) { n = d.n })
	return n
}

// Path is the file that holds the item's sealed text: its pack, or its
// own file if it was stored before packs.
func (s *Store) Path(it *ItemRecord) string { return s.content.path(it) }

// RecordDir is the directory of the record's content files.
func (s *Store) RecordDir(recordID string) string { return s.content.recordDir(recordID) }
