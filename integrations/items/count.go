package items

// Count returns how many live items the user has, from the ordered index
// pages read (no item is opened), for the administrator's dashboard.
func (s *Store) Count(userID string) int { return s.t.OrderedLen(indexPage, userID) }
