package gmail_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"searchsvc/integrations"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/oauthtest"
)

const (
	clientID     = "123.apps.googleusercontent.com"
	clientSecret = "GOCSPX-secret"
	redirectURI  = "https://search.example/v1/user-integration/oauth/gmail/callback"
)

var now = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

// fakeGoogle is Google's token endpoint, revocation endpoint and the Gmail
// profile call.
type fakeGoogle struct {
	*oauthtest.Server
	profileStatus atomic.Int32 // forced status of the profile call; 0: real behaviour
	// mailbox, when set, answers the profile call with its history id.
	mailbox atomic.Pointer[gmailtest.Server]
}

func newFakeGoogle(t *testing.T, token func(oauthtest.Issued) map[string]any) *fakeGoogle {
	t.Helper()
	f := &fakeGoogle{Server: oauthtest.New(t, oauthtest.Options{
		ClientID: clientID, ClientSecret: clientSecret, Basic: true, Body: true,
		Scope:      gmail.Scope,
		AuthParams: map[string]string{"access_type": "offline", "prompt": "consent"},
		Token:      token,
	})}
	f.Mux.HandleFunc("GET /gmail/v1/users/me/profile", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if s := f.profileStatus.Load(); s != 0 {
			w.WriteHeader(int(s))
			return
		}
		if m := f.mailbox.Load(); m != nil {
			m.ServeProfile(w, r)
			return
		}
		if !f.Bearer(r) {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 401, "status": "UNAUTHENTICATED"}})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"emailAddress": "me@example.com", "messagesTotal": 10, "historyId": "7"})
	})
	f.Mux.HandleFunc("POST /revoke", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || !f.Kill(r.FormValue("token")) {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_token", "error_description": "Token expired or revoked"})
			return
		}
		w.Write([]byte("{}"))
	})
	return f
}

func (f *fakeGoogle) provider(t *testing.T) *oauthclient.Provider {
	t.Helper()
	vars := map[string]string{
		"GMAIL_OAUTH_CLIENT_ID":     clientID,
		"GMAIL_OAUTH_CLIENT_SECRET": clientSecret,
		"GMAIL_OAUTH_AUTH_URL":      f.URL + "/authorize",
		"GMAIL_OAUTH_TOKEN_URL":     f.URL + "/token",
		"GMAIL_OAUTH_REVOKE_URL":    f.URL + "/revoke",
		"GMAIL_API_BASE_URL":        f.URL,
	}
	p, err := oauthclient.NewProvider(gmail.Definition(), func(k string) string { return vars[k] }, f.Client())
	if err != nil {
		t.Fatal(err)
	}
	p.Now = func() time.Time { return now }
	return p
}

