package search

import "slices"

// Users returns the ids of the users the index holds documents or
// segments for, sorted: at start the caller compares them with its store
// and deletes the users it no longer has.
func (ix *Index) Users() []string {
	ix.mu.Lock()
	out := make([]string, 0, len(ix.users))
	for id := range ix.users {
		out = append(out, id)
	}
	ix.mu.Unlock()
	slices.Sort(out)
	return out
}
