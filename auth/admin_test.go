package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/storage"
)

// integration is a stand-in for a record another package keeps per user.
type integration struct {
	ID     string `json:"id"`
	UserID string `json:"userId"`
}

func TestListUsers(t *testing.T) {
	e := newEnv(t)
	admin := e.register("admin@example.com", "Admin")
	e.clock.Add(time.Second)
	ada := e.register("ada@example.com", "Ada")
	e.clock.Add(time.Second)
	bob := e.register("bob@example.com", "Bob")
	admin.do("DELETE", "/v1/admin/users/"+bob.userID, nil).wantStatus(t, http.StatusOK)

	r := admin.do("GET", "/v1/admin/users", nil)
	r.wantStatus(t, http.StatusOK)
	if r.body["operation"] != "user.readMany" || r.body["count"] != 2.0 {
		t.Fatalf("body %s", r.raw)
	}
	items := r.body["results"].([]any)
	if items[0].(map[string]any)["id"] != admin.userID || items[1].(map[string]any)["email"] != "ada@example.com" {
		t.Fatalf("want the live users oldest first: %s", r.raw)
	}
	if strings.Contains(r.raw, "passwordHash") || strings.Contains(r.raw, "bob@") {
		t.Fatalf("lists a hash or a deleted user: %s", r.raw)
	}
	for query, want := range map[string]int{
		"?inIds=" + ada.userID:                      1,
		"?ninIds=" + ada.userID:                     1,
		"?inIds=" + bob.userID:                      0,
		"?inIds=" + ada.userID + "," + admin.userID: 2,
	} {
		r := admin.do("GET", "/v1/admin/users"+query, nil)
		if r.status != 200 || len(r.body["results"].([]any)) != want {
			t.Errorf("%s: got %s, want %d results", query, r.raw, want)
		}
	}
	admin.do("GET", "/v1/admin/users?ninIds="+manyIDs(101), nil).wantError(t, http.StatusBadRequest, "validation failed")
}

func TestDeleteUser(t *testing.T) {
	var integrations *storage.Table[integration]
	e := newEnv(t, func(s *setup) {
		s.beforeOpen = func(st *storage.Store) {
			integrations = storage.Register(st, "test_integrations", storage.TableConfig[integration]{
				ID:    func(i *integration) string { return i.ID },
				Index: map[string]func(*integration) string{"user": func(i *integration) string { return i.UserID }},
			})
		}
		s.cfg.OnUserDelete = func(userID string) []storage.Op {
			var ops []storage.Op
			for _, rec := range integrations.Find("user", userID) {
				ops = append(ops, integrations.Delete(rec.ID))
			}
			return ops
		}
	})
	admin := e.register("admin@example.com", "Admin")
	ada := e.register("ada@example.com", "Ada")
	e.login("ada@example.com", testPassword)
	if err := e.mainStore.Commit(integrations.Insert(integration{ID: "i1", UserID: ada.userID}),
		integrations.Insert(integration{ID: "i2", UserID: admin.userID})); err != nil {
		t.Fatal(err)
	}

	admin.do("DELETE", "/v1/admin/users/"+admin.userID, nil).wantError(t, http.StatusConflict, "cannot delete your own account")
	admin.do("DELETE", "/v1/admin/users/nobody", nil).wantError(t, http.StatusNotFound, "user not found")
	r := admin.do("DELETE", "/v1/admin/users/"+ada.userID, nil)
	r.wantStatus(t, http.StatusOK)
	if r.body["success"] != true || r.body["operation"] != "user.deleteOne" {
		t.Fatalf("body %s", r.raw)
	}
	if _, ok := e.users.Get(ada.userID); ok {
		t.Fatal("deleted user still live")
	}
	stored, ok := e.users.users.Get(ada.userID)
	if !ok || stored.DeletedAt == nil || !stored.DeletedAt.Equal(e.clock.Now()) {
		t.Fatalf("stored %+v, want the record kept with deletedAt set", stored)
	}
	if _, ok := integrations.Get("i1"); ok {
		t.Fatal("OnUserDelete's ops not committed")
	}
	if _, ok := integrations.Get("i2"); !ok {
		t.Fatal("another user's record deleted")
	}
	if n := len(e.sm.List(ada.userID)); n != 0 {
		t.Fatalf("%d sessions left, want 0", n)
	}
	ada.do("GET", "/v1/user/profile", nil).wantError(t, http.StatusUnauthorized, "invalid session")
	admin.do("DELETE", "/v1/admin/users/"+ada.userID, nil).wantError(t, http.StatusNotFound, "user not found")
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.3", body: map[string]string{"email": "ada@example.com", "password": testPassword}}).
		wantError(t, http.StatusUnauthorized, "invalid email or password")
}

// A failing OnUserDelete op fails the whole delete: the user stays live.
func TestDeleteUserAtomic(t *testing.T) {
	var e *testEnv
	e = newEnv(t, func(s *setup) {
		s.cfg.OnUserDelete = func(string) []storage.Op {
			return []storage.Op{e.users.meta.Update("no-such-record", func(*meta) error { return nil })}
		}
	})
	admin := e.register("admin@example.com", "Admin")
	ada := e.register("ada@example.com", "Ada")
	r := admin.do("DELETE", "/v1/admin/users/"+ada.userID, nil)
	r.wantError(t, http.StatusInternalServerError, "internal error")
	if _, ok := e.users.Get(ada.userID); !ok {
		t.Fatal("user deleted although the commit failed")
	}
	ada.do("GET", "/v1/user/profile", nil).wantStatus(t, http.StatusOK)
}

func TestSetRole(t *testing.T) {
	e := newEnv(t)
	e.register("admin@example.com", "Admin")
	ada := e.register("ada@example.com", "Ada")
	if err := e.users.SetRole("Ada@Example.com", RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if u, _ := e.users.Get(ada.userID); u.Role != RoleAdmin {
		t.Fatalf("role %q, want admin", u.Role)
	}
	if err := e.users.SetRole("ada@example.com", RoleUser); err != nil {
		t.Fatal(err)
	}
	if u, _ := e.users.Get(ada.userID); u.Role != RoleUser {
		t.Fatalf("role %q, want user", u.Role)
	}
	if err := e.users.SetRole("ada@example.com", "root"); !errors.Is(err, ErrInvalidRole) {
		t.Fatalf("got %v, want ErrInvalidRole", err)
	}
	if err := e.users.SetRole("nobody@example.com", RoleAdmin); !errors.Is(err, ErrUserNotFound) {
		t.Fatalf("got %v, want ErrUserNotFound", err)
	}
}

// Store failures are 503, not 500.
func TestStoreFailureIsUnavailable(t *testing.T) {
	err := httpError(fmt.Errorf("store user: %w", fmt.Errorf("%w: disk", storage.ErrFailed)))
	if e := httpx.AsError(err); e.Status != http.StatusServiceUnavailable {
		t.Fatalf("got %d, want 503", e.Status)
	}
	e := newEnv(t)
	e.mainStore.Close()
	r := e.send(request{method: "POST", path: "/v1/auth/register", body: regBody("ada@example.com", "Ada", testPassword)})
	r.wantError(t, http.StatusServiceUnavailable, "service unavailable")
}