// connect runs the OAuth flow and returns the raw response and the error
// of ValidateTokens.
func connect(t *testing.T, f *fakeGoogle, p *oauthclient.Provider) (integrations.Credentials, error) {
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

func instance(t *testing.T, p *oauthclient.Provider, creds integrations.Credentials, clock func() time.Time, save func(context.Context, integrations.Credentials) error) integrations.Integration {
	t.Helper()
	in, err := gmail.Definition().New(integrations.Env{Credentials: creds, Provider: p, Now: clock, Save: save})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestDefinitionIsValid(t *testing.T) {
	if _, err := integrations.NewRegistry(gmail.Definition()); err != nil {
		t.Fatal(err)
	}
}

func TestAuthorizationURLUsesGoogle(t *testing.T) {
	p, err := oauthclient.NewProvider(gmail.Definition(), func(k string) string {
		return map[string]string{"GMAIL_OAUTH_CLIENT_ID": clientID, "GMAIL_OAUTH_CLIENT_SECRET": clientSecret}[k]
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := p.GenerateAuthorizationURL(redirectURI, "s", oauth2.GenerateVerifier())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"https://accounts.google.com/o/oauth2/auth?", "access_type=offline", "prompt=consent",
		"scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fgmail.readonly", "code_challenge_method=S256"} {
		if !strings.Contains(u, want) {
			t.Errorf("authorization URL %s lacks %s", u, want)
		}
	}
}

func TestConnectValidateRevoke(t *testing.T) {
	f := newFakeGoogle(t, nil)
	p := f.provider(t)
	creds, err := connect(t, f, p)
	if err != nil {
		t.Fatalf("ValidateTokens: %v", err)
	}
	if creds.RefreshToken == "" || creds.ClientID != clientID || !creds.ExpiresAt.Equal(now.Add(3599*time.Second)) {
		t.Errorf("credentials: got %v, want a refresh token, the client id and a 3599 s expiry", creds)
	}
	ctx := context.Background()
	in := instance(t, p, creds, func() time.Time { return now }, nil)
	if err := in.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := in.ValidateAuthentication(ctx); !ok || err != nil {
		t.Fatalf("ValidateAuthentication: got %v, %v; want true", ok, err)
	}

	if err := p.Revoke(ctx, creds); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if ok, err := in.ValidateAuthentication(ctx); ok || err != nil {
		t.Errorf("after revoke: got %v, %v; want false", ok, err)
	}
	if err := p.Revoke(ctx, creds); err != nil {
		t.Errorf("second Revoke: got %v, want nil (already revoked)", err)
	}
}

func TestRefusedTokenResponses(t *testing.T) {
	tests := []struct {
		name  string
		token func(oauthtest.Issued) map[string]any
		field string
	}{
		{"no refresh token (consent given before, no prompt)", func(i oauthtest.Issued) map[string]any {
			return map[string]any{"access_token": i.AccessToken, "token_type": "Bearer", "expires_in": 3599, "scope": i.Scope}
		}, "refresh_token"},
		{"gmail scope unticked on the consent screen", func(i oauthtest.Issued) map[string]any {
			return map[string]any{"access_token": i.AccessToken, "refresh_token": i.RefreshToken, "token_type": "Bearer", "expires_in": 3599, "scope": "openid"}
		}, "scope"},
		{"no expiry", func(i oauthtest.Issued) map[string]any {
			return map[string]any{"access_token": i.AccessToken, "refresh_token": i.RefreshToken, "token_type": "Bearer", "expires_in": 0, "scope": i.Scope}
		}, "expires_in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeGoogle(t, tt.token)
			_, err := connect(t, f, f.provider(t))
			var ite *oauthclient.InvalidTokensError
			if !errors.As(err, &ite) || ite.Field != tt.field {
				t.Errorf("got %v, want *InvalidTokensError on %s", err, tt.field)
			}
		})
	}
}

func TestExchangeWithWrongVerifier(t *testing.T) {
	f := newFakeGoogle(t, nil)
	p := f.provider(t)
	authURL, _ := p.GenerateAuthorizationURL(redirectURI, "state", oauth2.GenerateVerifier())
	_, err := p.ExchangeCodeForTokens(context.Background(), f.Authorize(t, authURL), redirectURI, oauth2.GenerateVerifier())
	var te *oauthclient.TokenError
	if !errors.As(err, &te) || te.Status != 400 || te.Code != "invalid_grant" {
		t.Errorf("got %v, want 400 invalid_grant", err)
	}
}

func TestExpiredTokenIsRefreshed(t *testing.T) {
	f := newFakeGoogle(t, nil)
	p := f.provider(t)
	creds, err := connect(t, f, p)
	if err != nil {
		t.Fatal(err)
	}
	later := now.Add(2 * time.Hour)
	p.Now = func() time.Time { return later }
	var saved integrations.Credentials
	in := instance(t, p, creds, func() time.Time { return later }, func(_ context.Context, c integrations.Credentials) error {
		saved = c
		return nil
	})
	if ok, err := in.ValidateAuthentication(context.Background()); !ok || err != nil {
		t.Fatalf("ValidateAuthentication with an expired token: got %v, %v; want true after refresh", ok, err)
	}
	if saved.AccessToken == "" || saved.AccessToken == creds.AccessToken || saved.RefreshToken != creds.RefreshToken {
		t.Errorf("saved: got %v, want a new access token and the same refresh token", saved)
	}

	// Once the user revokes access, the refresh fails and the check says false.
	f.Kill(creds.RefreshToken)
	evenLater := later.Add(2 * time.Hour)
	p.Now = func() time.Time { return evenLater }
	in = instance(t, p, saved, func() time.Time { return evenLater }, nil)
	if ok, err := in.ValidateAuthentication(context.Background()); ok || err != nil {
		t.Errorf("revoked grant: got %v, %v; want false, nil", ok, err)
	}
}

func TestProfileFailureIsAnError(t *testing.T) {
	f := newFakeGoogle(t, nil)
	p := f.provider(t)
	creds, err := connect(t, f, p)
	if err != nil {
		t.Fatal(err)
	}
	f.profileStatus.Store(http.StatusServiceUnavailable)
	in := instance(t, p, creds, func() time.Time { return now }, nil)
	ok, err := in.ValidateAuthentication(context.Background())
	if ok || err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("got %v, %v; want an error naming 503", ok, err)
	}
	if strings.Contains(err.Error(), creds.AccessToken) {
		t.Error("error leaks the access token")
	}
}

func TestUnknownTask(t *testing.T) {
	f := newFakeGoogle(t, nil)
	in := instance(t, f.provider(t), integrations.Credentials{AccessToken: "a"}, nil, nil)
	if _, err := in.RunTask(context.Background(), integrations.Task{Type: "dance"}); !errors.Is(err, integrations.ErrUnsupportedTask) {
		t.Errorf("RunTask: got %v, want ErrUnsupportedTask", err)
	}
	if err := in.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}
