package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// client is a browser: it keeps cookies and speaks JSON.
type client struct {
	t    *testing.T
	base string
	http *http.Client
}

func newClient(t *testing.T, base string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: base, http: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// do sends a JSON request and returns the status, the decoded body and the
// response (its body already read).
func (c *client) do(method, path string, body any) (int, map[string]any, *http.Response) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &m) != nil {
		c.t.Fatalf("%s %s: body is not JSON: %q", method, path, raw)
	}
	return resp.StatusCode, m, resp
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func TestEndToEndAccounts(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(dir)
	srv := startRun(t, env)
	alice := newClient(t, srv.URL)

	status, body, resp := alice.do("POST", "/v1/auth/register", map[string]string{
		"email": "Alice@Example.org", "password": "correct horse battery", "name": "Alice"})
	if status != 201 {
		t.Fatalf("register: got %d %v, want 201", status, body)
	}
	user := body["user"].(map[string]any)
	if user["email"] != "alice@example.org" || user["role"] != "admin" || body["operation"] != "auth.register" {
		t.Errorf("register: got %v; want the lower-cased email, role admin (first user)", body)
	}
	setCookie := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"svc_session=", "HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=604800"} {
		if !strings.Contains(setCookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", setCookie, want)
		}
	}

	status, body, _ = alice.do("GET", "/v1/user/profile", nil)
	if status != 200 || body["result"].(map[string]any)["id"] != user["id"] || body["operation"] != "user.readOne" {
		t.Errorf("profile: got %d %v", status, body)
	}
	if strings.Contains(strings.ToLower(jsonString(body)), "hash") {
		t.Errorf("profile leaks the password hash: %v", body)
	}

	// A second browser logs in; the first lists both sessions.
	phone := newClient(t, srv.URL)
	if status, body, _ := phone.do("POST", "/v1/auth/login", map[string]string{
		"email": "alice@example.org", "password": "correct horse battery"}); status != 200 {
		t.Fatalf("login: got %d %v", status, body)
	}
	status, body, _ = alice.do("GET", "/v1/user/sessions", nil)
	if status != 200 || body["count"] != 2.0 {
		t.Fatalf("sessions: got %d %v, want 2", status, body)
	}

	// The session ids are secrets the logs must never hold either.
	secrets := []string{"correct horse battery", "argon2id"}
	for _, c := range []*client{alice, phone} {
		u, _ := url.Parse(srv.URL)
		for _, ck := range c.http.Jar.Cookies(u) {
			if ck.Name == "svc_session" {
				secrets = append(secrets, ck.Value)
			}
		}
	}
	if len(secrets) != 4 {
		t.Fatalf("want the two browsers' session cookies, have %d secrets", len(secrets))
	}

	// Restart: users and sessions survive (the stores are on disk).
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	firstLogs := srv.Logs
	srv = startRun(t, env)
	alice.base, phone.base = srv.URL, srv.URL
	if status, body, _ := phone.do("GET", "/v1/user/profile", nil); status != 200 {
		t.Fatalf("profile after restart: got %d %v", status, body)
	}

	// Logout-all from the first browser ends the phone's session.
	status, body, _ = alice.do("POST", "/v1/auth/logout-all", nil)
	if status != 200 || body["deleted"] != 1.0 {
		t.Errorf("logout-all: got %d %v, want deleted 1", status, body)
	}
	if status, body, _ := phone.do("GET", "/v1/user/profile", nil); status != 401 || errMessage(body) != "invalid session" {
		t.Errorf("phone after logout-all: got %d %v, want 401 invalid session", status, body)
	}
	if status, body, _ := phone.do("GET", "/v1/user/profile", nil); status != 401 || errMessage(body) != "no session cookie" {
		t.Errorf("phone after its cookie was cleared: got %d %v, want 401 no session cookie", status, body)
	}
	if status, body, _ := alice.do("POST", "/v1/auth/logout", nil); status != 200 || body["success"] != true {
		t.Errorf("logout: got %d %v", status, body)
	}

	// Nothing secret in the logs of either run, read after each stopped so
	// that every access line is in.
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	for i, logs := range []string{firstLogs.String(), srv.Logs.String()} {
		if !strings.Contains(logs, `"msg":"request"`) {
			t.Errorf("run %d logged no request: the check below would see nothing", i+1)
		}
		for _, secret := range secrets {
			if strings.Contains(logs, secret) {
				t.Errorf("run %d: logs hold %q", i+1, secret)
			}
		}
	}
	// Files 0600, directories 0700.
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		mode := info.Mode().Perm()
		if info.IsDir() && path != dir && mode != 0o700 || !info.IsDir() && mode != 0o600 {
			t.Errorf("%s: mode %v", path, mode)
		}
		return nil
	})
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAdminCommand(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(dir)
	srv := startRun(t, env)
	c := newClient(t, srv.URL)
	for _, email := range []string{"first@example.org", "second@example.org"} {
		if status, body, _ := c.do("POST", "/v1/auth/register", map[string]string{
			"email": email, "password": "a long enough password", "name": "N"}); status != 201 {
			t.Fatalf("register %s: got %d %v", email, status, body)
		}
	}
	// While the server runs, the command refuses and names the holder.
	_, err := runCmd(t, env, "admin", "grant", "second@example.org")
	if err == nil || !strings.Contains(err.Error(), "stop the server first") || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("admin grant beside a running server: got %v", err)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(t, env, "admin", "grant", "SECOND@example.org"); err != nil || !strings.Contains(out, "second@example.org is now admin") {
		t.Fatalf("admin grant: got %v %q", err, out)
	}
	if _, err := runCmd(t, env, "admin", "grant", "nobody@example.org"); err == nil || !strings.Contains(err.Error(), "no user with email") {
		t.Errorf("grant to an unknown email: got %v", err)
	}
	if _, err := runCmd(t, env, "admin", "promote", "x"); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("bad verb: got %v", err)
	}

	// The second user now reaches the admin endpoints.
	srv = startRun(t, env)
	c = newClient(t, srv.URL)
	if status, body, _ := c.do("POST", "/v1/auth/login", map[string]string{"email": "second@example.org", "password": "a long enough password"}); status != 200 {
		t.Fatalf("login: got %d %v", status, body)
	}
	status, body, _ := c.do("GET", "/v1/admin/users", nil)
	if status != 200 || body["count"] != 2.0 {
		t.Errorf("admin users as the granted admin: got %d %v", status, body)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, env, "admin", "revoke", "second@example.org"); err != nil {
		t.Fatal(err)
	}
	srv = startRun(t, env)
	c = newClient(t, srv.URL)
	c.do("POST", "/v1/auth/login", map[string]string{"email": "second@example.org", "password": "a long enough password"})
	if status, body, _ := c.do("GET", "/v1/admin/users", nil); status != 403 || errMessage(body) != "admin required" {
		t.Errorf("admin users after revoke: got %d %v, want 403 admin required", status, body)
	}
}
