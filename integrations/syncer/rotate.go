package syncer

import (
	"bytes"
	"fmt"

	"searchsvc/storage"
)

// rotateBatch is how many tasks share one log line in RotateKeys.
const rotateBatch = 500

// RotateKeys re-seals under the vault's current key the kept sync state
// and the task payloads sealed under a previous one, and returns how many
// it re-sealed. Like records.Records.RotateKeys and items.Store.RotateKeys
// it is for searchsvc rotate-key, with the scheduler stopped, so that
// CREDENTIALS_KEY_PREVIOUS can be dropped afterwards. Something that
// opens under no key stops it: fail closed.
func (s *Tasks) RotateKeys() (int, error) {
	n, err := s.rotateState()
	if err != nil {
		return n, err
	}
	v := s.vault
	var tasks []QueuedTask
	s.tasks.Scan(func(t QueuedTask) bool {
		if v.Stale(t.Payload) {
			tasks = append(tasks, t)
		}
		return true
	})
	var ops []storage.Op
	for _, t := range tasks {
		sealed, _, err := v.Reseal(t.aad(), t.Payload)
		if err != nil {
			return n, fmt.Errorf("task %s: %w", t.ID, err)
		}
		old := t.Payload
		ops = append(ops, s.tasks.Update(t.ID, func(cur *QueuedTask) error {
			if bytes.Equal(cur.Payload, old) {
				cur.Payload = sealed
			}
			return nil
		}))
		n++
		if len(ops) == rotateBatch {
			if err := s.st.Commit(ops...); err != nil {
				return n, err
			}
			ops = ops[:0]
		}
	}
	if len(ops) > 0 {
		if err := s.st.Commit(ops...); err != nil {
			return n, err
		}
	}
	return n, nil
}
