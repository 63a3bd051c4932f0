package items

// Count returns how many live items the user has, from the page order
// kept in memory (no item is read back), for the administrator's dashboard.
func (s *Store) Count(userID string) int {
	var n int
	s.view(func(d *dense, _ func(uint32) ([]byte, error)) {
		if u, ok := d.userIdx[userID]; ok {
			n = len(d.pages[u])
		}
	})
	return n
}
