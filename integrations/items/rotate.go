package items

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"searchsvc/storage"
)

// rotateBatch is how many items share one log line in RotateKeys.
const rotateBatch = 500

// RotateKeys re-seals under the vault's current key what a previous key
// sealed: item metadata and item content files, and returns how many
// metadata it re-sealed. It is for searchsvc rotate-key, with the
// scheduler stopped, so that CREDENTIALS_KEY_PREVIOUS can be dropped
// afterwards without losing the items. Something that opens under no key
// stops it: fail closed.
func (s *Store) RotateKeys() (int, error) {
	v := s.vault
	n := 0
	var ops []storage.Op
	commit := func() error {
		err := s.st.Commit(ops...)
		ops = ops[:0]
		return err
	}

	// Read back with errors, not Scan: a record that does not read back
	// stops the rotation too.
	items, err := s.read(func(d *dense) []uint32 {
		var slots []uint32
		for i := range d.ents.n {
			if d.ents.at(uint32(i)).live() {
				slots = append(slots, uint32(i))
			}
		}
		return slots
	})
	if err != nil {
		return 0, err
	}
	for _, it := range items {
		if err := s.rotateContent(&it); err != nil {
			return n, fmt.Errorf("item %s: %w", it.ID, err)
		}
		if !v.Stale(it.Meta) {
			continue
		}
		sealed, _, err := v.Reseal(metaAAD(&it), it.Meta)
		if err != nil {
			return n, fmt.Errorf("item %s: %w", it.ID, err)
		}
		old := it.Meta
		ops = append(ops, s.t.UpdateIfExists(it.ID, func(raw []byte) ([]byte, string, error) {
			var cur ItemRecord
			if err := json.Unmarshal(raw, &cur); err != nil {
				return nil, "", err
			}
			if !bytes.Equal(cur.Meta, old) {
				return nil, "", nil
			}
			cur.Meta = sealed
			b, err := json.Marshal(&cur)
			return b, cur.Key, err
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
// it, replacing it the crash-safe way (storage.ReplaceFile). A missing
// file is left missing.
func (s *Store) rotateContent(it *ItemRecord) error {
	path := s.content.path(it)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	b, err := readContentFile(f)
	f.Close()
	if err != nil || !s.vault.Stale(b) {
		return err
	}
	sealed, _, err := s.vault.Reseal(contentAAD(it), b)
	if err != nil {
		return err
	}
	return storage.ReplaceFile(path, ".rotate", sealed, 0o600)
}
