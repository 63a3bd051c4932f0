// Package gmail connects a Gmail mailbox, read-only, through Google's
// OAuth 2.0 (authorization code with PKCE, offline access), and syncs its
// messages through the Gmail REST API (tasks.go).
package gmail

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/endpoints"

	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
)

// Google's names and addresses for Gmail.
const (
	// Domain is the integration domain; its variables are GMAIL_….
	Domain = "gmail"
	// Scope reads mail and settings, and nothing else.
	Scope = "https://www.googleapis.com/auth/gmail.readonly"
	// APIBaseURL is the Gmail API (override: GMAIL_API_BASE_URL).
	APIBaseURL = "https://gmail.googleapis.com"
	// RevokeURL is Google's token revocation endpoint (override:
	// GMAIL_OAUTH_REVOKE_URL).
	RevokeURL = "https://oauth2.googleapis.com/revoke"
)

// Definition returns Gmail's definition. Google issues a refresh token
// only with access_type=offline, and again on a later consent only with
// prompt=consent; a response without one is refused.
func Definition() integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{
			Domain:      Domain,
			DisplayName: "Gmail",
			Kind:        integrations.KindEmail,
			AuthType:    integrations.AuthOAuth,
			Scopes:      []string{Scope},
		},
		OAuth: &integrations.OAuthSpec{
			AuthURL:             endpoints.Google.AuthURL,
			TokenURL:            endpoints.Google.TokenURL,
			RevokeURL:           RevokeURL,
			APIBaseURL:          APIBaseURL,
			AuthStyle:           oauth2.AuthStyleInParams,
			AuthParams:          map[string]string{"access_type": "offline", "prompt": "consent"},
			RequireRefreshToken: true,
			Revoke:              revoke,
		},
		New: newMailbox,
	}
}

// revoke revokes the grant at Google: revoking the refresh token also
// revokes the access tokens issued from it. A token Google no longer knows
// counts as revoked.
func revoke(ctx context.Context, env integrations.Env) error {
	p, creds := env.Provider, env.Credentials
	token := creds.RefreshToken
	if token == "" {
		token = creds.AccessToken
	}
	if token == "" {
		return nil
	}
	form := url.Values{"token": {token}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.RevokeURL(), strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	te := oauthclient.ReadError(resp)
	if te.Code == "invalid_token" {
		return nil
	}
	return te
}

// mailbox is one connected Gmail account.
type mailbox struct {
	oauthclient.OAuthConn // Initialize refreshes the access token if it expired
	now                   func() time.Time
	known                 func(providerID string) bool // nil: nothing is known
	state                 func(key string) string      // the record's sync state (Env.State); nil: none
	providerIDs           func() ([]string, error)     // the stored messages (Env.ProviderIDs); nil: none
}

func newMailbox(env integrations.Env) (integrations.Integration, error) {
	conn, err := oauthclient.NewOAuthConn(Domain, env)
	if err != nil {
		return nil, err
	}
	now := env.Now
	if now == nil {
		now = time.Now
	}
	return &mailbox{OAuthConn: conn, now: now, known: env.Known, state: env.State, providerIDs: env.ProviderIDs}, nil
}

// ValidateAuthentication asks for the mailbox profile: Google answers 401
// to a revoked or expired token.
func (m *mailbox) ValidateAuthentication(ctx context.Context) (bool, error) {
	return m.Tokens.Validate(ctx, m.profile)
}

func (m *mailbox) profile(ctx context.Context, creds integrations.Credentials) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.API+"/gmail/v1/users/me/profile", nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+creds.AccessToken)
	resp, err := m.Client.Do(req)
	if err != nil {
		return false, fmt.Errorf("gmail profile: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return true, nil
	case http.StatusUnauthorized:
		return false, nil
	default:
		return false, fmt.Errorf("gmail profile: %w", m.apiError(resp))
	}
}

// Shutdown has nothing to release: requests use the shared HTTP client.
func (m *mailbox) Shutdown(context.Context) error { return nil }
