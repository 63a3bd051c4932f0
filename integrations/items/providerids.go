package items

// ProviderIDs returns the provider ids of the record's live items, opening
// their sealed metadata. A provider whose ids carry a version (a file's
// content hash, a message's edit time) reads them to find the stored
// version of an item it lists again, and what it stored but no longer
// lists. It costs one open per item: callers read it once per sync.
func (s *Store) ProviderIDs(recordID string) ([]string, error) {
	var out []string
	for _, it := range s.t.Find(indexRecord, recordID) {
		if !it.Live() {
			continue
		}
		m, err := s.OpenMeta(&it)
		if err != nil {
			return nil, err
		}
		out = append(out, m.ProviderID)
	}
	return out, nil
}
