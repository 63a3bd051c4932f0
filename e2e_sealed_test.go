package main

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestNothingPersonalInClear: after a day of use (register, login from a
// second client, a session list) no file under DATA_DIR holds an email, a
// name, a session id, a CSRF token, a user agent, a second factor secret
// or a recovery code in clear.
func TestNothingPersonalInClear(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(dir)
	env["CSRF_TOKENS"] = "true"
	srv := startRun(t, env)
	u, _ := url.Parse(srv.URL)
	b := newClient(t, srv.URL)
	status, body, _ := b.do("POST", "/v1/auth/register", map[string]string{"email": "fresh.person@example.org", "password": "a long enough password", "name": "Fresh Person"})
	if status != 201 {
		t.Fatalf("register: %d %v", status, body)
	}
	token, _ := body["csrfToken"].(string)
	// A user with the second factor on: its secret is on disk too.
	raw, secret, recovery, _ := enableTOTPE2E(t, b, "a long enough password", token)
	var cookie string
	for _, ck := range b.http.Jar.Cookies(u) {
		cookie = ck.Value
	}
	a := newClient(t, srv.URL)
	if status, body, _ := a.do("POST", "/v1/auth/login", map[string]string{"email": "fresh.person@example.org", "password": "a long enough password", "recoveryCode": recovery[1]}); status != 200 {
		t.Fatalf("login: %d %v", status, body)
	}
	if status, body, _ := b.do("GET", "/v1/user/sessions", nil); status != 200 {
		t.Fatalf("session list: %d %v", status, body)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if token == "" || cookie == "" {
		t.Fatalf("register gave no CSRF token (%q) or cookie (%q)", token, cookie)
	}
	inClear := append([]string{"fresh.person@example.org", "Fresh Person", cookie, token, "Go-http-client", secret, strings.ToLower(secret), base64.StdEncoding.EncodeToString(raw)}, recovery...)
	for _, rc := range recovery {
		inClear = append(inClear, strings.ReplaceAll(rc, "-", ""))
	}
	if found := filesHolding(t, dir, inClear...); len(found) > 0 {
		t.Fatalf("in clear under DATA_DIR: %v", found)
	}
}
