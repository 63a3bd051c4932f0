package oauthclient_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/oauthtest"
)

const (
	clientID     = "acme-client"
	clientSecret = "acme-secret/with+odd=chars"
	redirectURI  = "https://search.example/v1/user-integration/oauth/acme/callback"
	verifier     = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk0123456789"
)

var testNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// acme is an RFC 6749 provider that authenticates clients in the form.
func acme() integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{
			Domain: "acme", DisplayName: "Acme Mail", Kind: integrations.KindEmail,
			AuthType: integrations.AuthOAuth, Scopes: []string{"mail.read", "profile"},
		},
		OAuth: &integrations.OAuthSpec{
			AuthURL:             "https://acme.example/authorize",
			TokenURL:            "https://acme.example/token",
			AuthStyle:           oauth2.AuthStyleInParams,
			AuthParams:          map[string]string{"access_type": "offline"},
			RequireRefreshToken: true,
		},
		New: func(integrations.Env) (integrations.Integration, error) { return nil, nil },
	}
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// newAcme starts a fake Acme and a Provider configured against it.
func newAcme(t *testing.T) (*oauthtest.Server, *oauthclient.Provider) {
	t.Helper()
	srv := oauthtest.New(t, oauthtest.Options{
		ClientID: clientID, ClientSecret: clientSecret, Body: true,
		Scope: "mail.read profile", AuthParams: map[string]string{"access_type": "offline"},
	})
	p, err := oauthclient.NewProvider(acme(), env(map[string]string{
		"ACME_OAUTH_CLIENT_ID":     clientID,
		"ACME_OAUTH_CLIENT_SECRET": clientSecret,
		"ACME_OAUTH_AUTH_URL":      srv.URL + "/authorize",
		"ACME_OAUTH_TOKEN_URL":     srv.URL + "/token",
	}), srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	p.Now = func() time.Time { return testNow }
	return srv, p
}

func TestAuthorizationURL(t *testing.T) {
	_, p := newAcme(t)
	raw, err := p.GenerateAuthorizationURL(redirectURI, "state-1", verifier)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	sum := sha256.Sum256([]byte(verifier))
	want := map[string]string{
		"client_id":             clientID,
		"redirect_uri":          redirectURI,
		"response_type":         "code",
		"state":                 "state-1",
		"scope":                 "mail.read profile",
		"access_type":           "offline",
		"code_challenge_method": "S256",
		"code_challenge":        base64.RawURLEncoding.EncodeToString(sum[:]),
	}
	for k, v := range want {
		if got := u.Query().Get(k); got != v {
			t.Errorf("parameter %s: got %q, want %q", k, got, v)
		}
	}
	if strings.Contains(raw, "acme-secret") || strings.Contains(raw, verifier) {
		t.Errorf("authorization URL %s holds the client secret or the verifier", raw)
	}

	bad := []struct{ name, redirect, state, verifier string }{
		{"relative redirect", "/callback", "s", verifier},
		{"empty state", redirectURI, "", verifier},
		{"short verifier", redirectURI, "s", "abc"},
		{"verifier with space", redirectURI, "s", strings.Repeat("a", 42) + " "},
	}
	for _, tt := range bad {
		if _, err := p.GenerateAuthorizationURL(tt.redirect, tt.state, tt.verifier); err == nil {
			t.Errorf("%s: got nil error", tt.name)
		}
	}
}

func TestNotConfigured(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want string
	}{
		{"no id", map[string]string{"ACME_OAUTH_CLIENT_SECRET": "s"}, "ACME_OAUTH_CLIENT_ID not configured"},
		{"no secret", map[string]string{"ACME_OAUTH_CLIENT_ID": "c"}, "ACME_OAUTH_CLIENT_SECRET not configured"},
		{"blank id", map[string]string{"ACME_OAUTH_CLIENT_ID": "  ", "ACME_OAUTH_CLIENT_SECRET": "s"}, "ACME_OAUTH_CLIENT_ID not configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := oauthclient.NewProvider(acme(), env(tt.vars), nil)
			if err != nil {
				t.Fatalf("NewProvider: %v (a missing client id is reported later)", err)
			}
			_, err1 := p.GenerateAuthorizationURL(redirectURI, "s", verifier)
			_, err2 := p.ExchangeCodeForTokens(context.Background(), "code", redirectURI, verifier)
			_, err3 := p.Refresh(context.Background(), integrations.Credentials{RefreshToken: "r"})
			for _, err := range []error{err1, err2, err3} {
				var nc *oauthclient.NotConfiguredError
				if !errors.As(err, &nc) || err.Error() != tt.want {
					t.Errorf("got %v, want *NotConfiguredError %q", err, tt.want)
				}
			}
		})
	}
}

