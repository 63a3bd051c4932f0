package items

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"searchsvc/storage"
)

// The item store's writes and deletions. The sync scheduler commits the
// ops they return in the same log line as its own (the tasks that
// produced or removed the items, the record's progress), and removes the
// content files once that line is durable.

// Stage seals an item's text and raw original into a content file under a
// temporary name in its record's directory.
func (s *Store) Stage(it *ItemRecord, text string, raw []byte) (Staged, error) {
	return s.content.stage(it, text, raw)
}

// Publish makes Staged files durable and puts them in place (fsync of the
// files, renames, one fsync per directory). On error the files may be in
// either place; Discard cleans both.
func (s *Store) Publish(files []Staged) error { return s.content.publish(files) }

// Discard removes the files of a batch that was not committed.
func (s *Store) Discard(files []Staged) { s.content.remove(files) }

// InsertOp returns the op that stores it, whose content file is
// published.
func (s *Store) InsertOp(it ItemRecord) storage.Op { return s.t.Insert(it) }

// RemoveRecordOps returns the ops that soft-delete the record's live items
// (their personal fields cleared), and the ids of those items. The
// record's content directory goes afterwards (RemoveRecordFiles).
func (s *Store) RemoveRecordOps(recordID string, now time.Time) ([]storage.Op, []string) {
	now = now.UTC()
	var ops []storage.Op
	var ids []string
	for _, it := range s.t.Find(indexRecord, recordID) {
		if it.Live() {
			ops = append(ops, s.scrubOp(it.ID, now))
			ids = append(ids, it.ID)
		}
	}
	return ops, ids
}

// RemoveProviderOps returns the ops that soft-delete the record's live
// items with the given provider ids (the provider reported them deleted),
// and the removed items. Their content files go afterwards (RemoveFiles).
func (s *Store) RemoveProviderOps(recordID string, providerIDs []string, now time.Time) ([]storage.Op, []ItemRecord) {
	now = now.UTC()
	var ops []storage.Op
	var gone []ItemRecord
	for _, pid := range providerIDs {
		it, ok := s.t.Lookup(indexKey, itemKey(recordID, pid))
		if !ok || !it.Live() {
			continue
		}
		ops = append(ops, s.scrubOp(it.ID, now))
		gone = append(gone, it)
	}
	return ops, gone
}

func (s *Store) scrubOp(id string, now time.Time) storage.Op {
	return s.t.Update(id, func(it *ItemRecord) error {
		scrub(it, now)
		return nil
	})
}

// RemoveFiles removes the content files of items whose soft delete is
// committed. A file already gone is not an error; what is left is the
// start-up sweep's to remove.
func (s *Store) RemoveFiles(its []ItemRecord) error {
	var errs []error
	for i := range its {
		if err := os.Remove(s.content.path(&its[i])); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove item content: %w", err))
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

// ForRecord returns every item of the record, live or not.
func (s *Store) ForRecord(recordID string) []ItemRecord { return s.t.Find(indexRecord, recordID) }

// LiveCounts returns how many live items each record holds, reading
// every item once (none is opened).
func (s *Store) LiveCounts() map[string]int64 {
	n := map[string]int64{}
	s.t.Scan(func(it ItemRecord) bool {
		if it.Live() {
			n[it.RecordID]++
		}
		return true
	})
	return n
}

// Scan calls fn for every item, live or not, until fn returns false. fn
// must not call the store.
func (s *Store) Scan(fn func(ItemRecord) bool) { s.t.Scan(fn) }

// Sweep removes content files that no live item names (a crash between
// writing them and committing their metadata, or between a soft delete
// and the files' removal), and counts live items whose file is missing.
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
		have := make(map[string]bool, len(files))
		for _, name := range files {
			it, ok := s.t.Get(name)
			if !ok || !it.Live() || it.RecordID != recID {
				os.Remove(filepath.Join(s.content.recordDir(recID), name))
				removed++
				continue
			}
			have[name] = true
		}
		for _, it := range s.t.Find(indexRecord, recID) {
			if it.Live() && !have[it.ID] {
				missing++
			}
		}
	}
	return removed, missing, errors.Join(errs...)
}

// Len returns the number of items, live or not.
func (s *Store) Len() int { return s.t.Len() }

// Content returns the item's extracted text and raw original, from its
// sealed content file; ErrContentMissing if the file is gone.
func (s *Store) Content(it *ItemRecord) (text string, raw []byte, err error) {
	return s.content.read(it, true)
}

// Path is the item's content file.
func (s *Store) Path(it *ItemRecord) string { return s.content.path(it) }

// RecordDir is the directory of the record's content files.
func (s *Store) RecordDir(recordID string) string { return s.content.recordDir(recordID) }
