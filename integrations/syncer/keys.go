package syncer

import (
	"fmt"
	"maps"
	"slices"

	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
)

// CheckKeys reports whether the tasks' vault holds the keys of everything
// the store holds sealed: the records' credentials, the items' metadata,
// the tasks' payloads and the records' kept sync state. Start-up calls it
// (and reindex, and restore to warn), so that a CREDENTIALS_KEY that
// cannot open the stored data (a restore under another key, a mistyped
// key) stops the service with a message that says so, instead of a start
// that answers 500 on every item. The error wraps vault.ErrUnknownKey and
// names the variables and the key ids, never a key.
func CheckKeys(recs *records.Records, its *items.Store, s *Tasks) error {
	v := s.vault
	unknown := make(map[string]int) // by key id
	// n values sealed like sealed (the items' are counted by header, which
	// memory keeps: reading each back would cost a start a pread per item).
	check := func(sealed []byte, n int) {
		if len(sealed) == 0 || v.Holds(sealed) {
			return
		}
		id, ok := vault.SealedKeyID(sealed)
		if !ok {
			id = "unreadable"
		}
		unknown[id] += n
	}
	recs.All(func(r records.Record) bool {
		check(r.Credentials, 1)
		return true
	})
	its.MetaHeaders(check)
	s.tasks.Scan(func(t QueuedTask) bool {
		check(t.Payload, 1)
		return true
	})
	s.state.Scan(func(r stateRow) bool {
		check(r.Value, 1)
		return true
	})
	if len(unknown) == 0 {
		return nil
	}
	n, ids := 0, ""
	for _, id := range slices.Sorted(maps.Keys(unknown)) {
		n += unknown[id]
		if ids != "" {
			ids += ", "
		}
		ids += id
	}
	return fmt.Errorf("CREDENTIALS_KEY (key id %s) cannot open what the store holds: %d sealed values name key id %s, "+
		"which is neither CREDENTIALS_KEY nor in CREDENTIALS_KEY_PREVIOUS; set CREDENTIALS_KEY to the key they were sealed with "+
		"(or list it in CREDENTIALS_KEY_PREVIOUS and run searchsvc rotate-key): %w", v.KeyID(), n, ids, vault.ErrUnknownKey)
}
