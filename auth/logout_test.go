package auth

import (
	"net/http"
	"testing"

	"searchsvc/sessions"
)

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
