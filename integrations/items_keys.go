package integrations

import (
	"errors"
	"fmt"
	"io"
	"os"

	"searchsvc/storage"
)

// rotateBatch is how many items or tasks share one log line in RotateKeys.
const rotateBatch = 500

// RotateKeys re-seals under the vault's current key what the syncer sealed
// under a previous one: item metadata, item content files and task
// payloads, and returns how many it re-sealed. Like Records.RotateKeys it
// is for searchsvc rotate-key, with the scheduler stopped, so that
// CREDENTIALS_KEY_PREVIOUS can be dropped afterwards without losing the
// items. Something that opens under no key stops it: fail closed.
func (s *Syncer) RotateKeys() (int, error) {
	v := s.records.Vault()
	n := 0
	var ops []storage.Op
	commit := func() error {
		err := s.st.Commit(ops...)
		ops = ops[:0]
		return err
	}

	var items []ItemRecord
	s.items.Scan(func(it ItemRecord) bool {
		if it.Live() {
			items = append(items, it)
		}
		return true
	})
	for _, it := range items {
		if err := s.rotateContent(&it); err != nil {
			return n, fmt.Errorf("item %s: %w", it.ID, err)
		}
		if it.Meta == "" || !v.NeedsRotation(it.Meta) {
			continue
		}
		sealed, err := v.Rotate(metaAAD(&it), it.Meta)
		if err != nil {
			return n, fmt.Errorf("item %s: %w", it.ID, err)
		}
		old := it.Meta
		ops = append(ops, s.items.Update(it.ID, func(cur *ItemRecord) error {
			if cur.Meta == old {
				cur.Meta = sealed
			}
			return nil
		}))
		n++
		if len(ops) == rotateBatch {
			if err := commit(); err != nil {
				return n, err
			}
		}
	}

	var tasks []QueuedTask
	s.tasks.Scan(func(t QueuedTask) bool {
		if t.Payload != "" && v.NeedsRotation(t.Payload) {
			tasks = append(tasks, t)
		}
		return true
	})
	for _, t := range tasks {
		sealed, err := v.Rotate(t.aad(), t.Payload)
		if err != nil {
			return n, fmt.Errorf("task %s: %w", t.ID, err)
		}
		old := t.Payload
		ops = append(ops, s.tasks.Update(t.ID, func(cur *QueuedTask) error {
			if cur.Payload == old {
				cur.Payload = sealed
			}
			return nil
		}))
		n++
		if len(ops) == rotateBatch {
			if err := commit(); err != nil {
				return n, err
			}
		}
	}
	if len(ops) > 0 {
		if err := commit(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// rotateContent re-seals an item's content file if a previous key sealed
// it, replacing it the crash-safe way: a fsynced temporary file renamed
// over the old one, then the directory fsynced. A missing file is left
// missing.
func (s *Syncer) rotateContent(it *ItemRecord) error {
	path := s.content.path(it)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxContentFile+1))
	f.Close()
	if err != nil {
		return err
	}
	v := s.records.Vault()
	if !v.NeedsRotation(string(b)) {
		return nil
	}
	sealed, err := v.Rotate(contentAAD(it), string(b))
	if err != nil {
		return err
	}
	tmp := path + ".rotate"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(out, sealed); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := syncClose(out); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(s.content.recordDir(it.RecordID))
}
