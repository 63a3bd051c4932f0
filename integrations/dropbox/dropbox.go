// Package dropbox connects a Dropbox account, read-only, through Dropbox's
// OAuth 2.0 (authorization code with PKCE, offline access: short-lived
// access tokens and a long-lived refresh token).
package dropbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/endpoints"

	"searchsvc/integrations"
	"searchsvc/integrations/extract"
	"searchsvc/integrations/oauthclient"
)

// Dropbox's names and addresses.
const (
	// Domain is the integration domain; its variables are DROPBOX_….
	Domain = "dropbox"
	// APIBaseURL is Dropbox's RPC API (override: DROPBOX_API_BASE_URL).
	APIBaseURL = "https://api.dropboxapi.com"
	// RevokeURL is /2/auth/token/revoke (override: DROPBOX_OAUTH_REVOKE_URL).
	RevokeURL = APIBaseURL + "/2/auth/token/revoke"
)

// scopes are the read-only scopes requested; the Dropbox app must have them
// enabled in its permissions.
var scopes = []string{"account_info.read", "files.metadata.read", "files.content.read"}

// FieldAccountID is the Credentials.Fields key of the Dropbox account id.
const FieldAccountID = "accountId"

// Definition returns Dropbox's definition with the default limits.
func Definition() integrations.Definition { return NewDefinition(Config{}) }

// NewDefinition returns Dropbox's definition with the sync's limits cfg.
func NewDefinition(cfg Config) integrations.Definition {
	cfg = cfg.withDefaults()
	return integrations.Definition{
		Manifest: integrations.Manifest{
			Domain:      Domain,
			DisplayName: "Dropbox",
			Kind:        integrations.KindFiles,
			AuthType:    integrations.AuthOAuth,
			Scopes:      slices.Clone(scopes),
		},
		OAuth: &integrations.OAuthSpec{
			AuthURL:             endpoints.Dropbox.AuthURL,
			TokenURL:            endpoints.Dropbox.TokenURL,
			RevokeURL:           RevokeURL,
			APIBaseURL:          APIBaseURL,
			AuthStyle:           oauth2.AuthStyleInHeader,
			AuthParams:          map[string]string{"token_access_type": "offline"},
			RequireRefreshToken: true,
			Tokens:              parseTokens,
			Revoke:              revoke,
		},
		New: func(env integrations.Env) (integrations.Integration, error) { return newAccount(env, cfg) },
	}
}

// parseTokens reads Dropbox's RFC 6749 answer and keeps its account id.
func parseTokens(raw map[string]any, now time.Time) (integrations.Credentials, error) {
	creds, err := oauthclient.ParseTokenResponse(raw, now)
	if err != nil {
		return integrations.Credentials{}, err
	}
	if err := oauthclient.CheckScopes(creds.Scope, scopes); err != nil {
		return integrations.Credentials{}, err
	}
	if id, ok := raw["account_id"].(string); ok && id != "" {
		creds.Fields = map[string]string{FieldAccountID: id}
	}
	return creds, nil
}

// rpc POSTs to a Dropbox RPC endpoint that takes no argument: no body and
// no Content-Type, as Dropbox requires. It returns the status.
func rpc(ctx context.Context, client *http.Client, url, token string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}

// revoke revokes the grant: revoking an access token revokes its refresh
// token too. An expired access token is refreshed first, since revocation
// needs a working one; a grant Dropbox no longer knows counts as revoked.
func revoke(ctx context.Context, env integrations.Env) error {
	p := env.Provider
	creds, err := oauthclient.NewRefresher(env).Credentials(ctx)
	if errors.Is(err, integrations.ErrReauthRequired) {
		return nil
	}
	if err != nil {
		return err
	}
	status, err := rpc(ctx, p.Client(), p.RevokeURL(), creds.AccessToken)
	switch {
	case err != nil:
		return err
	case status == http.StatusOK, status == http.StatusUnauthorized:
		return nil
	default:
		return &oauthclient.TokenError{Status: status}
	}
}

// account is one connected Dropbox account.
type account struct {
	oauthclient.OAuthConn // Initialize refreshes the short-lived access token
	sync                  *syncer
}

func newAccount(env integrations.Env, cfg Config) (integrations.Integration, error) {
	conn, err := oauthclient.NewOAuthConn(Domain, env)
	if err != nil {
		return nil, err
	}
	a := &account{OAuthConn: conn}
	token := func(ctx context.Context) (string, error) {
		creds, err := conn.Tokens.Credentials(ctx)
		return creds.AccessToken, err
	}
	known, state := env.Known, env.State
	if known == nil {
		known = func(string) bool { return false }
	}
	if state == nil {
		state = func(string) string { return "" }
	}
	a.sync = &syncer{
		api: NewClient(conn.Client, conn.API, token, env.Now), ext: extract.New(cfg.Extract), max: cfg.MaxFileSize,
		known: known, stored: env.ProviderIDs, state: state,
	}
	return a, nil
}

// ValidateAuthentication calls users/get_current_account.
func (a *account) ValidateAuthentication(ctx context.Context) (bool, error) {
	return a.Tokens.Validate(ctx, func(ctx context.Context, creds integrations.Credentials) (bool, error) {
		status, err := rpc(ctx, a.Client, a.API+"/2/users/get_current_account", creds.AccessToken)
		switch {
		case err != nil:
			return false, fmt.Errorf("dropbox get_current_account: %w", err)
		case status == http.StatusOK:
			return true, nil
		case status == http.StatusUnauthorized:
			return false, nil
		default:
			return false, fmt.Errorf("dropbox get_current_account: provider answered %d", status)
		}
	})
}

// Shutdown has nothing to release: requests use the shared HTTP client.
func (a *account) Shutdown(context.Context) error { return nil }
