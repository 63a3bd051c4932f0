package auth

// IDs returns the ids of the users that are not soft-deleted, oldest
// first, as GET /v1/admin/users lists them: the administrator's
// dashboard gives each one's load by id, and nothing else of them.
func (u *Users) IDs() []string {
	users := u.list()
	ids := make([]string, len(users))
	for i, usr := range users {
		ids[i] = usr.ID
	}
	return ids
}
