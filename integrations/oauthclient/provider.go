// Package oauthclient is the OAuth 2.0 client every OAuth integration
// shares: it builds a provider's authorization URL, exchanges a code for
// tokens, checks and parses token responses, refreshes and revokes tokens,
// with the deployment's client id, secret and endpoint overrides read from
// the environment. The connect flow (state, PKCE, the browser's callback)
// is the oauth package's; the instances of an integration refresh their
// credentials through a Refresher.
package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"searchsvc/integrations"
)

// defaultTimeout bounds each outbound request of a Provider built without
// an HTTP client.
const defaultTimeout = 30 * time.Second

// Provider performs an OAuth integration's static operations with this
// deployment's configuration. It is safe for concurrent use once built.
type Provider struct {
	domain string
	prefix string
	spec   *integrations.OAuthSpec
	scopes []string

	clientID     string
	clientSecret string
	authURL      string
	tokenURL     string
	revokeURL    string
	apiBaseURL   string

	client *http.Client

	// Now is the clock, time.Now by default. Tests set it before use.
	Now func() time.Time
}

// NewProvider builds the Provider of an OAuth definition. It reads, through
// getenv, <P>_OAUTH_CLIENT_ID and <P>_OAUTH_CLIENT_SECRET, and the optional
// overrides <P>_OAUTH_AUTH_URL, <P>_OAUTH_TOKEN_URL, <P>_OAUTH_REVOKE_URL
// and <P>_API_BASE_URL, where P is EnvPrefix(domain). A missing client id or
// secret is not an error here: the operations that need them report it.
// An override that is not an absolute http or https URL is an error naming
// the variable. A nil client means one with a 30-second timeout.
func NewProvider(def integrations.Definition, getenv func(string) string, client *http.Client) (*Provider, error) {
	if def.OAuth == nil {
		return nil, fmt.Errorf("%s: %w", def.Manifest.Domain, ErrNotOAuth)
	}
	if client == nil {
		client = &http.Client{Timeout: defaultTimeout}
	}
	prefix := integrations.EnvPrefix(def.Manifest.Domain)
	p := &Provider{
		domain:       def.Manifest.Domain,
		prefix:       prefix,
		spec:         def.OAuth,
		scopes:       slices.Clone(def.Manifest.Scopes),
		clientID:     strings.TrimSpace(getenv(prefix + "_OAUTH_CLIENT_ID")),
		clientSecret: strings.TrimSpace(getenv(prefix + "_OAUTH_CLIENT_SECRET")),
		client:       client,
		Now:          time.Now,
	}
	if def.OAuth.ScopeParam != nil {
		p.scopes = slices.Clone(def.OAuth.ScopeParam)
	}
	urls := []struct {
		name string
		def  string
		dst  *string
	}{
		{prefix + "_OAUTH_AUTH_URL", def.OAuth.AuthURL, &p.authURL},
		{prefix + "_OAUTH_TOKEN_URL", def.OAuth.TokenURL, &p.tokenURL},
		{prefix + "_OAUTH_REVOKE_URL", def.OAuth.RevokeURL, &p.revokeURL},
		{prefix + "_API_BASE_URL", def.OAuth.APIBaseURL, &p.apiBaseURL},
	}
	for _, u := range urls {
		v := strings.TrimSpace(getenv(u.name))
		if v == "" {
			*u.dst = u.def
			continue
		}
		if !absoluteHTTPURL(v) {
			return nil, fmt.Errorf("%s: want an absolute http or https URL", u.name)
		}
		*u.dst = strings.TrimSuffix(v, "/")
	}
	return p, nil
}

// Domain returns the integration domain the provider serves.
func (p *Provider) Domain() string { return p.domain }

// Client returns the HTTP client for requests to the provider.
func (p *Provider) Client() *http.Client { return p.client }

// APIBaseURL returns the base of the provider's API, without a trailing slash.
func (p *Provider) APIBaseURL() string { return p.apiBaseURL }

// RevokeURL returns the provider's revocation endpoint; empty if none.
func (p *Provider) RevokeURL() string { return p.revokeURL }

// now returns the provider's current time.
func (p *Provider) now() time.Time {
	if p.Now == nil {
		return time.Now()
	}
	return p.Now()
}

// Configured returns a *NotConfiguredError when the client id or secret is
// missing.
func (p *Provider) Configured() error {
	if p.clientID == "" {
		return &NotConfiguredError{Var: p.prefix + "_OAUTH_CLIENT_ID"}
	}
	if p.clientSecret == "" {
		return &NotConfiguredError{Var: p.prefix + "_OAUTH_CLIENT_SECRET"}
	}
	return nil
}

