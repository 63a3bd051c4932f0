package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"searchsvc/httpx"
	"searchsvc/sessions"
)

// Require's request-authentication failures, in its order, each with its
// own message; every 401 clears the cookie and names the route's operation.
func TestRequireErrorRows(t *testing.T) {
	e := newEnv(t)
	e.register("ada@example.com", "Ada")
	fresh := func() *client { return e.login("ada@example.com", testPassword) }

	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T) string // the cookie to send
		message string
		deleted bool // the session is gone afterwards
	}{
		{"1 no cookie", func(*testing.T) string { return "" }, "no session cookie", false},
		{"2 malformed id", func(*testing.T) string { return "not-a-uuid" }, "invalid session", false},
		{"2 unknown id", func(*testing.T) string { return "00000000-0000-4000-8000-000000000000" }, "invalid session", false},
		{"3 past expiresAt", func(t *testing.T) string {
			c := fresh()
			for range 8 { // a request every 20 h keeps it from idling
				e.clock.Add(20 * time.Hour)
				c.do("GET", "/v1/user/profile", nil).wantStatus(t, http.StatusOK)
			}
			e.clock.Add(20 * time.Hour)
			return c.cookie // 180 h after creation, past the 168 h max age
		}, "session expired", true},
		{"4 idle beyond the timeout", func(*testing.T) string {
			c := fresh()
			e.clock.Add(24*time.Hour + time.Second)
			return c.cookie
		}, "session expired", true},
		{"5 user missing", func(t *testing.T) string {
			c := e.register("gone@example.com", "Gone")
			// Soft-deleted without its sessions, as when a delete races a
			// login.
			if err := e.mainStore.Commit(e.users.softDeleteOp(c.userID, e.clock.Now())); err != nil {
				t.Fatal(err)
			}
			return c.cookie
		}, "user not found", true},
		{"3 before 5: expired session of a deleted user", func(t *testing.T) string {
			c := e.register("gone2@example.com", "Gone")
			if err := e.mainStore.Commit(e.users.softDeleteOp(c.userID, e.clock.Now())); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(25 * time.Hour)
			return c.cookie
		}, "session expired", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cookie := tc.prepare(t)
			r := e.send(request{method: "GET", path: "/v1/user/profile", cookie: cookie})
			r.wantError(t, http.StatusUnauthorized, tc.message)
			if r.body["operation"] != "user.readOne" {
				t.Errorf("operation %v, want the route's user.readOne", r.body["operation"])
			}
			if !r.cleared() {
				t.Errorf("cookie not cleared: %+v", r.cookie)
			}
			if _, ok := e.sm.Get(cookie); tc.deleted && ok {
				t.Error("session not deleted")
			}
		})
	}
}

