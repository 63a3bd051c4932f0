package auth

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/sessions"
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

func TestLogin(t *testing.T) {
	e := newEnv(t)
	reg := e.register("ada@example.com", "Ada")
	r := e.send(request{method: "POST", path: "/v1/auth/login", body: map[string]string{"email": "ADA@example.com ", "password": testPassword}})
	r.wantStatus(t, http.StatusOK)
	if r.body["operation"] != "auth.login" || r.field("user", "id") != reg.userID || r.field("result", "email") != "ada@example.com" {
		t.Fatalf("body %s", r.raw)
	}
	if r.cookie == nil || r.cookie.Value == reg.cookie {
		t.Fatal("login did not issue a new session cookie")
	}
	if _, ok := e.sm.Get(reg.cookie); !ok {
		t.Fatal("login without the old cookie deleted the other session")
	}
}

// The "login" line is written once the session is stored, never for a
// login whose session write failed.
func TestLoginLogLineAfterTheSession(t *testing.T) {
	var buf bytes.Buffer
	e := newEnv(t, func(s *setup) { s.cfg.Logger = slog.New(slog.NewTextHandler(&buf, nil)) })
	e.register("ada@example.com", "Ada Lovelace")
	buf.Reset()
	if err := e.sessStore.Close(); err != nil {
		t.Fatal(err)
	}
	r := e.send(request{method: "POST", path: "/v1/auth/login", body: map[string]string{"email": "ada@example.com", "password": testPassword}})
	r.wantError(t, http.StatusServiceUnavailable, "service unavailable")
	if strings.Contains(buf.String(), "msg=login ") {
		t.Fatalf("a login line for a login that failed:\n%s", buf.String())
	}
}

func TestLoginErrors(t *testing.T) {
	e := newEnv(t)
	e.register("ada@example.com", "Ada")
	for i, tc := range []struct {
		name    string
		body    any
		status  int
		message string
	}{
		{"malformed", `nope`, 400, "invalid request body"},
		{"unknown field", `{"email":"ada@example.com","password":"x","remember":true}`, 400, "invalid request body"},
		{"missing fields", `{}`, 400, "validation failed"},
		{"wrong password", map[string]string{"email": "ada@example.com", "password": "wrong password!"}, 401, "invalid email or password"},
		{"unknown email", map[string]string{"email": "nobody@example.com", "password": testPassword}, 401, "invalid email or password"},
		{"over-long password", map[string]string{"email": "ada@example.com", "password": strings.Repeat("p", 1025)}, 401, "invalid email or password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A fresh address each, to stay under the rate limit.
			r := e.send(request{method: "POST", path: "/v1/auth/login", body: tc.body, ip: "203.0.113." + string(rune('1'+i))})
			r.wantError(t, tc.status, tc.message)
			if r.cookie != nil {
				t.Error("a failed login set a cookie")
			}
		})
	}
}

// Unknown email and wrong password: the same answer after the same
// Argon2 work, so neither the body nor the delay tells them apart.
func TestLoginSameAnswerUnknownEmail(t *testing.T) {
	e := newEnv(t)
	e.register("ada@example.com", "Ada")
	try := func(email, ip string) (*response, int64) {
		before := e.h.hasher.derivations.Load()
		r := e.send(request{method: "POST", path: "/v1/auth/login", ip: ip, body: map[string]string{"email": email, "password": "wrong password!"}})
		return r, e.h.hasher.derivations.Load() - before
	}
	wrong, n1 := try("ada@example.com", "203.0.113.1")
	unknown, n2 := try("nobody@example.com", "203.0.113.2")
	if wrong.status != unknown.status || wrong.errMessage() != unknown.errMessage() ||
		wrong.field("error", "code") != unknown.field("error", "code") {
		t.Fatalf("answers differ: %s vs %s", wrong.raw, unknown.raw)
	}
	if n1 != 1 || n2 != 1 {
		t.Fatalf("Argon2 runs: wrong password %d, unknown email %d; want 1 each", n1, n2)
	}
}

