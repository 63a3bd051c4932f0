package auth

import (
	"errors"
	"fmt"
	"net/http"

	"searchsvc/httpx"
	"searchsvc/storage"
)

// ListUsers serves GET /v1/admin/users, behind RequireAdmin: the users
// that are not soft-deleted, oldest first, filtered by inIds and ninIds.
func (h *Handlers) ListUsers() http.Handler {
	return endpoint("user.readMany", h.listUsers)
}

func (h *Handlers) listUsers(w http.ResponseWriter, r *http.Request) error {
	f, err := httpx.ParseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	out := []userView{}
	for _, u := range h.users.list() {
		if f.Match(u.ID) {
			out = append(out, viewUser(u))
		}
	}
	httpx.Many(w, r, "user.readMany", out)
	return nil
}

// DeleteUser serves DELETE /v1/admin/users/{userId}, behind RequireAdmin.
// The user is soft-deleted (deletedAt set, which frees the email), in one
// Commit with Config.OnUserDelete's ops, then all their sessions are
// deleted. An unknown or already deleted user is 404 "user not found".
// An admin cannot delete themselves (409): since only an admin can delete
// a user, this keeps at least one admin.
func (h *Handlers) DeleteUser() http.Handler {
	return endpoint("user.deleteOne", h.deleteUser)
}

func (h *Handlers) deleteUser(w http.ResponseWriter, r *http.Request) error {
	p, err := principalOf(r)
	if err != nil {
		return err
	}
	id := r.PathValue("userId")
	if id == p.user.ID {
		return ErrCannotDeleteSelf
	}
	if _, ok := h.users.Get(id); !ok {
		return ErrUserNotFound
	}
	ops := []storage.Op{h.users.softDeleteOp(id, h.now())}
	if h.onUserDelete != nil {
		ops = append(ops, h.onUserDelete(id)...)
	}
	if err := h.store.Commit(ops...); err != nil {
		if errors.Is(err, ErrUserNotFound) { // deleted meanwhile
			return ErrUserNotFound
		}
		return fmt.Errorf("soft-delete user: %w", err)
	}
	if h.onDeleted != nil {
		h.onDeleted(id)
	}
	n, err := h.sessions.DeleteUser(id, "")
	if err != nil {
		// The user is deleted; their sessions die at their next request,
		// which finds no live user.
		return fmt.Errorf("delete sessions of deleted user: %w", err)
	}
	h.log.Info("user deleted", "user_id", id, "admin_id", p.user.ID, "sessions_deleted", n)
	success(w, r, "user.deleteOne")
	return nil
}
