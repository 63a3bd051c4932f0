package integrations

import (
	"context"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// OAuthSpec describes a provider's OAuth 2.0 endpoints and quirks. URLs are
// the provider's real ones; each can be overridden per deployment (see
// oauthclient.NewProvider).
type OAuthSpec struct {
	AuthURL    string
	TokenURL   string
	RevokeURL  string // empty when the provider has no revocation endpoint
	APIBaseURL string // base of the provider's API, without a trailing slash

	// AuthStyle is how the client authenticates at the token endpoint:
	// oauth2.AuthStyleInParams (client_id and client_secret in the form) or
	// oauth2.AuthStyleInHeader (HTTP Basic). The zero value means Basic,
	// which RFC 6749 requires every provider to accept.
	AuthStyle oauth2.AuthStyle
	// ScopeSeparator joins Manifest.Scopes in the scope parameter; empty
	// means a space, as RFC 6749 says. Slack wants a comma.
	ScopeSeparator string
	// ScopeParam, when not nil, is what the scope parameter asks for
	// instead of Manifest.Scopes: a provider that asks for more scopes in
	// other parameters (Slack's user_scope) lists them all in its
	// manifest, for the catalogue, and only some in scope.
	ScopeParam []string
	// AuthParams are extra authorization request parameters, such as
	// access_type=offline.
	AuthParams map[string]string
	// RequireRefreshToken makes oauthclient's ValidateTokens refuse a
	// response without a refresh token, for providers asked for offline
	// access.
	RequireRefreshToken bool

	// Tokens turns a raw token response into credentials, without the
	// client id and secret, checking the granted scopes (see
	// oauthclient.CheckScopes). Nil means oauthclient.ParseTokenResponse
	// (RFC 6749) and a check that every scope of the manifest was granted.
	Tokens func(raw map[string]any, now time.Time) (Credentials, error)
	// Revoke revokes env.Credentials at the provider, reaching it through
	// env.Provider, with env.Now as the clock. Nil when RevokeURL is empty.
	Revoke func(ctx context.Context, env Env) error
}

// OAuthClient is what an OAuth integration's instance, and its
// OAuthSpec.Revoke, use of the integration's OAuth client
// (oauthclient.Provider) built with this deployment's configuration.
type OAuthClient interface {
	// Client returns the HTTP client for requests to the provider.
	Client() *http.Client
	// APIBaseURL returns the base of the provider's API, without a
	// trailing slash.
	APIBaseURL() string
	// RevokeURL returns the provider's revocation endpoint; empty if none.
	RevokeURL() string
	// Refresh trades c's refresh token for a new access token. A refusal
	// of the refresh token wraps ErrReauthRequired.
	Refresh(ctx context.Context, c Credentials) (Credentials, error)
}
