package auth

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestListSessions(t *testing.T) {
	e := newEnv(t, func(s *setup) { s.cfg.CSRF = true })
	c := e.register("ada@example.com", "Ada")
	e.clock.Add(time.Minute)
	other := e.login("ada@example.com", testPassword)
	stranger := e.register("bob@example.com", "Bob")
	for _, path := range []string{"/v1/auth/sessions", "/v1/user/sessions"} {
		r := c.do("GET", path, nil)
		r.wantStatus(t, http.StatusOK)
		if r.body["operation"] != "session.readMany" || r.body["count"] != 2.0 {
			t.Fatalf("%s: %s", path, r.raw)
		}
		if strings.Contains(r.raw, "csrfToken") || strings.Contains(r.raw, c.csrf) || strings.Contains(r.raw, stranger.cookie) {
			t.Fatalf("%s lists a CSRF token or another user's session: %s", path, r.raw)
		}
		items := r.body["results"].([]any)
		first, second := items[0].(map[string]any), items[1].(map[string]any)
		if first["sessionId"] != other.cookie || first["current"] != false || second["sessionId"] != c.cookie || second["current"] != true {
			t.Fatalf("%s: want newest first with current on the caller's: %s", path, r.raw)
		}
		for _, k := range []string{"sessionId", "userId", "createdAt", "lastAccessedAt", "expiresAt", "ipAddress", "userAgent", "metadata", "current"} {
			if _, ok := second[k]; !ok {
				t.Errorf("%s: item lacks %s", path, k)
			}
		}
		if second["userId"] != c.userID || second["metadata"].(map[string]any)["loginMethod"] != "password" {
			t.Errorf("%s: item %v", path, second)
		}
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"?inIds=" + c.cookie, []string{c.cookie}},
		{"?ninIds=" + c.cookie, []string{other.cookie}},
		{"?inIds=" + c.cookie + "," + other.cookie + "&ninIds=" + other.cookie, []string{c.cookie}},
		{"?inIds=" + stranger.cookie, nil},
	} {
		r := c.do("GET", "/v1/user/sessions"+tc.query, nil)
		r.wantStatus(t, http.StatusOK)
		items := r.body["results"].([]any)
		if len(items) != len(tc.want) {
			t.Fatalf("%s: got %d items, want %d", tc.query, len(items), len(tc.want))
		}
		for i, id := range tc.want {
			if items[i].(map[string]any)["sessionId"] != id {
				t.Errorf("%s: item %d is %v", tc.query, i, items[i])
			}
		}
	}
	r := c.do("GET", "/v1/user/sessions?inIds="+manyIDs(101), nil)
	r.wantError(t, http.StatusBadRequest, "validation failed")
}

func TestDeleteSession(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	bob := e.register("bob@example.com", "Bob")
	for _, base := range []string{"/v1/auth/sessions/", "/v1/user/sessions/"} {
		t.Run(base, func(t *testing.T) {
			other := e.login("ada@example.com", testPassword)
			c.do("DELETE", base+"not-a-uuid", nil).wantError(t, http.StatusNotFound, "session not found")
			c.do("DELETE", base+"00000000-0000-4000-8000-000000000000", nil).wantError(t, http.StatusNotFound, "session not found")
			r := c.do("DELETE", base+bob.cookie, nil)
			r.wantError(t, http.StatusForbidden, "not your session")
			if _, ok := e.sm.Get(bob.cookie); !ok {
				t.Fatal("another user's session was deleted")
			}
			r = c.do("DELETE", base+other.cookie, nil)
			r.wantStatus(t, http.StatusOK)
			if r.body["success"] != true || r.body["operation"] != "session.deleteOne" || r.cookie != nil {
				t.Fatalf("body %s, cookie %+v", r.raw, r.cookie)
			}
			if _, ok := e.sm.Get(other.cookie); ok {
				t.Fatal("session not deleted")
			}
			c.do("GET", "/v1/user/profile", nil).wantStatus(t, http.StatusOK)
			c.do("DELETE", base+other.cookie, nil).wantError(t, http.StatusNotFound, "session not found")
		})
	}
	// Deleting one's current session ends it and clears the cookie.
	r := c.do("DELETE", "/v1/user/sessions/"+c.cookie, nil)
	r.wantStatus(t, http.StatusOK)
	if !r.cleared() {
		t.Fatalf("cookie %+v, want cleared", r.cookie)
	}
	c.do("GET", "/v1/user/profile", nil).wantError(t, http.StatusUnauthorized, "invalid session")
}