func TestNewProviderOverrides(t *testing.T) {
	for _, name := range []string{"ACME_OAUTH_AUTH_URL", "ACME_OAUTH_TOKEN_URL", "ACME_OAUTH_REVOKE_URL", "ACME_API_BASE_URL"} {
		_, err := oauthclient.NewProvider(acme(), env(map[string]string{name: "ftp://x"}), nil)
		if err == nil || !strings.HasPrefix(err.Error(), name+":") {
			t.Errorf("bad %s: got %v, want an error naming it", name, err)
		}
	}
	p, err := oauthclient.NewProvider(acme(), env(map[string]string{"ACME_API_BASE_URL": "http://localhost:9/api/"}), nil)
	if err != nil || p.APIBaseURL() != "http://localhost:9/api" {
		t.Errorf("API base override: got %q, %v; want it without the trailing slash", p.APIBaseURL(), err)
	}
	manual := acme()
	manual.OAuth = nil
	if _, err := oauthclient.NewProvider(manual, env(nil), nil); !errors.Is(err, oauthclient.ErrNotOAuth) {
		t.Errorf("manual definition: got %v, want ErrNotOAuth", err)
	}
}

func TestExchangeAndValidate(t *testing.T) {
	srv, p := newAcme(t)
	ctx := context.Background()
	authURL, err := p.GenerateAuthorizationURL(redirectURI, "st", verifier)
	if err != nil {
		t.Fatal(err)
	}
	code := srv.Authorize(t, authURL)
	raw, err := p.ExchangeCodeForTokens(ctx, code, redirectURI, verifier)
	if err != nil {
		t.Fatalf("ExchangeCodeForTokens: %v", err)
	}
	for _, k := range []string{"access_token", "refresh_token", "expires_in", "token_type", "scope"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("raw response lacks %s: %v", k, raw)
		}
	}
	creds, err := p.ValidateTokens(raw)
	if err != nil {
		t.Fatalf("ValidateTokens: %v", err)
	}
	if creds.AccessToken != raw["access_token"] || creds.RefreshToken != raw["refresh_token"] ||
		creds.ClientID != clientID || creds.ClientSecret != clientSecret || creds.Scope != "mail.read profile" {
		t.Errorf("credentials: got %v, want tokens from the response and client from config", creds)
	}
	if want := testNow.Add(3599 * time.Second); !creds.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt: got %v, want %v", creds.ExpiresAt, want)
	}
	if !srv.Live(creds.AccessToken) {
		t.Error("access token is not one the provider issued")
	}

	// The code is one-time.
	_, err = p.ExchangeCodeForTokens(ctx, code, redirectURI, verifier)
	assertTokenError(t, err, http.StatusBadRequest, "invalid_grant", code)
}

func assertTokenError(t *testing.T, err error, status int, code string, secrets ...string) {
	t.Helper()
	var te *oauthclient.TokenError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a *TokenError", err)
	}
	if te.Status != status || te.Code != code {
		t.Errorf("TokenError: got %d %q, want %d %q", te.Status, te.Code, status, code)
	}
	for _, s := range append(secrets, clientSecret, verifier) {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q leaks %q", err, s)
		}
	}
}

func TestExchangeRefusals(t *testing.T) {
	tests := []struct {
		name       string
		redirect   string
		verifier   string
		secret     string
		wantStatus int
		wantCode   string
	}{
		{"wrong verifier", redirectURI, strings.Repeat("x", 43), clientSecret, 400, "invalid_grant"},
		{"other redirect URI", redirectURI + "?x=1", verifier, clientSecret, 400, "invalid_grant"},
		{"wrong client secret", redirectURI, verifier, "wrong", 401, "invalid_client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newAcme(t)
			p, err := oauthclient.NewProvider(acme(), env(map[string]string{
				"ACME_OAUTH_CLIENT_ID": clientID, "ACME_OAUTH_CLIENT_SECRET": tt.secret,
				"ACME_OAUTH_AUTH_URL": srv.URL + "/authorize", "ACME_OAUTH_TOKEN_URL": srv.URL + "/token",
			}), srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			authURL, _ := p.GenerateAuthorizationURL(redirectURI, "st", verifier)
			code := srv.Authorize(t, authURL)
			_, err = p.ExchangeCodeForTokens(context.Background(), code, tt.redirect, tt.verifier)
			assertTokenError(t, err, tt.wantStatus, tt.wantCode, code, tt.verifier)
		})
	}
}

