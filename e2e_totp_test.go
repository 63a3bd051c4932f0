package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"searchsvc/auth/totp"
)

// The end-to-end tests of the second factor run the real server, whose
// clock is the wall clock: a test computes each code for the period it
// is in, and never needs to wait for the next, since the server takes the
// next period's code too (totp.Skew). A user's codes are used in rising
// periods: the confirming code's, then the next one's at login.

// enableTOTPE2E turns c's second factor on through the API and returns
// the secret (as the app would have it), its base32 text, the recovery
// codes and the period of the confirming code.
func enableTOTPE2E(t *testing.T, c *client, password, csrf string) (secret []byte, b32 string, codes []string, step int64) {
	t.Helper()
	status, body := doCSRF(c, csrf, "POST", "/v1/user/totp", map[string]string{"currentPassword": password})
	if status != 200 {
		t.Fatalf("begin: %d %v", status, body)
	}
	b32, _ = body["secret"].(string)
	secret, err := totp.Encoding.DecodeString(b32)
	if err != nil || len(secret) != totp.SecretSize {
		t.Fatalf("secret %q: %v", b32, err)
	}
	step = totp.Step(time.Now())
	status, body = doCSRF(c, csrf, "POST", "/v1/user/totp/confirm", map[string]string{"code": totp.Code(secret, step)})
	if status != 200 {
		t.Fatalf("confirm: %d %v", status, body)
	}
	for _, rc := range body["recoveryCodes"].([]any) {
		codes = append(codes, rc.(string))
	}
	return secret, b32, codes, step
}

// doCSRF is c.do with the session's CSRF token in X-CSRF-Token, when
// there is one (CSRF_TOKENS=true).
func doCSRF(c *client, csrf, method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(b))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, m
}

// wantAPIError checks an error answer's status, code and message.
func wantAPIError(t *testing.T, what string, status int, body map[string]any, wantStatus int, code, message string) {
	t.Helper()
	e, _ := body["error"].(map[string]any)
	if status != wantStatus || e["code"] != code || e["message"] != message {
		t.Fatalf("%s: got %d %v, want %d %s %q", what, status, body, wantStatus, code, message)
	}
}