func TestRequireAttachesUserAndSession(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	var gotUser, gotSession string
	probe := e.h.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok1 := UserFrom(r.Context())
		s, ok2 := SessionFrom(r.Context())
		if ok1 && ok2 {
			gotUser, gotSession = u.ID, s.ID
		}
		if u.PasswordHash != "" {
			t.Error("the request's user carries its password hash")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	mux := http.NewServeMux()
	mux.Handle("GET /probe", probe)
	e.handler = wrap(mux, e)
	e.clock.Add(time.Minute)
	r := c.do("GET", "/probe", nil)
	if r.status != http.StatusNoContent || gotUser != c.userID || gotSession != c.cookie {
		t.Fatalf("status %d, user %q, session %q; want 204, %q and the cookie's", r.status, gotUser, gotSession, c.userID)
	}
	if r.cookie != nil {
		t.Fatal("cookie re-sent without a renewal")
	}
	// A handler of another package gets a generic operation on errors.
	r = e.send(request{method: "GET", path: "/probe"})
	r.wantError(t, http.StatusUnauthorized, "no session cookie")
	if r.body["operation"] != "session.validate" {
		t.Fatalf("operation %v, want session.validate", r.body["operation"])
	}
}

// Behind httpx.Handler the principal rides in the request's Info; a
// handler mounted without it (as in another package's own tests) must
// still see the user and session through a context value.
func TestRequireWithoutHTTPXHandler(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	var gotUser, gotSession string
	probe := e.h.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := httpx.InfoFromContext(r.Context()); ok {
			t.Error("the request carries an httpx.Info without httpx.Handler")
		}
		u, ok1 := UserFrom(r.Context())
		s, ok2 := SessionFrom(r.Context())
		if ok1 && ok2 {
			gotUser, gotSession = u.ID, s.ID
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	r := httptest.NewRequest("GET", "/probe", nil)
	r.AddCookie(&http.Cookie{Name: sessions.CookieName, Value: c.cookie})
	rec := httptest.NewRecorder()
	probe.ServeHTTP(rec, r)
	if rec.Code != http.StatusNoContent || gotUser != c.userID || gotSession != c.cookie {
		t.Fatalf("status %d, user %q, session %q; want 204, %q and the cookie's", rec.Code, gotUser, gotSession, c.userID)
	}
	if _, ok := UserFrom(context.Background()); ok {
		t.Fatal("UserFrom found a user in an empty context")
	}
}

func TestRequireSlidingRenewalResendsCookie(t *testing.T) {
	e := newEnv(t, func(s *setup) {
		s.sess.Sliding, s.sess.RenewThreshold = true, 24*time.Hour
	})
	c := e.register("ada@example.com", "Ada")
	renewed := false
	for range 8 {
		e.clock.Add(20 * time.Hour)
		r := c.do("GET", "/v1/user/profile", nil)
		r.wantStatus(t, http.StatusOK)
		if r.cookie != nil {
			if r.cookie.Value != c.cookie || r.cookie.MaxAge <= 0 {
				t.Fatalf("renewal cookie %+v", r.cookie)
			}
			renewed = true
		}
	}
	if !renewed {
		t.Fatal("no cookie re-sent though the session was renewed")
	}
}

func TestRequireAdmin(t *testing.T) {
	e := newEnv(t)
	admin := e.register("admin@example.com", "Admin")
	user := e.register("user@example.com", "User")
	r := user.do("GET", "/v1/admin/users", nil)
	r.wantError(t, http.StatusForbidden, "admin required")
	if r.body["operation"] != "user.readMany" || r.cookie != nil {
		t.Fatalf("operation %v, cookie %+v", r.body["operation"], r.cookie)
	}
	user.do("POST", "/v1/admin/users/"+admin.userID+"/force-logout", nil).wantError(t, http.StatusForbidden, "admin required")
	user.do("DELETE", "/v1/admin/users/"+admin.userID, nil).wantError(t, http.StatusForbidden, "admin required")
	e.send(request{method: "GET", path: "/v1/admin/users"}).wantError(t, http.StatusUnauthorized, "no session cookie")
	admin.do("GET", "/v1/admin/users", nil).wantStatus(t, http.StatusOK)
	// Granted from the command line, the role counts at the next request.
	if err := e.users.SetRole("USER@example.com", RoleAdmin); err != nil {
		t.Fatal(err)
	}
	user.do("GET", "/v1/admin/users", nil).wantStatus(t, http.StatusOK)
}

func TestCSRF(t *testing.T) {
	e := newEnv(t, func(s *setup) { s.cfg.CSRF = true })
	// Register and login are exempt and hand out the token.
	reg := e.send(request{method: "POST", path: "/v1/auth/register", body: regBody("ada@example.com", "Ada", testPassword)})
	reg.wantStatus(t, http.StatusCreated)
	c := e.clientFrom(reg)
	if len(c.csrf) < 20 {
		t.Fatalf("csrfToken %q", c.csrf)
	}
	other := e.login("ada@example.com", testPassword)
	if other.csrf == "" || other.csrf == c.csrf {
		t.Fatalf("login token %q, want a new one", other.csrf)
	}
	send := func(method, path string, body any, header string) *response {
		return e.send(request{method: method, path: path, body: body, cookie: c.cookie, csrfHeader: header})
	}
	// A page that reloads gets its own session's token back from the profile.
	if got := send("GET", "/v1/user/profile", nil, "").body["csrfToken"]; got != c.csrf {
		t.Errorf("profile csrfToken: got %v, want the session's %q", got, c.csrf)
	}
	password := map[string]string{"currentPassword": testPassword, "newPassword": "another good one"}
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		header       string
	}{
		{"POST without token", "POST", "/v1/auth/logout-all", nil, ""},
		{"POST wrong header", "POST", "/v1/auth/logout-all", nil, c.csrf + "x"},
		{"POST another session's token", "POST", "/v1/auth/logout-all", nil, other.csrf},
		// Only the header counts: the right token in the body does not.
		{"POST token only in the body", "POST", "/v1/auth/logout-all", map[string]string{"csrfToken": c.csrf}, ""},
		{"PUT token only in the body", "PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword,
			"newPassword": "another good one", "csrfToken": c.csrf}, ""},
		{"PUT without token", "PUT", "/v1/user/password", password, ""},
		{"DELETE without token", "DELETE", "/v1/user/sessions/" + other.cookie, nil, ""},
		{"DELETE token only in the body", "DELETE", "/v1/user/sessions/" + other.cookie, map[string]string{"csrfToken": c.csrf}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(tc.method, tc.path, tc.body, tc.header)
			r.wantError(t, http.StatusForbidden, "invalid CSRF token")
			if r.cookie != nil {
				t.Errorf("403 touched the cookie: %+v", r.cookie)
			}
		})
	}
	// A token inside a body that is not JSON never reaches the check.
	for _, ctype := range []string{"text/plain", "application/x-www-form-urlencoded"} {
		e.send(request{method: "POST", path: "/v1/auth/logout-all", body: `{"csrfToken":"` + c.csrf + `"}`,
			cookie: c.cookie, header: map[string]string{"Content-Type": ctype}}).
			wantError(t, http.StatusUnsupportedMediaType, "invalid request body")
	}
	if _, ok := e.sm.Get(other.cookie); !ok {
		t.Fatal("a refused request had an effect")
	}
	if _, ok := e.sm.Get(c.cookie); !ok {
		t.Fatal("a refused request signed the caller out")
	}
	// Reads need no token.
	send("GET", "/v1/user/profile", nil, "").wantStatus(t, http.StatusOK)
	// The header works, with a body or without; a csrfToken in the body
	// is an unknown field like any other.
	send("POST", "/v1/auth/logout-all", nil, c.csrf).wantStatus(t, http.StatusOK)
	other = e.login("ada@example.com", testPassword)
	send("DELETE", "/v1/auth/sessions/"+other.cookie, nil, c.csrf).wantStatus(t, http.StatusOK)
	if _, ok := e.sm.Get(other.cookie); ok {
		t.Fatal("DELETE with the header: the session is still there")
	}
	send("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "another good one",
		"csrfToken": c.csrf}, c.csrf).wantError(t, http.StatusBadRequest, "invalid request body")
	r := send("PUT", "/v1/user/password", password, c.csrf)
	r.wantStatus(t, http.StatusOK)
	newToken, _ := r.body["csrfToken"].(string)
	if newToken == "" || newToken == c.csrf || r.cookie == nil {
		t.Fatalf("password change: csrfToken %q, cookie %+v; want a new session and token", newToken, r.cookie)
	}
	e.send(request{method: "POST", path: "/v1/auth/logout", cookie: r.cookie.Value, csrfHeader: newToken}).wantStatus(t, http.StatusOK)
}

