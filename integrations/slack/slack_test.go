package slack_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/oauthtest"
	"searchsvc/integrations/slack"
)

const (
	clientID     = "1234567890.0987654321"
	clientSecret = "slack-client-secret"
	redirectURI  = "https://search.example/v1/user-integration/oauth/slack/callback"
)

var now = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

var (
	botScope  = strings.Join(slack.Definition().OAuth.ScopeParam, ",")
	userScope = slack.Definition().OAuth.AuthParams["user_scope"]
)

// fakeSlack is slack.com: oauth.v2.access, auth.test and auth.revoke, all
// answering HTTP 200 with "ok" true or false, as Slack does.
type fakeSlack struct {
	*oauthtest.Server
	testStatus atomic.Int32 // forced HTTP status of auth.test; 0: real behaviour
}

// slackError turns the fake's RFC 6749 errors into Slack's words.
func slackError(code, desc string) (int, map[string]any) {
	switch {
	case code == "invalid_client":
		code = "bad_client_secret"
	case strings.Contains(desc, "redirect_uri"):
		code = "bad_redirect_uri"
	case code == "invalid_grant" && strings.Contains(desc, "expired or revoked"):
		code = "invalid_refresh_token"
	case code == "invalid_grant":
		code = "invalid_code"
	}
	return http.StatusOK, map[string]any{"ok": false, "error": code}
}

// Token response shapes, as Slack documents them.
type shape func(f *fakeSlack, i oauthtest.Issued) map[string]any

// both: a bot token at the top level and the user token under authed_user.
func both(f *fakeSlack, i oauthtest.Issued) map[string]any {
	bot := "xoxb-" + rand.Text()
	f.Issue(bot)
	return map[string]any{
		"ok": true, "app_id": "A0KRD7HC3", "token_type": "bot", "access_token": bot, "scope": botScope,
		"bot_user_id": "U0KRQLJ9H", "team": map[string]any{"id": "T9TK3CUKW", "name": "Softball"},
		"enterprise": nil, "is_enterprise_install": false,
		"authed_user": map[string]any{"id": "U1234", "scope": userScope, "access_token": i.AccessToken, "token_type": "user"},
	}
}

// userOnly: an app with user scopes only has no top-level token.
func userOnly(_ *fakeSlack, i oauthtest.Issued) map[string]any {
	return map[string]any{
		"ok": true, "app_id": "A0KRD7HC3", "team": map[string]any{"id": "T9TK3CUKW"},
		"authed_user": map[string]any{"id": "U1234", "scope": userScope, "access_token": i.AccessToken, "token_type": "user"},
	}
}

// botOnly: the user granted no user scope; authed_user holds only an id.
func botOnly(_ *fakeSlack, i oauthtest.Issued) map[string]any {
	return map[string]any{
		"ok": true, "app_id": "A0KRD7HC3", "token_type": "bot", "access_token": i.AccessToken, "scope": botScope,
		"team": map[string]any{"id": "T9TK3CUKW"}, "authed_user": map[string]any{"id": "U1234"},
	}
}

// rotating: a user token with token rotation on; a refresh answers with
// the new token at the top level.
func rotating(_ *fakeSlack, i oauthtest.Issued) map[string]any {
	if i.GrantType == "refresh_token" {
		return map[string]any{"ok": true, "access_token": i.AccessToken, "token_type": "user", "scope": userScope, "expires_in": 43200,
			"team": map[string]any{"id": "T9TK3CUKW"}}
	}
	return map[string]any{
		"ok": true, "app_id": "A0KRD7HC3", "team": map[string]any{"id": "T9TK3CUKW"},
		"authed_user": map[string]any{"id": "U1234", "scope": userScope, "access_token": i.AccessToken, "token_type": "user",
			"refresh_token": i.RefreshToken, "expires_in": 43200},
	}
}

