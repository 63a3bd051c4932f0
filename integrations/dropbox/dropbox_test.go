package dropbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"searchsvc/integrations"
	"searchsvc/integrations/dropbox"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/oauthtest"
)

const (
	clientID     = "dropbox-app-key"
	clientSecret = "dropbox-app-secret"
	redirectURI  = "https://search.example/v1/user-integration/oauth/dropbox/callback"
	accountID    = "dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"
)

var now = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

// dropboxToken is Dropbox's answer: an account id, and a refresh token on
// the first exchange only.
func dropboxToken(i oauthtest.Issued) map[string]any {
	body := map[string]any{"access_token": "sl." + i.AccessToken, "token_type": "bearer", "expires_in": 14400}
	if i.GrantType == "authorization_code" {
		body["refresh_token"] = i.RefreshToken
		body["scope"] = i.Scope
		body["uid"] = "12345"
		body["account_id"] = accountID
	}
	return body
}

func newFakeDropbox(t *testing.T, token func(oauthtest.Issued) map[string]any) *oauthtest.Server {
	t.Helper()
	srv := oauthtest.New(t, oauthtest.Options{
		ClientID: clientID, ClientSecret: clientSecret, Basic: true, Body: true,
		Scope:      strings.Join(dropbox.Definition().Manifest.Scopes, " "),
		AuthParams: map[string]string{"token_access_type": "offline"},
		Token:      token,
	})
	// Dropbox's no-argument RPC endpoints refuse a body or a Content-Type.
	bearer := func(w http.ResponseWriter, r *http.Request) (string, bool) {
		body, _ := io.ReadAll(r.Body)
		if len(body) > 0 || r.Header.Get("Content-Type") != "" {
			http.Error(w, `Error in call to API function: request body: could not decode input as JSON`, http.StatusBadRequest)
			return "", false
		}
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer sl.")
		if !srv.Live(tok) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"error_summary": "invalid_access_token/", "error": map[string]string{".tag": "invalid_access_token"}})
			return "", false
		}
		return tok, true
	}
	srv.Mux.HandleFunc("POST /2/users/get_current_account", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := bearer(w, r); ok {
			json.NewEncoder(w).Encode(map[string]any{"account_id": accountID, "email": "me@example.com"})
		}
	})
	srv.Mux.HandleFunc("POST /2/auth/token/revoke", func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := bearer(w, r); ok {
			srv.Kill(tok)
			w.Write([]byte("null"))
		}
	})
	return srv
}

