package auth

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestProfile(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada Lovelace")
	r := c.do("GET", "/v1/user/profile", nil)
	r.wantStatus(t, http.StatusOK)
	res, _ := r.body["result"].(map[string]any)
	if r.body["operation"] != "user.readOne" || res["id"] != c.userID || res["email"] != "ada@example.com" ||
		res["name"] != "Ada Lovelace" || res["role"] != "admin" || res["createdAt"] != "2026-03-01T12:00:00Z" {
		t.Fatalf("body %s", r.raw)
	}
	for _, k := range []string{"requestId", "timestamp", "duration"} {
		if _, ok := r.body[k]; !ok {
			t.Errorf("envelope lacks %s", k)
		}
	}
	if strings.Contains(r.raw, "passwordHash") || strings.Contains(r.raw, "argon2") {
		t.Fatal("profile shows the hash")
	}
}

func TestChangePassword(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada Lovelace")
	other := e.login("ada@example.com", testPassword)
	body := func(cur, next string) map[string]string {
		return map[string]string{"currentPassword": cur, "newPassword": next}
	}
	for _, tc := range []struct {
		name    string
		body    any
		status  int
		message string
		details map[string]string
	}{
		{"not JSON", `{`, 400, "invalid request body", nil},
		{"unknown field", `{"currentPassword":"a","newPassword":"b","x":1}`, 400, "invalid request body", nil},
		{"empty", `{}`, 400, "validation failed", map[string]string{"currentPassword": "is required", "newPassword": "is required"}},
		{"too short", body(testPassword, "short"), 400, "validation failed", map[string]string{"newPassword": "must be at least 10 characters"}},
		{"the name", body(testPassword, "ADA LOVELACE"), 400, "validation failed", map[string]string{"newPassword": "must not be the name"}},
		{"the email", body(testPassword, "ada@example.com"), 400, "validation failed", map[string]string{"newPassword": "must not be the email address"}},
		{"common", body(testPassword, "qwertyuiop"), 400, "validation failed", map[string]string{"newPassword": "is too common"}},
		{"unchanged", body(testPassword, testPassword), 400, "validation failed", map[string]string{"newPassword": "must differ from the current password"}},
		{"wrong current", body("not my password", "a brand new one"), 400, "validation failed", map[string]string{"currentPassword": "is incorrect"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do("PUT", "/v1/user/password", tc.body)
			r.wantError(t, tc.status, tc.message)
			if r.body["operation"] != "user.updatePassword" {
				t.Errorf("operation %v", r.body["operation"])
			}
			got := r.details()
			for f, m := range tc.details {
				if got[f] != m {
					t.Errorf("detail %s: got %q, want %q", f, got[f], m)
				}
			}
			if len(got) != len(tc.details) {
				t.Errorf("details %v, want %v", got, tc.details)
			}
		})
	}
	e.clock.Add(time.Minute) // the rate limit allowed the one wrong guess
	r := c.do("PUT", "/v1/user/password", body(testPassword, "a brand new one"))
	r.wantStatus(t, http.StatusOK)
	if r.body["success"] != true || r.cookie == nil || r.cookie.Value == c.cookie || r.cookie.Value == other.cookie {
		t.Fatalf("body %s cookie %+v; want success and a new session", r.raw, r.cookie)
	}
	// Every old session is gone, the caller's included; the new one works.
	for _, id := range []string{c.cookie, other.cookie} {
		if _, ok := e.sm.Get(id); ok {
			t.Fatal("an old session survived the password change")
		}
	}
	if n := len(e.sm.List(c.userID)); n != 1 {
		t.Fatalf("%d sessions, want the new one only", n)
	}
	e.send(request{method: "GET", path: "/v1/user/profile", cookie: r.cookie.Value}).wantStatus(t, http.StatusOK)
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.1", body: map[string]string{"email": "ada@example.com", "password": testPassword}}).
		wantError(t, http.StatusUnauthorized, "invalid email or password")
	e.login("ada@example.com", "a brand new one")
}

// The session that a password change hands out works at once, whatever
// the fraction of a second the change happened at (sessions keep whole
// seconds).
func TestChangePasswordKeepsTheNewSession(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada Lovelace")
	e.clock.Add(time.Second + 700*time.Millisecond)
	r := c.do("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "a brand new one"})
	r.wantStatus(t, http.StatusOK)
	e.send(request{method: "GET", path: "/v1/user/profile", cookie: r.cookie.Value}).wantStatus(t, http.StatusOK)
	e.clock.Add(600 * time.Millisecond) // into the next second
	e.send(request{method: "GET", path: "/v1/user/profile", cookie: r.cookie.Value}).wantStatus(t, http.StatusOK)
	u, _ := e.users.Get(c.userID)
	if u.PasswordChangedAt == nil || u.PasswordChangedAt.Nanosecond() != 0 {
		t.Fatalf("PasswordChangedAt %v, want a whole second", u.PasswordChangedAt)
	}
}

// A stolen session cookie must not be a way to guess the password without
// the login rate limit.
func TestChangePasswordRateLimited(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	guess := map[string]string{"currentPassword": "guess guess", "newPassword": "a brand new one"}
	for range DefaultRateLimit {
		c.do("PUT", "/v1/user/password", guess).wantError(t, http.StatusBadRequest, "validation failed")
	}
	r := c.do("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "a brand new one"})
	r.wantError(t, http.StatusTooManyRequests, "too many password attempts")
	if r.header.Get("Retry-After") != "60" {
		t.Fatalf("Retry-After %q, want 60", r.header.Get("Retry-After"))
	}
	e.clock.Add(time.Minute)
	c.do("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "a brand new one"}).wantStatus(t, http.StatusOK)
}

// TestPasswordChangeEndsOlderSessionsEvenIfTheirDeleteWasLost: the new
// hash and the change time are one commit in the main store, the session
// deletes another in the session store. If the process dies between the
// two, sessions from before the change must still be refused.
func TestPasswordChangeEndsOlderSessionsEvenIfTheirDeleteWasLost(t *testing.T) {
	e := newEnv(t)
	old := e.register("ada@example.com", "Ada")
	e.clock.Add(time.Minute)
	u, _ := e.users.byEmail("ada@example.com")
	// The first half of a password change, as a crash would leave it.
	if err := e.mainStore.Commit(e.users.changePasswordOp(u.ID, u.PasswordHash, u.PasswordHash, e.clock.Now())); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Minute)
	old.do("GET", "/v1/user/profile", nil).wantError(t, http.StatusUnauthorized, "invalid session")
	if _, ok := e.sm.Get(old.cookie); ok {
		t.Error("the refused session is still stored")
	}
	// A session made after the change works.
	fresh := e.login("ada@example.com", testPassword)
	fresh.do("GET", "/v1/user/profile", nil).wantStatus(t, http.StatusOK)
}