func newFakeSlack(t *testing.T, tokens shape) *fakeSlack {
	t.Helper()
	f := &fakeSlack{}
	f.Server = oauthtest.New(t, oauthtest.Options{
		ClientID: clientID, ClientSecret: clientSecret, Basic: true, Body: true,
		Scope:      botScope,
		AuthParams: map[string]string{"user_scope": userScope},
		Token:      func(i oauthtest.Issued) map[string]any { return tokens(f, i) },
		Error:      slackError,
	})
	answer := func(w http.ResponseWriter, body map[string]any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(body)
	}
	f.Mux.HandleFunc("POST /auth.test", func(w http.ResponseWriter, r *http.Request) {
		if s := f.testStatus.Load(); s != 0 {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(int(s))
			return
		}
		if !f.Bearer(r) {
			answer(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		answer(w, map[string]any{"ok": true, "team_id": "T9TK3CUKW", "user_id": "U1234"})
	})
	f.Mux.HandleFunc("POST /auth.revoke", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !f.Bearer(r) || !f.Kill(tok) {
			answer(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		answer(w, map[string]any{"ok": true, "revoked": true})
	})
	return f
}

func (f *fakeSlack) provider(t *testing.T) *oauthclient.Provider {
	t.Helper()
	vars := map[string]string{
		"SLACK_OAUTH_CLIENT_ID":     clientID,
		"SLACK_OAUTH_CLIENT_SECRET": clientSecret,
		"SLACK_OAUTH_AUTH_URL":      f.URL + "/authorize",
		"SLACK_OAUTH_TOKEN_URL":     f.URL + "/token",
		"SLACK_OAUTH_REVOKE_URL":    f.URL + "/auth.revoke",
		"SLACK_API_BASE_URL":        f.URL,
	}
	p, err := oauthclient.NewProvider(slack.Definition(), func(k string) string { return vars[k] }, f.Client())
	if err != nil {
		t.Fatal(err)
	}
	p.Now = func() time.Time { return now }
	return p
}

func connect(t *testing.T, f *fakeSlack, p *oauthclient.Provider) (integrations.Credentials, error) {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	authURL, err := p.GenerateAuthorizationURL(redirectURI, "state", verifier)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.ExchangeCodeForTokens(context.Background(), f.Authorize(t, authURL), redirectURI, verifier)
	if err != nil {
		t.Fatalf("ExchangeCodeForTokens: %v", err)
	}
	return p.ValidateTokens(raw)
}

func validate(t *testing.T, p *oauthclient.Provider, creds integrations.Credentials, clock func() time.Time, save func(context.Context, integrations.Credentials) error) (bool, error) {
	t.Helper()
	in, err := slack.Definition().New(integrations.Env{Credentials: creds, Provider: p, Now: clock, Save: save})
	if err != nil {
		t.Fatal(err)
	}
	return in.ValidateAuthentication(context.Background())
}

func TestDefinitionIsValid(t *testing.T) {
	if _, err := integrations.NewRegistry(slack.Definition()); err != nil {
		t.Fatal(err)
	}
}

func TestAuthorizationURL(t *testing.T) {
	p, _ := oauthclient.NewProvider(slack.Definition(), func(k string) string {
		return map[string]string{"SLACK_OAUTH_CLIENT_ID": clientID, "SLACK_OAUTH_CLIENT_SECRET": clientSecret}[k]
	}, nil)
	u, err := p.GenerateAuthorizationURL(redirectURI, "s", oauth2.GenerateVerifier())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"https://slack.com/oauth/v2/authorize?", "scope=channels%3Ahistory%2Cchannels%3Aread%2Cusers%3Aread",
		"user_scope=channels%3Ahistory%2Cchannels%3Aread%2Cgroups%3Ahistory%2Cgroups%3Aread%2Cim%3Ahistory%2Cim%3Aread%2Cmpim%3Ahistory%2Cmpim%3Aread%2Csearch%3Aread%2Cusers%3Aread",
		"code_challenge_method=S256"} {
		if !strings.Contains(u, want) {
			t.Errorf("authorization URL %s lacks %s", u, want)
		}
	}
}

// TestCatalogueListsEveryScope reads the scopes the authorization URL asks
// for, in scope and user_scope, and wants the catalogue to list exactly
// those, each once.
func TestCatalogueListsEveryScope(t *testing.T) {
	p, _ := oauthclient.NewProvider(slack.Definition(), func(k string) string {
		return map[string]string{"SLACK_OAUTH_CLIENT_ID": clientID, "SLACK_OAUTH_CLIENT_SECRET": clientSecret}[k]
	}, nil)
	raw, err := p.GenerateAuthorizationURL(redirectURI, "s", oauth2.GenerateVerifier())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	for _, param := range []string{"scope", "user_scope"} {
		for _, s := range strings.Split(u.Query().Get(param), ",") {
			if s != "" {
				asked[s] = true
			}
		}
	}
	listed := map[string]bool{}
	for _, s := range slack.Definition().Manifest.Scopes {
		if listed[s] {
			t.Errorf("the catalogue lists %s twice", s)
		}
		listed[s] = true
	}
	for s := range asked {
		if !listed[s] {
			t.Errorf("the authorization URL asks for %s, which the catalogue does not list", s)
		}
	}
	for s := range listed {
		if !asked[s] {
			t.Errorf("the catalogue lists %s, which the authorization URL does not ask for", s)
		}
	}
	for _, s := range []string{"channels:read", "groups:read", "im:read", "mpim:read", "im:history", "users:read"} {
		if !asked[s] {
			t.Errorf("the authorization URL does not ask for %s, which the sync's API calls need", s)
		}
	}
}

func TestTokenShapes(t *testing.T) {
	tests := []struct {
		name      string
		shape     shape
		tokenType string
		botField  bool
	}{
		{"bot and user tokens", both, "user", true},
		{"user token only", userOnly, "user", false},
		{"bot token only", botOnly, "bot", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSlack(t, tt.shape)
			p := f.provider(t)
			creds, err := connect(t, f, p)
			if err != nil {
				t.Fatalf("ValidateTokens: %v", err)
			}
			if creds.TokenType != tt.tokenType || !f.Live(creds.AccessToken) {
				t.Errorf("access token: got type %q (live %v), want a live %s token", creds.TokenType, f.Live(creds.AccessToken), tt.tokenType)
			}
			if got := creds.Fields[slack.FieldBotAccessToken] != ""; got != tt.botField {
				t.Errorf("bot token in fields: got %v, want %v", got, tt.botField)
			}
			if creds.Fields[slack.FieldTeamID] != "T9TK3CUKW" || creds.Fields[slack.FieldUserID] != "U1234" || creds.ClientID != clientID {
				t.Errorf("fields: got %v, want team and user ids and the client id", creds)
			}
			if !creds.ExpiresAt.IsZero() {
				t.Errorf("ExpiresAt: got %v, want none without token rotation", creds.ExpiresAt)
			}
			if ok, err := validate(t, p, creds, nil, nil); !ok || err != nil {
				t.Errorf("auth.test: got %v, %v; want true", ok, err)
			}

			if err := p.Revoke(context.Background(), creds); err != nil {
				t.Fatalf("Revoke: %v", err)
			}
			for _, tok := range []string{creds.AccessToken, creds.Fields[slack.FieldBotAccessToken]} {
				if tok != "" && f.Live(tok) {
					t.Error("a token is still live after Revoke")
				}
			}
			if ok, err := validate(t, p, creds, nil, nil); ok || err != nil {
				t.Errorf("auth.test after revoke: got %v, %v; want false", ok, err)
			}
			if err := p.Revoke(context.Background(), creds); err != nil {
				t.Errorf("second Revoke: got %v, want nil", err)
			}
		})
	}
}

func TestExchangeFailureIsHTTP200(t *testing.T) {
	f := newFakeSlack(t, both)
	p := f.provider(t)
	verifier := oauth2.GenerateVerifier()
	code := f.Authorize(t, must(p.GenerateAuthorizationURL(redirectURI, "s", verifier)))

	// A wrong redirect URI is refused without using up the code…
	_, err := p.ExchangeCodeForTokens(context.Background(), code, redirectURI+"/x", verifier)
	assertSlackError(t, err, "bad_redirect_uri")
	if _, err := p.ExchangeCodeForTokens(context.Background(), code, redirectURI, verifier); err != nil {
		t.Fatal(err)
	}
	// …and a used code is refused as invalid.
	_, err = p.ExchangeCodeForTokens(context.Background(), code, redirectURI, verifier)
	assertSlackError(t, err, "invalid_code")
}

func assertSlackError(t *testing.T, err error, want string) {
	t.Helper()
	var te *oauthclient.TokenError
	if !errors.As(err, &te) || te.Status != http.StatusOK || te.Code != want {
		t.Errorf("got %v, want a TokenError 200 %s", err, want)
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

func TestValidateTokensRefuses(t *testing.T) {
	p := newFakeSlack(t, both).provider(t)
	user := func(extra map[string]any) map[string]any {
		m := map[string]any{"id": "U1", "access_token": "xoxp-1", "token_type": "user", "scope": userScope}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name  string
		raw   map[string]any
		field string
	}{
		{"not ok", map[string]any{"ok": false, "error": "invalid_code"}, "ok"},
		{"ok missing", map[string]any{"authed_user": user(nil)}, "ok"},
		{"no token at all", map[string]any{"ok": true, "authed_user": map[string]any{"id": "U1"}}, "access_token"},
		{"top-level token of unknown type", map[string]any{"ok": true, "access_token": "x", "token_type": "app", "scope": botScope}, "token_type"},
		{"user token without type", map[string]any{"ok": true, "authed_user": user(map[string]any{"token_type": nil})}, "token_type"},
		{"user scope missing search:read", map[string]any{"ok": true, "authed_user": user(map[string]any{"scope": "users:read"})}, "scope"},
		{"bot scope missing", map[string]any{"ok": true, "access_token": "xoxb", "token_type": "bot", "scope": "users:read"}, "scope"},
		{"absurd rotation expiry", map[string]any{"ok": true, "authed_user": user(map[string]any{"expires_in": -1})}, "expires_in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.ValidateTokens(tt.raw)
			var ite *oauthclient.InvalidTokensError
			if !errors.As(err, &ite) || ite.Field != tt.field {
				t.Errorf("got %v, want *InvalidTokensError on %s", err, tt.field)
			}
		})
	}
}

func TestRotatingTokenRefreshed(t *testing.T) {
	f := newFakeSlack(t, rotating)
	p := f.provider(t)
	creds, err := connect(t, f, p)
	if err != nil {
		t.Fatal(err)
	}
	if creds.RefreshToken == "" || !creds.ExpiresAt.Equal(now.Add(12*time.Hour)) {
		t.Fatalf("credentials: got %v, want a refresh token and a 12 h expiry", creds)
	}
	later := now.Add(13 * time.Hour)
	p.Now = func() time.Time { return later }
	var saved integrations.Credentials
	ok, err := validate(t, p, creds, func() time.Time { return later }, func(_ context.Context, c integrations.Credentials) error {
		saved = c
		return nil
	})
	if !ok || err != nil {
		t.Fatalf("after expiry: got %v, %v; want true after a refresh", ok, err)
	}
	if saved.AccessToken == creds.AccessToken || saved.TokenType != "user" || saved.RefreshToken != creds.RefreshToken ||
		saved.Fields[slack.FieldUserID] != "U1234" || !saved.ExpiresAt.Equal(later.Add(12*time.Hour)) {
		t.Errorf("saved: got %v, want a new user token keeping refresh token and fields", saved)
	}

	// A revoked grant ends as "does not work", not as an error.
	f.Kill(creds.RefreshToken)
	evenLater := later.Add(13 * time.Hour)
	p.Now = func() time.Time { return evenLater }
	if ok, err := validate(t, p, saved, func() time.Time { return evenLater }, nil); ok || err != nil {
		t.Errorf("revoked: got %v, %v; want false, nil", ok, err)
	}
	if err := p.Revoke(context.Background(), saved); err != nil {
		t.Errorf("Revoke of an already revoked grant: got %v, want nil", err)
	}
}

func TestAuthTestRateLimited(t *testing.T) {
	f := newFakeSlack(t, both)
	p := f.provider(t)
	creds, err := connect(t, f, p)
	if err != nil {
		t.Fatal(err)
	}
	f.testStatus.Store(http.StatusTooManyRequests)
	ok, err := validate(t, p, creds, nil, nil)
	if ok || err == nil || !strings.Contains(err.Error(), "429") || strings.Contains(err.Error(), creds.AccessToken) {
		t.Errorf("got %v, %v; want an error naming 429 without the token", ok, err)
	}
}