func provider(t *testing.T, srv *oauthtest.Server) *oauthclient.Provider {
	t.Helper()
	vars := map[string]string{
		"DROPBOX_OAUTH_CLIENT_ID":     clientID,
		"DROPBOX_OAUTH_CLIENT_SECRET": clientSecret,
		"DROPBOX_OAUTH_AUTH_URL":      srv.URL + "/authorize",
		"DROPBOX_OAUTH_TOKEN_URL":     srv.URL + "/token",
		"DROPBOX_OAUTH_REVOKE_URL":    srv.URL + "/2/auth/token/revoke",
		"DROPBOX_API_BASE_URL":        srv.URL,
	}
	p, err := oauthclient.NewProvider(dropbox.Definition(), func(k string) string { return vars[k] }, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	p.Now = func() time.Time { return now }
	return p
}

func connect(t *testing.T, srv *oauthtest.Server, p *oauthclient.Provider) (integrations.Credentials, error) {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	authURL, err := p.GenerateAuthorizationURL(redirectURI, "state", verifier)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.ExchangeCodeForTokens(context.Background(), srv.Authorize(t, authURL), redirectURI, verifier)
	if err != nil {
		t.Fatalf("ExchangeCodeForTokens: %v", err)
	}
	return p.ValidateTokens(raw)
}

func validate(t *testing.T, p *oauthclient.Provider, creds integrations.Credentials, clock time.Time) (bool, error) {
	t.Helper()
	in, err := dropbox.Definition().New(integrations.Env{Credentials: creds, Provider: p, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	return in.ValidateAuthentication(context.Background())
}

func TestDefinitionIsValid(t *testing.T) {
	if _, err := integrations.NewRegistry(dropbox.Definition()); err != nil {
		t.Fatal(err)
	}
}

func TestAuthorizationURL(t *testing.T) {
	p, _ := oauthclient.NewProvider(dropbox.Definition(), func(k string) string {
		return map[string]string{"DROPBOX_OAUTH_CLIENT_ID": clientID, "DROPBOX_OAUTH_CLIENT_SECRET": clientSecret}[k]
	}, nil)
	u, err := p.GenerateAuthorizationURL(redirectURI, "s", oauth2.GenerateVerifier())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"https://www.dropbox.com/oauth2/authorize?", "token_access_type=offline",
		"scope=account_info.read+files.metadata.read+files.content.read", "code_challenge_method=S256"} {
		if !strings.Contains(u, want) {
			t.Errorf("authorization URL %s lacks %s", u, want)
		}
	}
}

func TestConnectRefreshRevoke(t *testing.T) {
	srv := newFakeDropbox(t, dropboxToken)
	p := provider(t, srv)
	creds, err := connect(t, srv, p)
	if err != nil {
		t.Fatalf("ValidateTokens: %v", err)
	}
	if creds.Fields[dropbox.FieldAccountID] != accountID || creds.RefreshToken == "" || !creds.ExpiresAt.Equal(now.Add(4*time.Hour)) {
		t.Errorf("credentials: got %v, want the account id, a refresh token and a 4 h expiry", creds)
	}
	if ok, err := validate(t, p, creds, now); !ok || err != nil {
		t.Fatalf("get_current_account: got %v, %v; want true", ok, err)
	}

	// Five hours on, the access token has expired: the check refreshes it.
	later := now.Add(5 * time.Hour)
	p.Now = func() time.Time { return later }
	if ok, err := validate(t, p, creds, later); !ok || err != nil {
		t.Fatalf("expired access token: got %v, %v; want true after a refresh", ok, err)
	}
	// Revoking with the expired token refreshes first, then kills the grant.
	if err := p.Revoke(context.Background(), creds); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if ok, err := validate(t, p, creds, later); ok || err != nil {
		t.Errorf("after revoke: got %v, %v; want false", ok, err)
	}
	if err := p.Revoke(context.Background(), creds); err != nil {
		t.Errorf("second Revoke: got %v, want nil", err)
	}
}

func TestRefusedTokenResponses(t *testing.T) {
	tests := []struct {
		name  string
		token func(oauthtest.Issued) map[string]any
		field string
	}{
		{"online access: no refresh token", func(i oauthtest.Issued) map[string]any {
			return map[string]any{"access_token": "sl." + i.AccessToken, "token_type": "bearer", "expires_in": 14400}
		}, "refresh_token"},
		{"files.content.read not enabled for the app", func(i oauthtest.Issued) map[string]any {
			return map[string]any{"access_token": "sl." + i.AccessToken, "token_type": "bearer", "expires_in": 14400,
				"refresh_token": i.RefreshToken, "scope": "account_info.read files.metadata.read"}
		}, "scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeDropbox(t, tt.token)
			_, err := connect(t, srv, provider(t, srv))
			var ite *oauthclient.InvalidTokensError
			if !errors.As(err, &ite) || ite.Field != tt.field {
				t.Errorf("got %v, want *InvalidTokensError on %s", err, tt.field)
			}
		})
	}
}

func TestWrongAppSecret(t *testing.T) {
	srv := newFakeDropbox(t, dropboxToken)
	vars := map[string]string{
		"DROPBOX_OAUTH_CLIENT_ID": clientID, "DROPBOX_OAUTH_CLIENT_SECRET": "wrong",
		"DROPBOX_OAUTH_AUTH_URL": srv.URL + "/authorize", "DROPBOX_OAUTH_TOKEN_URL": srv.URL + "/token",
	}
	p, _ := oauthclient.NewProvider(dropbox.Definition(), func(k string) string { return vars[k] }, srv.Client())
	verifier := oauth2.GenerateVerifier()
	code := srv.Authorize(t, must(p.GenerateAuthorizationURL(redirectURI, "s", verifier)))
	_, err := p.ExchangeCodeForTokens(context.Background(), code, redirectURI, verifier)
	var te *oauthclient.TokenError
	if !errors.As(err, &te) || te.Code != "invalid_client" || strings.Contains(err.Error(), "wrong") {
		t.Errorf("got %v, want invalid_client without the secret", err)
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}
