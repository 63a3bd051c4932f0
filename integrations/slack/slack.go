// Package slack connects a Slack workspace through Slack's OAuth v2 ("Sign
// in with Slack" apps): a user token to read what the user can read, and a
// bot token when the app also asks for bot scopes.
package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/endpoints"

	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
)

// Slack's names and addresses.
const (
	// Domain is the integration domain; its variables are SLACK_….
	Domain = "slack"
	// APIBaseURL is Slack's Web API (override: SLACK_API_BASE_URL).
	APIBaseURL = "https://slack.com/api"
	// RevokeURL is auth.revoke (override: SLACK_OAUTH_REVOKE_URL).
	RevokeURL = APIBaseURL + "/auth.revoke"
)

// botScopes are requested in the scope parameter, for the app's bot.
var botScopes = []string{"channels:history", "channels:read", "users:read"}

// userScopes are requested in the user_scope parameter: reading, as the
// user, the conversations the user is in. Listing them
// (conversations.list with every type) takes the four :read scopes,
// their messages the four :history ones, names users:read.
var userScopes = []string{
	"channels:history", "channels:read", "groups:history", "groups:read",
	"im:history", "im:read", "mpim:history", "mpim:read", "search:read", "users:read",
}

// allScopes is every scope the authorization asks for, bot and user, each
// once: what the catalogue lists.
func allScopes() []string {
	all := slices.Concat(botScopes, userScopes)
	slices.Sort(all)
	return slices.Compact(all)
}

// Keys of Credentials.Fields set by ValidateTokens.
const (
	FieldTeamID          = "teamId"
	FieldTeamName        = "teamName"
	FieldEnterpriseID    = "enterpriseId"
	FieldAppID           = "appId"
	FieldUserID          = "authedUserId"
	FieldBotUserID       = "botUserId"
	FieldBotAccessToken  = "botAccessToken"
	FieldBotRefreshToken = "botRefreshToken"
	FieldBotExpiresAt    = "botExpiresAt" // RFC 3339
	FieldBotScope        = "botScope"
)

// Definition returns Slack's definition.
func Definition() integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{
			Domain:      Domain,
			DisplayName: "Slack",
			Kind:        integrations.KindChat,
			AuthType:    integrations.AuthOAuth,
			Scopes:      allScopes(),
		},
		OAuth: &integrations.OAuthSpec{
			AuthURL:        endpoints.Slack.AuthURL,
			TokenURL:       endpoints.Slack.TokenURL,
			RevokeURL:      RevokeURL,
			APIBaseURL:     APIBaseURL,
			AuthStyle:      oauth2.AuthStyleInParams,
			ScopeSeparator: ",",
			ScopeParam:     slices.Clone(botScopes),
			AuthParams:     map[string]string{"user_scope": strings.Join(userScopes, ",")},
			Tokens:         parseTokens,
			Revoke:         revoke,
		},
		New: newWorkspace,
	}
}

// parseTokens reads an oauth.v2.access response. Slack answers HTTP 200
// even on failure, with "ok": false. The user token comes under
// authed_user, and the top level holds the bot token, if any. A refresh of
// a rotating token answers with the token at the top level and its
// token_type ("bot" or "user").
//
// The user token, when there is one, becomes the credentials' access token:
// it reads everything the user can, which is what a personal search
// indexes. The bot token then goes to Fields. Team and user ids go to
// Fields too.
func parseTokens(raw map[string]any, now time.Time) (integrations.Credentials, error) {
	if raw["ok"] != true {
		return integrations.Credentials{}, &oauthclient.InvalidTokensError{Field: "ok", Reason: "is not true"}
	}
	top, err := tokenOf(raw, now)
	if err != nil {
		return integrations.Credentials{}, err
	}
	var user integrations.Credentials
	if au, ok := raw["authed_user"].(map[string]any); ok {
		if user, err = tokenOf(au, now); err != nil {
			return integrations.Credentials{}, fmt.Errorf("authed_user: %w", err)
		}
	}
	if top.TokenType == "user" {
		user, top = top, integrations.Credentials{}
	}
	if user.AccessToken == "" && top.AccessToken == "" {
		return integrations.Credentials{}, &oauthclient.InvalidTokensError{Field: "access_token", Reason: "missing: neither a bot nor a user token"}
	}
	if top.AccessToken != "" && top.TokenType != "bot" {
		return integrations.Credentials{}, &oauthclient.InvalidTokensError{Field: "token_type", Reason: "of the top-level token is not bot"}
	}
	if top.AccessToken != "" {
		if err := oauthclient.CheckScopes(top.Scope, botScopes); err != nil {
			return integrations.Credentials{}, err
		}
	}
	if user.AccessToken != "" {
		if err := oauthclient.CheckScopes(user.Scope, userScopes); err != nil {
			return integrations.Credentials{}, err
		}
	}

	creds := user
	if creds.AccessToken == "" {
		creds = top
	}
	creds.Fields = map[string]string{}
	if user.AccessToken != "" && top.AccessToken != "" {
		creds.Fields[FieldBotAccessToken] = top.AccessToken
		creds.Fields[FieldBotRefreshToken] = top.RefreshToken
		creds.Fields[FieldBotScope] = top.Scope
		if !top.ExpiresAt.IsZero() {
			creds.Fields[FieldBotExpiresAt] = top.ExpiresAt.UTC().Format(time.RFC3339)
		}
	}
	team, _ := raw["team"].(map[string]any)
	enterprise, _ := raw["enterprise"].(map[string]any)
	authed, _ := raw["authed_user"].(map[string]any)
	for key, v := range map[string]any{
		FieldTeamID:       team["id"],
		FieldTeamName:     team["name"],
		FieldEnterpriseID: enterprise["id"],
		FieldAppID:        raw["app_id"],
		FieldUserID:       authed["id"],
		FieldBotUserID:    raw["bot_user_id"],
	} {
		if s, ok := v.(string); ok && s != "" {
			creds.Fields[key] = s
		}
	}
	return creds, nil
}

