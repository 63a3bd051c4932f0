package items

// Brief returns userID's live item id as memory holds it: its ids, its
// record and integration, its key and date, without its sealed metadata
// (Meta is empty, Size and CreatedAt zero). It reads nothing from
// the log, as Get does: the search route asks it for each hit, whose
// title, sender and snippet come from the index (docs/search.md,
// "Answers from the index"). ErrNotFound when the user has no live item
// with that id.
func (s *Store) Brief(userID, id string) (ItemRecord, error) {
	var it ItemRecord
	found := false
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) {
		sl, ok := d.slot(id)
		if !ok || !d.ents.at(sl).live() || d.users[d.user(d.ents.at(sl))] != userID {
			return
		}
		it, found = d.record(sl), true
	})
	if !found {
		return ItemRecord{}, ErrNotFound
	}
	return it, nil
}