// TestTOTPEndToEnd: through the real server, a user turns the second
// factor on; the password alone then gets 401 totp_required and no
// session; the next code signs in once; a recovery code signs in once; an
// administrator's reset ends the user's sessions and lets the password
// alone in again. Neither the secret nor a recovery code appears in a log
// line.
func TestTOTPEndToEnd(t *testing.T) {
	const password = "a long enough password"
	env := testEnv(t.TempDir())
	env["LOGIN_RATE_LIMIT"] = "20" // every login here comes from 127.0.0.1
	srv := startRun(t, env)
	admin := newClient(t, srv.URL)
	admin.do("POST", "/v1/auth/register", map[string]string{"email": "root@example.org", "password": password, "name": "Root"})
	ada := newClient(t, srv.URL)
	status, body, _ := ada.do("POST", "/v1/auth/register", map[string]string{"email": "ada@example.org", "password": password, "name": "Ada"})
	if status != 201 {
		t.Fatalf("register: %d %v", status, body)
	}
	adaID := body["user"].(map[string]any)["id"].(string)
	secret, b32, recovery, step := enableTOTPE2E(t, ada, password, "")
	if _, body, _ := ada.do("GET", "/v1/user/profile", nil); body["result"].(map[string]any)["totpEnabled"] != true {
		t.Fatalf("profile: %v", body)
	}

	other := newClient(t, srv.URL)
	login := map[string]string{"email": "ada@example.org", "password": password}
	status, body, resp := other.do("POST", "/v1/auth/login", login)
	wantAPIError(t, "login without a code", status, body, 401, "totp_required", "second factor code required")
	if len(resp.Cookies()) != 0 {
		t.Fatalf("a login without the code set cookies: %v", resp.Cookies())
	}
	login["totpCode"] = totp.Code(secret, step) // the confirming code, used
	status, body, _ = other.do("POST", "/v1/auth/login", login)
	wantAPIError(t, "login with the used code", status, body, 401, "invalid_totp_code", "invalid second factor code")
	login["totpCode"] = totp.Code(secret, step+1)
	if status, body, _ := other.do("POST", "/v1/auth/login", login); status != 200 {
		t.Fatalf("login with the next code: %d %v", status, body)
	}
	status, body, _ = newClient(t, srv.URL).do("POST", "/v1/auth/login", login)
	wantAPIError(t, "the same code again", status, body, 401, "invalid_totp_code", "invalid second factor code")
	delete(login, "totpCode")
	login["recoveryCode"] = recovery[0]
	if status, body, _ := newClient(t, srv.URL).do("POST", "/v1/auth/login", login); status != 200 {
		t.Fatalf("login with a recovery code: %d %v", status, body)
	}
	status, body, _ = newClient(t, srv.URL).do("POST", "/v1/auth/login", login)
	wantAPIError(t, "the recovery code again", status, body, 401, "invalid_totp_code", "invalid second factor code")

	if status, body, _ := admin.do("DELETE", "/v1/admin/users/"+adaID+"/totp", nil); status != 200 || body["deleted"] != 3.0 {
		t.Fatalf("admin reset: %d %v, want 200 with 3 sessions deleted", status, body)
	}
	if status, _, _ := other.do("GET", "/v1/user/profile", nil); status != 401 {
		t.Fatalf("a session after the reset: %d, want 401", status)
	}
	delete(login, "recoveryCode")
	if status, body, _ := newClient(t, srv.URL).do("POST", "/v1/auth/login", login); status != 200 {
		t.Fatalf("login after the reset: %d %v", status, body)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	logs := srv.Logs.String()
	for _, s := range append([]string{b32, strings.ToLower(b32), base64.StdEncoding.EncodeToString(secret)}, recovery...) {
		if strings.Contains(logs, s) {
			t.Fatalf("a log line holds the secret or a recovery code %q", s)
		}
	}
	if !strings.Contains(logs, "second factor on") || !strings.Contains(logs, "second factor reset by an administrator") {
		t.Errorf("the second factor's events are not logged")
	}
}

// TestRotateKeyKeepsTOTP: `searchsvc rotate-key` re-seals the second
// factor's secret with the user, and under the new key alone the same
// authenticator app signs in.
func TestRotateKeyKeepsTOTP(t *testing.T) {
	const password = "a long enough password"
	oldKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	newKey := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	env := testEnv(t.TempDir())
	env["CREDENTIALS_KEY"] = oldKey
	srv := startRun(t, env)
	c := newClient(t, srv.URL)
	c.do("POST", "/v1/auth/register", map[string]string{"email": "a@example.org", "password": password, "name": "A"})
	secret, _, _, step := enableTOTPE2E(t, c, password, "")
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	env["CREDENTIALS_KEY"], env["CREDENTIALS_KEY_PREVIOUS"] = newKey, oldKey
	out, err := runCmd(t, env, "rotate-key")
	if err != nil || !strings.Contains(out, ", 1 user and the search index") {
		t.Fatalf("rotate-key: %v %q", err, out)
	}
	delete(env, "CREDENTIALS_KEY_PREVIOUS")
	srv = startRun(t, env)
	c = newClient(t, srv.URL)
	login := map[string]string{"email": "a@example.org", "password": password}
	status, body, _ := c.do("POST", "/v1/auth/login", login)
	wantAPIError(t, "login without a code under the new key", status, body, 401, "totp_required", "second factor code required")
	login["totpCode"] = totp.Code(secret, step+1)
	if status, body, _ := c.do("POST", "/v1/auth/login", login); status != 200 {
		t.Fatalf("login with a code under the new key alone: %d %v", status, body)
	}
}