func TestCSRFOff(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	if c.csrf != "" {
		t.Fatal("csrfToken handed out with CSRF off")
	}
	// csrfToken is no field of any body, with tokens on or off.
	c.do("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "another good one",
		"csrfToken": "whatever"}).wantError(t, http.StatusBadRequest, "invalid request body")
	c.do("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "another good one"}).wantStatus(t, http.StatusOK)
	e.login("ada@example.com", "another good one").do("POST", "/v1/auth/logout", nil).wantStatus(t, http.StatusOK)
}

// TestUnsafeRequestRule: with the default settings (no CSRF tokens) the
// body-less routes that change state meet the same rule as the others: a
// body that is not JSON, or a Content-Type other than application/json,
// is 415 before the session is looked at, and an Origin that is not the
// service's is 403 whatever Sec-Fetch-Site says. Nothing is signed out.
func TestUnsafeRequestRule(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	for _, tc := range []struct {
		name    string
		path    string
		body    any
		header  map[string]string
		status  int
		message string
	}{
		{"text/plain body", "/v1/auth/logout", "x", map[string]string{"Content-Type": "text/plain"}, 415, "invalid request body"},
		{"form body", "/v1/auth/logout-all", "a=b", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "invalid request body"},
		{"body without a Content-Type", "/v1/auth/logout", "{}", map[string]string{"Content-Type": ""}, 415, "invalid request body"},
		{"empty text/plain", "/v1/auth/logout-all", nil, map[string]string{"Content-Type": "text/plain"}, 415, "invalid request body"},
		{"same-origin says Sec-Fetch-Site, Origin says another", "/v1/auth/logout", nil,
			map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://evil.example"}, 403, "cross-origin request refused"},
		{"Origin null", "/v1/auth/logout-all", nil, map[string]string{"Origin": "null"}, 403, "cross-origin request refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.send(request{method: "POST", path: tc.path, body: tc.body, cookie: c.cookie, header: tc.header})
			r.wantError(t, tc.status, tc.message)
			if r.cookie != nil {
				t.Errorf("refusal touched the cookie: %+v", r.cookie)
			}
			if _, ok := e.sm.Get(c.cookie); !ok {
				t.Fatal("a refused request signed the caller out")
			}
		})
	}
	// No body and no Content-Type, or a JSON one, from the service's own
	// origin: accepted.
	e.send(request{method: "POST", path: "/v1/auth/logout", cookie: c.cookie,
		header: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://example.com"}}).wantStatus(t, http.StatusOK)
	if _, ok := e.sm.Get(c.cookie); ok {
		t.Fatal("logout: the session is still there")
	}
}