func TestLoginRateLimit(t *testing.T) {
	e := newEnv(t, func(s *setup) { s.cfg.RateLimit, s.cfg.RateWindow = 5, time.Minute })
	e.register("ada@example.com", "Ada")
	bad := map[string]string{"email": "ada@example.com", "password": "wrong password!"}
	good := map[string]string{"email": "ada@example.com", "password": testPassword}
	for i := range 5 {
		body := any(bad)
		if i == 2 {
			body = good // successes count too
		}
		if i == 3 {
			body = `garbage` // so do malformed attempts
		}
		r := e.send(request{method: "POST", path: "/v1/auth/login", ip: "203.0.113.9", body: body})
		if r.status == http.StatusTooManyRequests {
			t.Fatalf("attempt %d refused", i+1)
		}
		e.clock.Add(5 * time.Second)
	}
	// Sixth attempt at +25s, even with the right password: 429; the first
	// attempt (t=0) leaves the window at +60s, so Retry-After is 35.
	r := e.send(request{method: "POST", path: "/v1/auth/login", ip: "203.0.113.9", body: good})
	r.wantError(t, http.StatusTooManyRequests, "too many login attempts")
	if got := r.header.Get("Retry-After"); got != "35" {
		t.Fatalf("Retry-After %q, want 35", got)
	}
	if r.cookie != nil {
		t.Fatal("refused login set a cookie")
	}
	// Another address is not affected; nor is an IPv4-mapped spelling a
	// way around it.
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "203.0.113.10", body: good}).wantStatus(t, http.StatusOK)
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "::ffff:203.0.113.9", body: good}).wantStatus(t, http.StatusTooManyRequests)
	e.clock.Add(35 * time.Second)
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "203.0.113.9", body: good}).wantStatus(t, http.StatusOK)
}

