package items

import (
	"encoding/json"
	"fmt"

	"searchsvc/integrations"
	"searchsvc/integrations/textguard"
	"searchsvc/storage"
)

// A provider may renumber what it holds without changing it: an IMAP
// mailbox whose UIDVALIDITY changed keeps the same messages under new
// UIDs. Re-keying gives the stored items their new provider ids instead
// of downloading them again. Listing a record's provider ids lets a sync
// compare the provider's listing with what is stored.

// ProviderIDs returns the provider ids of the record's live items, in no
// particular order. It opens each item's sealed metadata: a few
// microseconds an item.
func (s *Store) ProviderIDs(recordID string) ([]string, error) {
	var out []string
	for _, it := range s.ForRecord(recordID) {
		if !it.Live() {
			continue
		}
		m, err := s.OpenMeta(&it)
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		out = append(out, m.ProviderID)
	}
	return out, nil
}

// RekeyOps returns the ops that give the record's live items the new
// provider ids: their Key and the provider id in their sealed metadata
// change, and their title and path when the rekey gives them (a file
// renamed); their id, the rest of their metadata and their content file stay,
// so an index of the items needs no word of it. A rekey is skipped when
// From names no live item, when To is empty, too long, already another
// live item's or the target of an earlier rekey of the list. It returns
// the ops and how many items they re-key.
func (s *Store) RekeyOps(recordID string, rekeys []integrations.Rekey) ([]storage.Op, int, error) {
	var ops []storage.Op
	taken := make(map[string]bool, len(rekeys))
	for _, rk := range rekeys {
		if rk.To == "" || len(rk.To) > maxProviderID || rk.From == rk.To {
			continue
		}
		from, to := itemKey(recordID, rk.From), itemKey(recordID, rk.To)
		fromKey, _ := parseKey(from)
		toKey, _ := parseKey(to)
		found, err := s.readLoad(func(d *dense, load func(uint32) ([]byte, error)) []uint32 {
			sl, ok := d.findKey(fromKey, load)
			if _, dup := d.findKey(toKey, load); !ok || dup || !d.ents.at(sl).live() {
				return nil
			}
			return []uint32{sl}
		})
		if err != nil {
			return nil, 0, err
		}
		if len(found) == 0 || found[0].RecordID != recordID || taken[to] {
			continue
		}
		it := found[0]
		m, err := s.OpenMeta(&it)
		if err != nil {
			return nil, 0, fmt.Errorf("item %s: %w", it.ID, err)
		}
		m.ProviderID = rk.To
		if rk.Title != "" {
			m.Title = textguard.Truncate(rk.Title, maxTitle)
		}
		if rk.Path != "" {
			m.Path = textguard.Truncate(rk.Path, maxLink)
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, 0, err
		}
		sealed := s.vault.Seal(metaAAD(&it), b)
		taken[to] = true
		ops = append(ops, s.t.UpdateIfExists(it.ID, func(raw []byte) ([]byte, string, error) {
			var cur ItemRecord
			if err := json.Unmarshal(raw, &cur); err != nil {
				return nil, "", err
			}
			// The item changed since (deleted, re-keyed): leave it.
			if !cur.Live() || cur.Key != from {
				return nil, "", nil
			}
			cur.Key, cur.Meta = to, sealed
			b, err := json.Marshal(&cur)
			return b, to, err
		}))
	}
	return ops, len(ops), nil
}

// Find returns the record's live item with providerID; ErrNotFound if
// there is none.
func (s *Store) Find(recordID, providerID string) (ItemRecord, error) {
	k, _ := parseKey(itemKey(recordID, providerID))
	its, err := s.readLoad(func(d *dense, load func(uint32) ([]byte, error)) []uint32 {
		if sl, ok := d.findKey(k, load); ok && d.ents.at(sl).live() {
			return []uint32{sl}
		}
		return nil
	})
	if err != nil {
		return ItemRecord{}, err
	}
	if len(its) == 0 || its[0].RecordID != recordID {
		return ItemRecord{}, ErrNotFound
	}
	return its[0], nil
}
