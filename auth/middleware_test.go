package auth

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		header       string
	}{
		{"POST without token", "POST", "/v1/auth/logout-all", nil, ""},
		{"POST wrong header", "POST", "/v1/auth/logout-all", nil, c.csrf + "x"},
		{"POST another session's token", "POST", "/v1/auth/logout-all", nil, other.csrf},
		{"POST wrong body token", "POST", "/v1/auth/logout-all", map[string]string{"csrfToken": "nope"}, ""},
		{"POST token of the wrong type", "POST", "/v1/auth/logout-all", `{"csrfToken": 12}`, ""},
		{"POST body not JSON", "POST", "/v1/auth/logout-all", `csrfToken=` + c.csrf, ""},
		{"PUT without token", "PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "another good one"}, ""},
		{"DELETE without token", "DELETE", "/v1/user/sessions/" + other.cookie, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(tc.method, tc.path, tc.body, tc.header)
			r.wantError(t, http.StatusForbidden, "invalid CSRF token")
			if r.cookie != nil {
				t.Errorf("403 touched the cookie: %+v", r.cookie)
			}
		})
	}
	if _, ok := e.sm.Get(other.cookie); !ok {
		t.Fatal("a refused request had an effect")
	}
	// Reads need no token.
	send("GET", "/v1/user/profile", nil, "").wantStatus(t, http.StatusOK)
	// The header works; so does the body, which the handler still gets.
	send("POST", "/v1/auth/logout-all", nil, c.csrf).wantStatus(t, http.StatusOK)
	other = e.login("ada@example.com", testPassword)
	send("DELETE", "/v1/auth/sessions/"+other.cookie, map[string]string{"csrfToken": c.csrf}, "").wantStatus(t, http.StatusOK)
	r := send("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "another good one", "csrfToken": c.csrf}, "")
	r.wantStatus(t, http.StatusOK)
	newToken, _ := r.body["csrfToken"].(string)
	if newToken == "" || newToken == c.csrf || r.cookie == nil {
		t.Fatalf("password change: csrfToken %q, cookie %+v; want a new session and token", newToken, r.cookie)
	}
	// The body is read for the token within the 1 MiB limit only.
	big := `{"x":"` + strings.Repeat("a", 1<<20) + `","csrfToken":"` + newToken + `"}`
	e.send(request{method: "POST", path: "/v1/auth/logout", body: big, cookie: r.cookie.Value}).wantError(t, http.StatusForbidden, "invalid CSRF token")
	// Logout with the token in the body.
	e.send(request{method: "POST", path: "/v1/auth/logout", body: map[string]string{"csrfToken": newToken}, cookie: r.cookie.Value}).wantStatus(t, http.StatusOK)
}

func TestCSRFOff(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	if c.csrf != "" {
		t.Fatal("csrfToken handed out with CSRF off")
	}
	// A client that sends csrfToken anyway is not refused.
	c.do("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "another good one", "csrfToken": "whatever"}).wantStatus(t, http.StatusOK)
	e.login("ada@example.com", "another good one").do("POST", "/v1/auth/logout", nil).wantStatus(t, http.StatusOK)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestCSRFReadsOnlyWhatItNeeds: the CSRF check reads a body only up to its
// top-level csrfToken, so a megabyte behind a token sent first is never
// read by the check; and the handler still gets the whole body, in order.
func TestCSRFReadsOnlyWhatItNeeds(t *testing.T) {
	const token = "tok-123"
	tail := strings.Repeat("a", 1<<20)
	tests := []struct {
		name, body string
		ok         bool
		maxRead    int
	}{
		{"token first", `{"csrfToken":"` + token + `","x":"` + tail + `"}`, true, 4096},
		{"token after a nested value", `{"a":{"b":[1,{"csrfToken":"no"}]},"csrfToken":"` + token + `","x":"` + tail + `"}`, true, 4096},
		{"nested token only", `{"a":{"csrfToken":"` + token + `"}}`, false, 1 << 21},
		{"no token", `{"x":"` + tail + `"}`, false, 1<<20 + 1},
		{"not an object", `["` + token + `"]`, false, 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := &countingReader{r: strings.NewReader(tt.body)}
			r := httptest.NewRequest("POST", "/", io.NopCloser(cr))
			body, err := checkCSRF(r, token)
			if (err == nil) != tt.ok {
				t.Fatalf("got %v, want ok=%v", err, tt.ok)
			}
			if cr.n > tt.maxRead {
				t.Errorf("the check read %d bytes, want at most %d", cr.n, tt.maxRead)
			}
			if !tt.ok {
				return
			}
			all, err := io.ReadAll(body)
			if err != nil || string(all) != tt.body {
				t.Errorf("the handler got %d bytes (%v), want the whole body of %d", len(all), err, len(tt.body))
			}
		})
	}
}