func TestExchangeBasicAuthRefusedWhereBodyRequired(t *testing.T) {
	srv, _ := newAcme(t)
	def := acme()
	def.OAuth.AuthStyle = oauth2.AuthStyleInHeader
	p, _ := oauthclient.NewProvider(def, env(map[string]string{
		"ACME_OAUTH_CLIENT_ID": clientID, "ACME_OAUTH_CLIENT_SECRET": clientSecret,
		"ACME_OAUTH_AUTH_URL": srv.URL + "/authorize", "ACME_OAUTH_TOKEN_URL": srv.URL + "/token",
	}), srv.Client())
	code := srv.Authorize(t, must(p.GenerateAuthorizationURL(redirectURI, "st", verifier)))
	_, err := p.ExchangeCodeForTokens(context.Background(), code, redirectURI, verifier)
	assertTokenError(t, err, 401, "invalid_client", code)
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// tokenEndpoint starts a token endpoint that always answers with status,
// content type and body, and a Provider using it.
func tokenEndpoint(t *testing.T, status int, contentType, body string) *oauthclient.Provider {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	p, err := oauthclient.NewProvider(acme(), env(map[string]string{
		"ACME_OAUTH_CLIENT_ID": clientID, "ACME_OAUTH_CLIENT_SECRET": clientSecret,
		"ACME_OAUTH_TOKEN_URL": srv.URL,
	}), srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTokenResponseShapes(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		wantStatus  int // 0: success
		wantCode    string
	}{
		{"json", 200, "application/json", `{"access_token":"a","token_type":"bearer"}`, 0, ""},
		{"form encoded", 200, "application/x-www-form-urlencoded", "access_token=a&token_type=bearer&expires_in=60", 0, ""},
		{"slack style failure", 200, "application/json", `{"ok":false,"error":"invalid_code"}`, 200, "invalid_code"},
		{"error with 200", 200, "application/json", `{"error":"invalid_grant"}`, 200, "invalid_grant"},
		{"dropbox style error object", 400, "application/json", `{"error":{".tag":"invalid_grant"}}`, 400, "invalid_grant"},
		{"html bad gateway", 502, "text/html", "<html>bad gateway</html>", 502, ""},
		{"not json", 200, "application/json", "access_token=a", 200, ""},
		{"json array", 200, "application/json", `["a"]`, 200, ""},
		{"json null", 200, "application/json", `null`, 200, ""},
		{"too large", 200, "application/json", `{"access_token":"` + strings.Repeat("a", 1<<20) + `"}`, 0, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tokenEndpoint(t, tt.status, tt.contentType, tt.body)
			raw, err := p.ExchangeCodeForTokens(context.Background(), "c", redirectURI, verifier)
			switch {
			case tt.wantCode == "too large":
				if err == nil || !strings.Contains(err.Error(), "larger than") {
					t.Errorf("got %v, want a size error", err)
				}
			case tt.wantStatus == 0:
				if err != nil || raw["access_token"] != "a" {
					t.Errorf("got %v, %v; want the access token", raw, err)
				}
			default:
				assertTokenError(t, err, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

func TestValidateTokensRefuses(t *testing.T) {
	_, p := newAcme(t)
	good := func() map[string]any {
		return map[string]any{"access_token": "a", "refresh_token": "r", "token_type": "Bearer", "expires_in": 3600.0, "scope": "profile mail.read"}
	}
	tests := []struct {
		name    string
		edit    func(map[string]any)
		field   string // "" means valid
		expires time.Duration
	}{
		{"valid", func(map[string]any) {}, "", time.Hour},
		{"expires_in as string", func(m map[string]any) { m["expires_in"] = "120" }, "", 2 * time.Minute},
		{"expires_in as int", func(m map[string]any) { m["expires_in"] = 60 }, "", time.Minute},
		{"no expires_in", func(m map[string]any) { delete(m, "expires_in") }, "", 0},
		{"no scope listed", func(m map[string]any) { delete(m, "scope") }, "", time.Hour},
		{"lower-case bearer", func(m map[string]any) { m["token_type"] = "bearer" }, "", time.Hour},
		{"no access token", func(m map[string]any) { delete(m, "access_token") }, "access_token", 0},
		{"empty access token", func(m map[string]any) { m["access_token"] = "" }, "access_token", 0},
		{"numeric access token", func(m map[string]any) { m["access_token"] = 12.0 }, "access_token", 0},
		{"no refresh token", func(m map[string]any) { delete(m, "refresh_token") }, "refresh_token", 0},
		{"no token type", func(m map[string]any) { delete(m, "token_type") }, "token_type", 0},
		{"mac token", func(m map[string]any) { m["token_type"] = "mac" }, "token_type", 0},
		{"zero expiry", func(m map[string]any) { m["expires_in"] = 0.0 }, "expires_in", 0},
		{"negative expiry", func(m map[string]any) { m["expires_in"] = -5.0 }, "expires_in", 0},
		{"fractional expiry", func(m map[string]any) { m["expires_in"] = 10.5 }, "expires_in", 0},
		{"absurd expiry", func(m map[string]any) { m["expires_in"] = 1e15 }, "expires_in", 0},
		{"text expiry", func(m map[string]any) { m["expires_in"] = "soon" }, "expires_in", 0},
		{"bool expiry", func(m map[string]any) { m["expires_in"] = true }, "expires_in", 0},
		{"scope not granted", func(m map[string]any) { m["scope"] = "profile" }, "scope", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := good()
			tt.edit(raw)
			creds, err := p.ValidateTokens(raw)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				want := time.Time{}
				if tt.expires > 0 {
					want = testNow.Add(tt.expires)
				}
				if !creds.ExpiresAt.Equal(want) {
					t.Errorf("ExpiresAt: got %v, want %v", creds.ExpiresAt, want)
				}
				return
			}
			var ite *oauthclient.InvalidTokensError
			if !errors.As(err, &ite) || ite.Field != tt.field {
				t.Fatalf("got %v, want *InvalidTokensError on %s", err, tt.field)
			}
			if creds.AccessToken != "" || creds.ClientSecret != "" {
				t.Errorf("got credentials %v with the error, want none", creds)
			}
		})
	}
}
