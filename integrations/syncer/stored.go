package syncer

import (
	"fmt"

	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/storage"
)

// What a task may ask of the items its record holds (Env.ProviderIDs), and
// the re-keys it reports (TaskResult.Rekeyed), which the batch commits
// before its removals.

// providerIDs is Env.ProviderIDs: it commits the finished tasks first, so
// that the list is what they left, then lists the record's items. It runs
// on the session's goroutine, inside RunTask.
func (r *run) providerIDs() ([]string, error) {
	if err := r.flush(false); err != nil {
		return nil, err
	}
	return r.s.items.ProviderIDs(r.rec.ID)
}

// stageRekeys adds a task's re-keys to the batch, but not those whose new
// id is an item the batch stores: that item is new, not renumbered.
func (r *run) stageRekeys(rekeys []integrations.Rekey) {
	for _, rk := range rekeys {
		if rk.From == "" || rk.To == "" || len(rk.From) > items.MaxProviderID || len(rk.To) > items.MaxProviderID {
			continue
		}
		r.mu.Lock()
		staged := r.b.seen[rk.To]
		r.mu.Unlock()
		if !staged {
			r.b.rekeys = append(r.b.rekeys, rk)
		}
	}
}

// rekeyOps returns the ops of the batch's re-keys.
func (r *run) rekeyOps() ([]storage.Op, error) {
	if len(r.b.rekeys) == 0 {
		return nil, nil
	}
	ops, n, err := r.s.items.RekeyOps(r.rec.ID, r.b.rekeys)
	if err != nil {
		r.log.Error("re-key items", "err", err)
		return nil, fmt.Errorf("re-key items: %w", err)
	}
	if n < len(r.b.rekeys) {
		r.log.Info("re-keys skipped", "skipped", len(r.b.rekeys)-n)
	}
	return ops, nil
}

// renamed are the batch's re-keyed items that took a new title (a file
// renamed), opened with their text, for the Indexer: a search for the
// new name finds them. Their text is read back from the store, not
// extracted again.
func (r *run) renamed() []IndexedItem {
	var out []IndexedItem
	for _, rk := range r.b.rekeys {
		if rk.Title == "" {
			continue
		}
		it, err := r.s.items.Find(r.rec.ID, rk.To)
		if err != nil {
			continue // skipped by RekeyOps, or gone since
		}
		m, err := r.s.items.OpenMeta(&it)
		if err != nil {
			r.log.Error("open item metadata for the index", "item_id", it.ID, "err", err)
			continue
		}
		text, err := r.s.items.Text(&it)
		if err != nil {
			r.log.Error("read item text for the index", "item_id", it.ID, "err", err)
			continue
		}
		out = append(out, IndexedItem{ID: it.ID, RecordID: it.RecordID, Integration: it.Integration,
			Title: m.Title, From: m.From, To: m.To, Date: it.Date, Text: text})
	}
	return out
}
