package auth

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

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
