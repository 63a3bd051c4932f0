package main

import (
	"bytes"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"searchsvc/integrations/gmail"
	"searchsvc/integrations/oauthtest"
)

// TestEndToEndConnectGmail runs the whole connect flow through run against
// a fake Google: authorize → provider → callback → sealed record → listed
// without secrets, and then checks that no token or client secret sits
// anywhere under DATA_DIR or in the logs.
func TestEndToEndConnectGmail(t *testing.T) {
	const clientID, clientSecret = "client-id-e2e.apps", "client-secret-e2e-XYZ"
	var mu sync.Mutex
	var issued []string
	google := oauthtest.New(t, oauthtest.Options{
		ClientID: clientID, ClientSecret: clientSecret, Basic: true, Body: true,
		Scope:      gmail.Scope,
		AuthParams: map[string]string{"access_type": "offline", "prompt": "consent"},
		Token: func(iss oauthtest.Issued) map[string]any {
			mu.Lock()
			issued = append(issued, iss.AccessToken, iss.RefreshToken)
			mu.Unlock()
			return map[string]any{"access_token": iss.AccessToken, "refresh_token": iss.RefreshToken,
				"token_type": "Bearer", "expires_in": 3599, "scope": iss.Scope}
		},
	})

	dir := t.TempDir()
	env := testEnv(dir)
	env["GMAIL_OAUTH_CLIENT_ID"] = clientID
	env["GMAIL_OAUTH_CLIENT_SECRET"] = clientSecret
	env["GMAIL_OAUTH_AUTH_URL"] = google.URL + "/authorize"
	env["GMAIL_OAUTH_TOKEN_URL"] = google.URL + "/token"
	env["GMAIL_API_BASE_URL"] = google.URL
	env["FRONTEND_URL"] = "http://localhost:3000"
	// The callback must come back to this very server, so it listens on a
	// port chosen before it starts.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env["LISTEN_ADDR"] = ln.Addr().String()
	ln.Close()
	env["OAUTH_REDIRECT_BASE_URL"] = "http://" + env["LISTEN_ADDR"]
	srv := startRun(t, env)

	browser := newClient(t, srv.URL)
	status, body, _ := browser.do("POST", "/v1/auth/register", map[string]string{
		"email": "carol@example.org", "password": "a long enough password", "name": "Carol"})
	if status != 201 {
		t.Fatalf("register: %d %v", status, body)
	}
	userID := body["user"].(map[string]any)["id"].(string)

	// The authorize route with another user's id is refused.
	if status, body, _ := browser.do("GET", "/v1/user-integration/oauth/gmail/authorize?userId=someone-else", nil); status != 403 || errMessage(body) != "forbidden" {
		t.Errorf("authorize for another user: got %d %v, want 403 forbidden", status, body)
	}
	if status, body, _ := browser.do("GET", "/v1/user-integration/oauth/nosuch/authorize?userId="+userID, nil); status != 404 || errMessage(body) != "integration not found" {
		t.Errorf("unknown integration: got %d %v, want 404 integration not found", status, body)
	}

	status, _, resp := browser.do("GET", "/v1/user-integration/oauth/gmail/authorize?userId="+userID, nil)
	if status != 302 {
		t.Fatalf("authorize: got %d, want 302", status)
	}
	authURL := resp.Header.Get("Location")
	if !strings.HasPrefix(authURL, google.URL+"/authorize?") {
		t.Fatalf("authorize redirects to %q, want the provider", authURL)
	}
	au, _ := url.Parse(authURL)
	q := au.Query()
	if q.Get("redirect_uri") != srv.URL+"/v1/user-integration/oauth/gmail/callback" || q.Get("code_challenge_method") != "S256" ||
		q.Get("access_type") != "offline" || q.Get("prompt") != "consent" {
		t.Errorf("authorization URL lacks PKCE, offline access or the right redirect: %s", authURL)
	}
	code := google.Authorize(t, authURL)

	callback := "/v1/user-integration/oauth/gmail/callback?code=" + url.QueryEscape(code) + "&state=" + url.QueryEscape(q.Get("state"))
	status, _, resp = browser.do("GET", callback, nil)
	if want := "http://localhost:3000/integrations?status=success&integration=gmail"; status != 302 || resp.Header.Get("Location") != want {
		t.Fatalf("callback: got %d %q, want 302 %s", status, resp.Header.Get("Location"), want)
	}
	// The state is one-time: replaying the callback fails.
	status, _, resp = browser.do("GET", callback, nil)
	if loc := resp.Header.Get("Location"); status != 302 || !strings.Contains(loc, "status=error") ||
		!strings.Contains(loc, "authorization%20failed%2C%20invalid%20state%20token") {
		t.Errorf("replayed callback: got %d %q, want the invalid state error page", status, loc)
	}

	status, body, _ = browser.do("GET", "/v1/user-integrations", nil)
	if status != 200 || body["count"] != 1.0 {
		t.Fatalf("records: got %d %v", status, body)
	}
	rec := body["results"].([]any)[0].(map[string]any)
	if rec["integration"] != "gmail" || rec["status"] != "connected" || rec["userId"] != userID {
		t.Errorf("record: got %v", rec)
	}
	listed := jsonString(body)
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	secrets := append([]string{clientSecret, code}, issued...)
	mu.Unlock()
	if len(secrets) < 4 {
		t.Fatalf("the fake issued no tokens: %v", secrets)
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if strings.Contains(listed, s) {
			t.Errorf("the record listing holds a secret")
		}
		if strings.Contains(srv.Logs.String(), s) {
			t.Errorf("the logs hold a secret (%d bytes)", len(s))
		}
		filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(s)) {
					t.Errorf("%s holds a secret in plain text", path)
				}
			}
			return nil
		})
	}
}
