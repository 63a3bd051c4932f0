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
		// The re-sealed texts the ops name are durable first.
		if err := s.content.syncAll(); err != nil {
			return err
		}
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
	records := make(map[string]bool)
	for _, it := range items {
		content, err := s.rotateContent(&it)
		if err != nil {
			return n, fmt.Errorf("item %s: %w", it.ID, err)
		}
		metaStale := v.Stale(it.Meta)
		if !metaStale && content == "" {
			continue
		}
		sealed := it.Meta
		if metaStale {
			if sealed, _, err = v.Reseal(metaAAD(&it), it.Meta); err != nil {
				return n, fmt.Errorf("item %s: %w", it.ID, err)
			}
			n++
		}
		if content != "" {
			records[it.RecordID] = true
		}
		ops = append(ops, s.rotateOp(it, sealed, content))
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
	// The texts sealed under the previous key are dead now: drop them.
	for id := range records {
		if err := s.compactDue(id); err != nil {
			return n, err
		}
	}
	return n, nil
}

// rotateOp returns the op that gives an item its re-sealed metadata and,
// if content is not empty, the reference of its re-sealed text, unless
// either changed since they were read.
func (s *Store) rotateOp(it ItemRecord, meta []byte, content string) storage.Op {
	old, oldContent := it.Meta, it.Content
	return s.t.UpdateIfExists(it.ID, func(raw []byte) ([]byte, string, error) {
		var cur ItemRecord
		if err := json.Unmarshal(raw, &cur); err != nil {
			return nil, "", err
		}
		if !bytes.Equal(cur.Meta, old) || cur.Content != oldContent {
			return nil, "", nil
		}
		cur.Meta = meta
		if content != "" {
			cur.Content = content
		}
		b, err := json.Marshal(&cur)
		return b, cur.Key, err
	})
}

// rotateContent re-seals an item's text if a previous key sealed it. A
// packed text is appended re-sealed to the current pack, whose fsync the
// commit of the new reference waits for, and the old bytes count as dead;
// it returns the new reference. A text in a file of its own (stored
// before packs) is replaced the crash-safe way (storage.ReplaceFile). A
// missing text is left missing.
func (s *Store) rotateContent(it *ItemRecord) (string, error) {
	ref, perr := parseRef(it.Content)
	if perr != nil {
		return "", s.rotateFile(it)
	}
	b, err := s.content.readSealed(it)
	if errors.Is(err, ErrContentMissing) {
		return "", nil
	}
	if err != nil || !s.vault.Stale(b) {
		return "", err
	}
	sealed, _, err := s.vault.Reseal(contentAAD(it), b)
	if err != nil {
		return "", err
	}
	p := s.content.packsOf(it.RecordID)
	to, err := p.appendSealed(sealed, false)
	if err != nil {
		return "", err
	}
	p.addDead([]contentRef{ref})
	return to.String(), nil
}

// rotateFile re-seals an item's own content file (stored before packs) if
// a previous key sealed it, replacing it the crash-safe way
// (storage.ReplaceFile). A missing file is left missing.
func (s *Store) rotateFile(it *ItemRecord) error {
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