// tokenOf reads one token object of Slack's answer: access_token,
// token_type, scope and, with token rotation, refresh_token and expires_in.
// An object without an access token gives empty credentials.
func tokenOf(m map[string]any, now time.Time) (integrations.Credentials, error) {
	access, err := oauthclient.StringField(m, "access_token", false)
	if err != nil || access == "" {
		return integrations.Credentials{}, err
	}
	var c integrations.Credentials
	c.AccessToken = access
	if c.TokenType, err = oauthclient.StringField(m, "token_type", true); err != nil {
		return integrations.Credentials{}, err
	}
	if c.TokenType != "bot" && c.TokenType != "user" {
		return integrations.Credentials{}, &oauthclient.InvalidTokensError{Field: "token_type", Reason: "is neither bot nor user"}
	}
	if c.Scope, err = oauthclient.StringField(m, "scope", false); err != nil {
		return integrations.Credentials{}, err
	}
	if c.RefreshToken, err = oauthclient.StringField(m, "refresh_token", false); err != nil {
		return integrations.Credentials{}, err
	}
	if c.ExpiresAt, err = oauthclient.ExpiresAt(m["expires_in"], now); err != nil {
		return integrations.Credentials{}, err
	}
	return c, nil
}

// deadTokenErrors are Slack's answers for a token that no longer works.
var deadTokenErrors = map[string]bool{
	"invalid_auth":     true,
	"not_authed":       true,
	"token_revoked":    true,
	"token_expired":    true,
	"account_inactive": true,
}

// call POSTs to a Slack Web API method with a Bearer token and returns the
// "error" of an {"ok": false} answer ("" when ok).
func call(ctx context.Context, client *http.Client, url, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("slack answered %d", resp.StatusCode)
	}
	var body struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return "", errors.New("slack answered with something other than JSON")
	}
	if body.OK {
		return "", nil
	}
	if body.Error == "" {
		return "unknown_error", nil
	}
	return body.Error, nil
}

// revoke calls auth.revoke for the user token and the bot token. A token
// Slack no longer accepts counts as revoked. An expired rotating token is
// refreshed first, since auth.revoke needs a working one.
func revoke(ctx context.Context, env integrations.Env) error {
	p := env.Provider
	creds, err := oauthclient.NewRefresher(env).Credentials(ctx)
	if errors.Is(err, integrations.ErrReauthRequired) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, token := range []string{creds.AccessToken, creds.Fields[FieldBotAccessToken]} {
		if token == "" {
			continue
		}
		code, err := call(ctx, p.Client(), p.RevokeURL(), token)
		if err != nil {
			return err
		}
		if code != "" && !deadTokenErrors[code] {
			return &oauthclient.TokenError{Status: http.StatusOK, Code: code}
		}
	}
	return nil
}

// workspace is one user's connected Slack workspace.
type workspace struct {
	oauthclient.OAuthConn // Initialize refreshes a rotating token
	sync                  *syncer
}

// newWorkspace builds an instance: its API client caches the members it
// reads, for the instance's life, which is one sync session.
func newWorkspace(env integrations.Env) (integrations.Integration, error) {
	conn, err := oauthclient.NewOAuthConn(Domain, env)
	if err != nil {
		return nil, err
	}
	token := func(ctx context.Context) (string, error) {
		creds, err := conn.Tokens.Credentials(ctx)
		return creds.AccessToken, err
	}
	known := env.Known
	if known == nil {
		known = func(string) bool { return false }
	}
	return &workspace{OAuthConn: conn, sync: &syncer{api: NewClient(conn.Client, conn.API, token, env.Now), known: known, stored: env.ProviderIDs, state: env.State}}, nil
}

// ValidateAuthentication calls auth.test with the access token.
func (w *workspace) ValidateAuthentication(ctx context.Context) (bool, error) {
	return w.Tokens.Validate(ctx, func(ctx context.Context, creds integrations.Credentials) (bool, error) {
		code, err := call(ctx, w.Client, w.API+"/auth.test", creds.AccessToken)
		switch {
		case err != nil:
			return false, fmt.Errorf("slack auth.test: %w", err)
		case code == "":
			return true, nil
		case deadTokenErrors[code]:
			return false, nil
		default:
			return false, fmt.Errorf("slack auth.test: %s", code)
		}
	})
}

// Shutdown has nothing to release: requests use the shared HTTP client.
func (w *workspace) Shutdown(context.Context) error { return nil }
