package auth

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func regBody(email, name, password string) map[string]string {
	return map[string]string{"email": email, "name": name, "password": password}
}

func TestRegister(t *testing.T) {
	e := newEnv(t)
	r := e.send(request{method: "POST", path: "/v1/auth/register", userAgent: "test-agent/1",
		body: regBody("  Ada@Example.COM ", " Ada Lovelace ", testPassword)})
	r.wantStatus(t, http.StatusCreated)
	if op := r.body["operation"]; op != "auth.register" {
		t.Errorf("operation %v, want auth.register", op)
	}
	for _, key := range []string{"user", "result"} {
		u, _ := r.body[key].(map[string]any)
		if u["email"] != "ada@example.com" || u["name"] != "Ada Lovelace" || u["role"] != "admin" || u["id"] == "" || u["createdAt"] == nil {
			t.Errorf("%s = %v, want the new admin with a lower-cased email", key, u)
		}
		if _, ok := u["passwordHash"]; ok {
			t.Errorf("%s carries the password hash", key)
		}
	}
	if _, ok := r.body["csrfToken"]; ok {
		t.Error("csrfToken sent with CSRF off")
	}
	if strings.Contains(r.raw, "argon2") || strings.Contains(r.raw, r.cookie.Value) {
		t.Error("response carries the hash or the session id")
	}
	c := r.cookie
	if c.Name != "svc_session" || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %+v, want HttpOnly, Secure, SameSite=Strict, Path=/", c)
	}
	s, ok := e.sm.Get(c.Value)
	if !ok || s.UserID != r.field("user", "id") || s.Metadata.LoginMethod != "password" || s.UserAgent != "test-agent/1" || s.IPAddress != "192.0.2.1" {
		t.Errorf("session %+v, %v; want one for the new user, by password, from 192.0.2.1", s, ok)
	}
	u, ok := e.users.Get(r.field("user", "id").(string))
	if !ok || !strings.HasPrefix(u.PasswordHash, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Errorf("stored user %v (hash %q), want an Argon2id hash", ok, u.PasswordHash)
	}
	// The second user is a plain user.
	if r := e.send(request{method: "POST", path: "/v1/auth/register", body: regBody("bob@example.com", "Bob", testPassword)}); r.field("user", "role") != "user" {
		t.Errorf("second user role %v, want user", r.field("user", "role"))
	}
}

func TestRegisterErrors(t *testing.T) {
	e := newEnv(t)
	e.register("taken@example.com", "Taken")
	for _, tc := range []struct {
		name    string
		body    any
		status  int
		message string
		details map[string]string
	}{
		{"malformed", `{"email":`, 400, "invalid request body", nil},
		{"unknown field", `{"email":"a@b.co","name":"A","password":"correct horse battery","role":"admin"}`, 400, "invalid request body", nil},
		{"not an object", `[]`, 400, "invalid request body", nil},
		{"too large", `{"name":"` + strings.Repeat("a", 1<<20) + `"}`, 413, "invalid request body", nil},
		{"empty", `{}`, 400, "validation failed", map[string]string{"email": "is required", "name": "is required", "password": "is required"}},
		{"all bad", regBody("nope", strings.Repeat("n", 201), "short"), 400, "validation failed",
			map[string]string{"email": "must be a valid email address", "name": "must be at most 200 characters", "password": "must be at least 10 characters"}},
		{"password is email", regBody("ada@example.com", "Ada", "ADA@example.com"), 400, "validation failed", map[string]string{"password": "must not be the email address"}},
		{"password is name", regBody("ada@example.com", "Ada Lovelace", "ada lovelace"), 400, "validation failed", map[string]string{"password": "must not be the name"}},
		{"common password", regBody("ada@example.com", "Ada", "Password123"), 400, "validation failed", map[string]string{"password": "is too common"}},
		{"duplicate email", regBody("TAKEN@example.com", "Other", testPassword), 409, "email already registered", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.send(request{method: "POST", path: "/v1/auth/register", body: tc.body})
			r.wantError(t, tc.status, tc.message)
			if tc.details != nil {
				got := r.details()
				if len(got) != len(tc.details) {
					t.Fatalf("details %v, want %v", got, tc.details)
				}
				for f, m := range tc.details {
					if got[f] != m {
						t.Errorf("detail %s: got %q, want %q", f, got[f], m)
					}
				}
			}
			if r.cookie != nil {
				t.Error("a failed registration set a cookie")
			}
		})
	}
	if n := e.users.users.Len(); n != 1 {
		t.Fatalf("%d users stored, want 1", n)
	}
}

