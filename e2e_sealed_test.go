package main

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"searchsvc/auth"
	"searchsvc/sessions"
	"searchsvc/storage"
)

// filesHolding lists the files under dir that hold any of values, but
// dev-secrets.json, which holds secrets by design (development only).
func filesHolding(t *testing.T, dir string, values ...string) []string {
	t.Helper()
	var found []string
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Name() == "dev-secrets.json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if bytes.Contains(b, []byte(v)) {
				found = append(found, path+": "+v)
			}
		}
		return nil
	})
	return found
}

// TestNothingPersonalInClear: users, sessions and CSRF tokens an older
// version stored in clear are sealed at start, and after a day of use
// (register, login, a session list) no file under DATA_DIR holds an email,
// a name, a session id, a CSRF token or a user agent in clear.
func TestNothingPersonalInClear(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(dir)
	env["CSRF_TOKENS"] = "true"
	c, err := loadConfig(envFunc(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.devSecrets(); err != nil {
		t.Fatal(err)
	}

	// What an older version left: a user and a session in clear.
	hasher, _ := auth.NewHasher(auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}, 1)
	hash, _ := hasher.Hash(context.Background(), "a long enough password")
	now := time.Now().UTC()
	legacyUser := auth.User{ID: "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9", Email: "legacy.person@example.org",
		Name: "Legacy Person", Role: auth.RoleAdmin, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	legacySession := sessions.Session{ID: "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9", UserID: legacyUser.ID, CreatedAt: now,
		LastAccessedAt: now, ExpiresAt: now.Add(time.Hour), IPAddress: "127.0.0.1", UserAgent: "LegacyAgent/7",
		CSRFToken: "legacy-csrf-token", Metadata: sessions.Metadata{LoginMethod: sessions.LoginPassword}}
	for _, w := range []struct {
		store, table string
		put          func(*storage.Store) storage.Op
	}{
		{mainStoreDir, "users", func(st *storage.Store) storage.Op {
			return storage.Register(st, "users", storage.TableConfig[auth.User]{ID: func(u *auth.User) string { return u.ID }}).Put(legacyUser)
		}},
		{sessionStoreDir, "sessions", func(st *storage.Store) storage.Op {
			return storage.Register(st, "sessions", storage.TableConfig[sessions.Session]{ID: func(s *sessions.Session) string { return s.ID }}).Put(legacySession)
		}},
	} {
		st := storage.New(filepath.Join(dir, w.store), storage.Options{Sync: storage.SyncNone})
		op := w.put(st)
		if err := st.Open(); err != nil {
			t.Fatal(err)
		}
		if err := st.Commit(op); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	if len(filesHolding(t, dir, legacyUser.Email, legacySession.ID)) != 2 {
		t.Fatal("the legacy stores should hold the email and the session id in clear")
	}

	srv := startRun(t, env)
	// The legacy session still works, with its CSRF token.
	old := newClient(t, srv.URL)
	u, _ := url.Parse(srv.URL)
	old.http.Jar.SetCookies(u, []*http.Cookie{{Name: sessions.CookieName, Value: legacySession.ID}})
	if status, body, _ := old.do("GET", "/v1/user/profile", nil); status != 200 || body["result"].(map[string]any)["email"] != legacyUser.Email {
		t.Fatalf("legacy session after conversion: %d %v", status, body)
	}
	a := newClient(t, srv.URL)
	if status, body, _ := a.do("POST", "/v1/auth/login", map[string]string{"email": legacyUser.Email, "password": "a long enough password"}); status != 200 {
		t.Fatalf("legacy user's login after conversion: %d %v", status, body)
	}
	b := newClient(t, srv.URL)
	status, body, _ := b.do("POST", "/v1/auth/register", map[string]string{"email": "fresh.person@example.org", "password": "a long enough password", "name": "Fresh Person"})
	if status != 201 {
		t.Fatalf("register: %d %v", status, body)
	}
	token, _ := body["csrfToken"].(string)
	var cookie string
	for _, ck := range b.http.Jar.Cookies(u) {
		cookie = ck.Value
	}
	b.do("GET", "/v1/user/sessions", nil)
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if found := filesHolding(t, dir, legacyUser.Email, legacyUser.Name, legacySession.ID, legacySession.CSRFToken,
		legacySession.UserAgent, "fresh.person@example.org", "Fresh Person", cookie, token, "Go-http-client"); len(found) > 0 {
		t.Fatalf("in clear under DATA_DIR: %v", found)
	}
}
