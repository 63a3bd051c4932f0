package sync

// The record's sync state as a run sees it, and what its batch stages.

// syncState is the record's sync state as the tasks staged so far left
// it.
func (r *run) syncState() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// staged reports whether the batch stages an item with one of the
// provider ids.
func (r *run) staged(providerIDs []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, pid := range providerIDs {
		if r.b.seen[pid] {
			return true
		}
	}
	return false
}