// Through the real chain, with a small cap so that it runs quickly under
// -race; TestLimiterSweepsAndCaps floods the default cap of 10,000.
func TestLoginRateLimitFloodOfAddresses(t *testing.T) {
	e := newEnv(t)
	const max = 300
	e.h.logins = newAddrLimiter(DefaultRateLimit, DefaultRateWindow, max)
	e.register("ada@example.com", "Ada")
	body := `{"email":"","password":""}` // cheap: 400 after counting
	for i := range max + 200 {
		ip := "10." + itoa(i>>16&255) + "." + itoa(i>>8&255) + "." + itoa(i&255)
		r := e.send(request{method: "POST", path: "/v1/auth/login", ip: ip, body: body})
		if r.status != http.StatusBadRequest {
			t.Fatalf("address %d: status %d, want 400: a flood must not lock other addresses out", i, r.status)
		}
	}
	if got := e.h.logins.tracked(); got != max {
		t.Fatalf("tracking %d addresses, want the cap %d", got, max)
	}
	// A real user from a fresh address logs in during the flood.
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "192.0.2.100",
		body: map[string]string{"email": "ada@example.com", "password": testPassword}}).wantStatus(t, http.StatusOK)
	e.clock.Add(2 * time.Minute)
	e.send(request{method: "POST", path: "/v1/auth/login", ip: "192.0.2.200",
		body: map[string]string{"email": "ada@example.com", "password": testPassword}}).wantStatus(t, http.StatusOK)
	if got := e.h.logins.tracked(); got != 1 {
		t.Fatalf("tracking %d addresses after the window, want 1", got)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

func TestLoginSessionFixation(t *testing.T) {
	e := newEnv(t)
	first := e.register("ada@example.com", "Ada")
	r := e.send(request{method: "POST", path: "/v1/auth/login", cookie: first.cookie,
		body: map[string]string{"email": "ada@example.com", "password": testPassword}})
	r.wantStatus(t, http.StatusOK)
	if r.cookie == nil || r.cookie.Value == first.cookie {
		t.Fatal("login kept the presented session id")
	}
	if _, ok := e.sm.Get(first.cookie); ok {
		t.Fatal("the pre-login session still exists")
	}
	// A failed login leaves the presented session alone.
	second := r.cookie.Value
	e.send(request{method: "POST", path: "/v1/auth/login", cookie: second,
		body: map[string]string{"email": "ada@example.com", "password": "wrong password!"}}).wantStatus(t, http.StatusUnauthorized)
	if _, ok := e.sm.Get(second); !ok {
		t.Fatal("a failed login deleted the presented session")
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

func TestLoginRehashesOldParameters(t *testing.T) {
	e := newEnv(t)
	e.register("ada@example.com", "Ada")
	before, _ := e.users.byEmail("ada@example.com")
	// Raise the parameters, as a new release would.
	stronger := tinyParams
	stronger.Memory, stronger.Time = 128, 2
	e.h.hasher = newTestHasher(t, stronger, 1)
	e.login("ada@example.com", testPassword)
	after, _ := e.users.byEmail("ada@example.com")
	if after.PasswordHash == before.PasswordHash || !strings.HasPrefix(after.PasswordHash, "$argon2id$v=19$m=128,t=2,p=1$") {
		t.Fatalf("hash %q, want one re-made at m=128,t=2", after.PasswordHash)
	}
	if match, rehash, err := e.h.hasher.Verify(context.Background(), testPassword, after.PasswordHash); !match || rehash || err != nil {
		t.Fatalf("new hash: %v %v %v", match, rehash, err)
	}
	// At current parameters nothing more is written.
	e.login("ada@example.com", testPassword)
	if again, _ := e.users.byEmail("ada@example.com"); again.PasswordHash != after.PasswordHash {
		t.Fatal("hash re-made although current")
	}
}

// A login's re-hash of the old password must not undo a password change
// that landed between its check and its write.
func TestRehashDoesNotUndoPasswordChange(t *testing.T) {
	e := newEnv(t)
	e.register("ada@example.com", "Ada")
	u, _ := e.users.byEmail("ada@example.com")
	if err := e.mainStore.Commit(e.users.setHashOp(u.ID, u.PasswordHash, "$new", e.clock.Now())); err != nil {
		t.Fatal(err)
	}
	err := e.mainStore.Commit(e.users.setHashOp(u.ID, u.PasswordHash, "$rehash-of-old", e.clock.Now()))
	if err != errHashChanged {
		t.Fatalf("got %v, want errHashChanged", err)
	}
	if got, _ := e.users.Get(u.ID); got.PasswordHash != "$new" {
		t.Fatalf("hash %q, want $new", got.PasswordHash)
	}
}

func TestLoginDamagedHash(t *testing.T) {
	e := newEnv(t)
	reg := e.register("ada@example.com", "Ada")
	u, _ := e.users.Get(reg.userID)
	bad := "$argon2id$v=19$m=4194304,t=1,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	if err := e.mainStore.Commit(e.users.setHashOp(u.ID, u.PasswordHash, bad, e.clock.Now())); err != nil {
		t.Fatal(err)
	}
	r := e.send(request{method: "POST", path: "/v1/auth/login", body: map[string]string{"email": "ada@example.com", "password": testPassword}})
	r.wantError(t, http.StatusUnauthorized, "invalid email or password")
}

func TestLogout(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	other := e.login("ada@example.com", testPassword)
	r := c.do("POST", "/v1/auth/logout", nil)
	r.wantStatus(t, http.StatusOK)
	if r.body["success"] != true || r.body["operation"] != "auth.logout" {
		t.Fatalf("body %s", r.raw)
	}
	if !r.cleared() {
		t.Fatalf("cookie not cleared: %+v", r.cookie)
	}
	if _, ok := e.sm.Get(c.cookie); ok {
		t.Fatal("session still stored")
	}
	if _, ok := e.sm.Get(other.cookie); !ok {
		t.Fatal("logout ended another session")
	}
	// Durable: a reopened session store does not have it either.
	e.sessStore.Close()
	st2 := reopenSessions(t, e)
	if _, ok := st2.Get(c.cookie); ok {
		t.Fatal("logged-out session back after reopening the store")
	}
	c.do("POST", "/v1/auth/logout", nil).wantError(t, http.StatusUnauthorized, "invalid session")
}

// reopenSessions opens the session store's directory anew, with a fresh
// Manager, as a restart would.
func reopenSessions(t *testing.T, e *testEnv) *sessions.Manager {
	t.Helper()
	st := newStoreAt(t, e.sessStore.Dir(), e.clock.Now)
	m, err := sessions.New(st, sessions.Config{Now: e.clock.Now, Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return m
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