func TestLogoutAll(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	o1 := e.login("ada@example.com", testPassword)
	o2 := e.login("ada@example.com", testPassword)
	bob := e.register("bob@example.com", "Bob")
	r := c.do("POST", "/v1/auth/logout-all", nil)
	r.wantStatus(t, http.StatusOK)
	if r.body["success"] != true || r.body["deleted"] != 2.0 || r.body["operation"] != "auth.logoutAll" {
		t.Fatalf("body %s", r.raw)
	}
	for _, id := range []string{o1.cookie, o2.cookie} {
		if _, ok := e.sm.Get(id); ok {
			t.Fatal("another session survived")
		}
	}
	c.do("GET", "/v1/user/profile", nil).wantStatus(t, http.StatusOK)
	bob.do("GET", "/v1/user/profile", nil).wantStatus(t, http.StatusOK)
	if r := c.do("POST", "/v1/auth/logout-all", nil); r.body["deleted"] != 0.0 {
		t.Fatalf("second logout-all: %s", r.raw)
	}
}

func TestForceLogout(t *testing.T) {
	e := newEnv(t)
	admin := e.register("admin@example.com", "Admin")
	ada := e.register("ada@example.com", "Ada")
	e.login("ada@example.com", testPassword)
	r := admin.do("POST", "/v1/admin/users/"+ada.userID+"/force-logout", nil)
	r.wantStatus(t, http.StatusOK)
	if r.body["success"] != true || r.body["deleted"] != 2.0 || r.body["operation"] != "auth.forceLogout" || r.cookie != nil {
		t.Fatalf("body %s cookie %+v", r.raw, r.cookie)
	}
	ada.do("GET", "/v1/user/profile", nil).wantError(t, http.StatusUnauthorized, "invalid session")
	admin.do("POST", "/v1/admin/users/nobody/force-logout", nil).wantError(t, http.StatusNotFound, "user not found")
	admin.do("DELETE", "/v1/admin/users/"+ada.userID, nil).wantStatus(t, http.StatusOK)
	admin.do("POST", "/v1/admin/users/"+ada.userID+"/force-logout", nil).wantError(t, http.StatusNotFound, "user not found")
	// Forcing out oneself ends the current session too.
	r = admin.do("POST", "/v1/admin/users/"+admin.userID+"/force-logout", nil)
	r.wantStatus(t, http.StatusOK)
	if !r.cleared() {
		t.Fatalf("cookie %+v, want cleared", r.cookie)
	}
}

// TestSessionListTellsOfEndedSessions: signing in beyond the per-user
// limit ends the oldest session, and the session list says so.
func TestSessionListTellsOfEndedSessions(t *testing.T) {
	e := newEnv(t, func(s *setup) { s.sess.MaxPerUser = 2 })
	first := e.register("ada@example.com", "Ada")
	e.clock.Add(time.Second)
	e.login("ada@example.com", testPassword)
	e.clock.Add(time.Second)
	c := e.login("ada@example.com", testPassword)
	first.do("GET", "/v1/user/sessions", nil).wantError(t, http.StatusUnauthorized, "invalid session")
	r := c.do("GET", "/v1/user/sessions", nil)
	r.wantStatus(t, http.StatusOK)
	if got := r.field("count"); got != float64(2) {
		t.Errorf("count: got %v, want 2", got)
	}
	want := map[string]any{"count": float64(1), "limit": float64(2), "lastAt": "2026-03-01T12:00:02Z",
		"message": "1 older sessions were ended to keep at most 2; the last at 2026-03-01T12:00:02Z"}
	got, _ := r.body["endedByLimit"].(map[string]any)
	if len(got) != len(want) {
		t.Fatalf("endedByLimit: got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("endedByLimit.%s: got %v, want %v", k, got[k], v)
		}
	}
}