func TestRegisterConcurrentDuplicate(t *testing.T) {
	e := newEnv(t)
	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// Each from its own address: the hash queue holds one waiter
			// per client.
			r := e.send(request{method: "POST", path: "/v1/auth/register", ip: fmt.Sprintf("192.0.2.%d", i+1),
				body: regBody("race@example.com", "Racer", testPassword)})
			if r.status == http.StatusConflict && r.errMessage() != "email already registered" {
				t.Errorf("409 with %q", r.errMessage())
			}
			statuses <- r.status
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[201] != 1 || count[409] != n-1 {
		t.Fatalf("statuses %v, want one 201 and %d 409", count, n-1)
	}
}

// With the early lookup out of the way (both requests past it), the
// store's unique index alone decides.
func TestCreateUserUniqueInWriter(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			_, err := e.h.createUser("same@example.com", "Same", "$argon2id$x", false)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	var ok, taken int
	for err := range errs {
		switch err {
		case nil:
			ok++
		case ErrEmailTaken:
			taken++
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if ok != 1 || taken != 1 {
		t.Fatalf("got %d created and %d taken, want 1 and 1", ok, taken)
	}
}

func TestFirstUserAdminUnderConcurrency(t *testing.T) {
	for _, open := range []bool{true, false} {
		t.Run(map[bool]string{true: "open", false: "closed"}[open], func(t *testing.T) {
			e := newEnv(t, func(s *setup) { s.cfg.Registration = open })
			const n = 12
			var wg sync.WaitGroup
			var mu sync.Mutex
			roles := map[string]int{}
			for i := range n {
				wg.Go(func() {
					// Each from its own address: the hash queue holds one
					// waiter per client.
					r := e.send(request{method: "POST", path: "/v1/auth/register", ip: fmt.Sprintf("192.0.2.%d", i+1),
						body: regBody("user"+string(rune('a'+i))+"@example.com", "User", testPassword)})
					mu.Lock()
					defer mu.Unlock()
					switch r.status {
					case 201:
						roles[r.field("user", "role").(string)]++
					case 403:
						if r.errMessage() != "registration closed" {
							t.Errorf("403 %q", r.errMessage())
						}
						roles["refused"]++
					default:
						t.Errorf("status %d %s", r.status, r.raw)
					}
				})
			}
			wg.Wait()
			want := map[string]int{"admin": 1, "user": n - 1}
			if !open {
				want = map[string]int{"admin": 1, "refused": n - 1}
			}
			for k, v := range want {
				if roles[k] != v {
					t.Fatalf("got %v, want %v", roles, want)
				}
			}
		})
	}
}

func TestRegistrationClosed(t *testing.T) {
	e := newEnv(t, func(s *setup) { s.cfg.Registration = false })
	admin := e.register("first@example.com", "First")
	r := e.send(request{method: "POST", path: "/v1/auth/register", body: regBody("second@example.com", "Second", testPassword)})
	r.wantError(t, http.StatusForbidden, "registration closed")
	// Still closed after the first user is deleted: "first user ever".
	_ = admin
	first, _ := e.users.byEmail("first@example.com")
	if err := e.mainStore.Commit(e.users.softDeleteOp(first.ID, e.clock.Now())); err != nil {
		t.Fatal(err)
	}
	r = e.send(request{method: "POST", path: "/v1/auth/register", body: regBody("third@example.com", "Third", testPassword)})
	r.wantError(t, http.StatusForbidden, "registration closed")
}

func TestSoftDeletedEmailReRegistrable(t *testing.T) {
	e := newEnv(t)
	admin := e.register("admin@example.com", "Admin")
	old := e.register("reuse@example.com", "Old")
	admin.do("DELETE", "/v1/admin/users/"+old.userID, nil).wantStatus(t, http.StatusOK)
	r := e.send(request{method: "POST", path: "/v1/auth/register", body: regBody("Reuse@example.com", "New", testPassword)})
	r.wantStatus(t, http.StatusCreated)
	if id := r.field("user", "id"); id == old.userID {
		t.Fatal("re-registration got the deleted user's id")
	}
	// The new account logs in; the old one stays deleted.
	e.login("reuse@example.com", testPassword)
	if _, ok := e.users.Get(old.userID); ok {
		t.Fatal("deleted user is live again")
	}
}

// Registering from a browser that is signed in ends the session it
// brought: its cookie is replaced, so the session would linger unseen. A
// refused registration leaves it alone.
func TestRegisterEndsPresentedSession(t *testing.T) {
	e := newEnv(t)
	ada := e.register("ada@example.com", "Ada")
	e.send(request{method: "POST", path: "/v1/auth/register", cookie: ada.cookie,
		body: map[string]string{"email": "ada@example.com", "password": testPassword, "name": "Ada"}}).wantStatus(t, http.StatusConflict)
	if _, ok := e.sm.Get(ada.cookie); !ok {
		t.Fatal("a refused registration deleted the presented session")
	}
	r := e.send(request{method: "POST", path: "/v1/auth/register", cookie: ada.cookie,
		body: map[string]string{"email": "bob@example.com", "password": testPassword, "name": "Bob"}})
	r.wantStatus(t, http.StatusCreated)
	if r.cookie == nil || r.cookie.Value == ada.cookie {
		t.Fatal("register kept the presented session id")
	}
	if _, ok := e.sm.Get(ada.cookie); ok {
		t.Fatal("the session the browser brought to register still exists")
	}
	if _, ok := e.sm.Get(r.cookie.Value); !ok {
		t.Fatal("the new session does not exist")
	}
}

// TestRegisterRateLimited: registrations from one address are limited like
// logins (each costs a hash, a user and a session); another address is not
// affected, and the window frees the first again.
func TestRegisterRateLimited(t *testing.T) {
	e := newEnv(t, func(s *setup) { s.cfg.SignupRateLimit = 3 })
	for i := range 3 {
		e.send(request{method: "POST", path: "/v1/auth/register", ip: "203.0.113.7",
			body: regBody("u"+itoa(i)+"@example.com", "U", testPassword)}).wantStatus(t, http.StatusCreated)
	}
	r := e.send(request{method: "POST", path: "/v1/auth/register", ip: "203.0.113.7",
		body: regBody("u9@example.com", "U", testPassword)})
	r.wantError(t, http.StatusTooManyRequests, "too many registration attempts")
	if r.header.Get("Retry-After") != "60" {
		t.Errorf("Retry-After: got %q, want 60", r.header.Get("Retry-After"))
	}
	if _, ok := e.users.byEmail("u9@example.com"); ok {
		t.Error("the refused registration was stored")
	}
	e.send(request{method: "POST", path: "/v1/auth/register", ip: "198.51.100.1",
		body: regBody("other@example.com", "O", testPassword)}).wantStatus(t, http.StatusCreated)
	e.clock.Add(61 * time.Second)
	e.send(request{method: "POST", path: "/v1/auth/register", ip: "203.0.113.7",
		body: regBody("u9@example.com", "U", testPassword)}).wantStatus(t, http.StatusCreated)
}