// GenerateAuthorizationURL returns the URL of the provider's authorization
// page: client id, redirect URI, state, the manifest's scopes, the
// provider's extra parameters and a PKCE S256 challenge derived from
// codeVerifier (RFC 7636: 43 to 128 characters of A-Z a-z 0-9 - . _ ~; see
// oauth2.GenerateVerifier). A missing client id or secret is a
// *NotConfiguredError.
func (p *Provider) GenerateAuthorizationURL(redirectURI, state, codeVerifier string) (string, error) {
	if err := p.Configured(); err != nil {
		return "", err
	}
	if !absoluteHTTPURL(redirectURI) {
		return "", errors.New("authorization URL: redirect URI is not an absolute http or https URL")
	}
	if state == "" {
		return "", errors.New("authorization URL: empty state")
	}
	if !validVerifier(codeVerifier) {
		return "", errors.New("authorization URL: code verifier does not follow RFC 7636")
	}
	cfg := oauth2.Config{
		ClientID:    p.clientID,
		RedirectURL: redirectURI,
		Endpoint:    oauth2.Endpoint{AuthURL: p.authURL},
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(codeVerifier)}
	if len(p.scopes) > 0 {
		sep := p.spec.ScopeSeparator
		if sep == "" {
			sep = " "
		}
		opts = append(opts, oauth2.SetAuthURLParam("scope", strings.Join(p.scopes, sep)))
	}
	for k, v := range p.spec.AuthParams {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	return cfg.AuthCodeURL(state, opts...), nil
}

// ExchangeCodeForTokens trades an authorization code for tokens at the
// provider's token endpoint, proving the PKCE verifier. redirectURI must be
// the one of the authorization request. It returns the provider's raw
// response (numbers as json.Number). A provider's refusal, including
// Slack's HTTP 200 {"ok":false}, is a *TokenError.
func (p *Provider) ExchangeCodeForTokens(ctx context.Context, code, redirectURI, codeVerifier string) (map[string]any, error) {
	if err := p.Configured(); err != nil {
		return nil, err
	}
	if code == "" {
		return nil, errors.New("token exchange: empty authorization code")
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirectURI},
		"code_verifier": {codeVerifier},
	}
	raw, err := p.tokenRequest(ctx, form)
	if err != nil {
		return nil, fmt.Errorf("token exchange: %w", err)
	}
	return raw, nil
}

// ValidateTokens turns a raw token response into credentials ready to be
// sealed and stored: the provider's tokens, client id and secret from the
// configuration, and ExpiresAt = now + expires_in. A response without an
// access token, without the refresh token the provider was asked for, with
// an invalid expires_in or token_type, or without a requested scope, is an
// *InvalidTokensError.
func (p *Provider) ValidateTokens(raw map[string]any) (integrations.Credentials, error) {
	creds, err := p.parseTokens(raw)
	if err != nil {
		return integrations.Credentials{}, err
	}
	if p.spec.RequireRefreshToken && creds.RefreshToken == "" {
		return integrations.Credentials{}, &InvalidTokensError{Field: "refresh_token", Reason: "missing"}
	}
	if p.spec.Tokens == nil {
		if err := CheckScopes(creds.Scope, p.scopes); err != nil {
			return integrations.Credentials{}, err
		}
	}
	return creds, nil
}

// parseTokens parses raw with the provider's parser and fills in the
// client id and secret.
func (p *Provider) parseTokens(raw map[string]any) (integrations.Credentials, error) {
	parse := p.spec.Tokens
	if parse == nil {
		parse = ParseTokenResponse
	}
	creds, err := parse(raw, p.now())
	if err != nil {
		return integrations.Credentials{}, err
	}
	if creds.AccessToken == "" {
		return integrations.Credentials{}, &InvalidTokensError{Field: "access_token", Reason: "missing"}
	}
	creds.ClientID = p.clientID
	creds.ClientSecret = p.clientSecret
	return creds, nil
}

// CheckScopes refuses a granted scope list (separated by spaces or commas)
// that lacks one of want, as when a user unticks a scope on Google's consent
// screen. An empty list means the provider did not say, and is accepted.
func CheckScopes(granted string, want []string) error {
	if granted == "" {
		return nil
	}
	have := strings.FieldsFunc(granted, func(r rune) bool { return r == ' ' || r == ',' })
	for _, s := range want {
		if !slices.Contains(have, s) {
			return &InvalidTokensError{Field: "scope", Reason: "lacks " + s}
		}
	}
	return nil
}

// Revoke revokes creds at the provider, for a disconnect. Credentials the
// provider already considers invalid count as revoked. A provider without
// a revocation endpoint answers ErrRevokeUnsupported.
func (p *Provider) Revoke(ctx context.Context, creds integrations.Credentials) error {
	if p.spec.Revoke == nil || p.revokeURL == "" {
		return ErrRevokeUnsupported
	}
	if err := p.spec.Revoke(ctx, integrations.Env{Credentials: creds, Provider: p, Now: p.Now}); err != nil {
		return fmt.Errorf("revoke %s token: %w", p.domain, err)
	}
	return nil
}

// String describes p without its client secret.
func (p *Provider) String() string {
	return fmt.Sprintf("Provider{domain:%s clientId:%q clientSecret:%s}", p.domain, p.clientID, redact(p.clientSecret))
}

// Format makes every fmt verb print p without its client secret.
func (p *Provider) Format(f fmt.State, _ rune) { fmt.Fprint(f, p.String()) }

// LogValue makes slog log p without its client secret.
func (p *Provider) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("domain", p.domain),
		slog.String("client_id", p.clientID),
		slog.String("client_secret", redact(p.clientSecret)),
	)
}

// redact shows whether a secret is set, never its value, as
// integrations.Credentials print theirs.
func redact(secret string) string {
	if secret == "" {
		return strconv.Quote("")
	}
	return "[redacted]"
}

// absoluteHTTPURL reports whether s is an absolute http or https URL.
func absoluteHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validVerifier reports whether v is a PKCE code verifier as RFC 7636 4.1
// defines it.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		ok := (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			c == '-' || c == '.' || c == '_' || c == '~'
		if !ok {
			return false
		}
	}
	return true
}
