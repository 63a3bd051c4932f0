package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"sync"
	"time"

	"searchsvc/integrations"
)

// ErrNoRefreshToken is returned by Refresh for credentials without a
// refresh token.
var ErrNoRefreshToken = errors.New("no refresh token")

// revokedCodes are the token endpoint error codes that mean the refresh
// token is dead: RFC 6749's invalid_grant and Slack's own words.
var revokedCodes = map[string]bool{
	"invalid_grant":         true,
	"invalid_refresh_token": true,
	"token_revoked":         true,
	"token_expired":         true,
}

// Revoked reports whether a token endpoint's error code means the refresh
// token is dead, so the user must connect again.
func Revoked(code string) bool { return revokedCodes[code] }

// Refresh trades creds' refresh token for a new access token. The result
// keeps the old refresh token, scope and fields where the response has
// none (Google and Dropbox do not rotate refresh tokens). A refusal of the
// refresh token wraps ErrReauthRequired.
func (p *Provider) Refresh(ctx context.Context, creds integrations.Credentials) (integrations.Credentials, error) {
	if err := p.Configured(); err != nil {
		return integrations.Credentials{}, err
	}
	if creds.RefreshToken == "" {
		return integrations.Credentials{}, ErrNoRefreshToken
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {creds.RefreshToken}}
	raw, err := p.tokenRequest(ctx, form)
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) && revokedCodes[te.Code] {
			return integrations.Credentials{}, fmt.Errorf("refresh %s token: %w: %w", p.domain, integrations.ErrReauthRequired, err)
		}
		return integrations.Credentials{}, fmt.Errorf("refresh %s token: %w", p.domain, err)
	}
	fresh, err := p.parseTokens(raw)
	if err != nil {
		return integrations.Credentials{}, fmt.Errorf("refresh %s token: %w", p.domain, err)
	}
	if fresh.RefreshToken == "" {
		fresh.RefreshToken = creds.RefreshToken
	}
	if fresh.Scope == "" {
		fresh.Scope = creds.Scope
	}
	if len(creds.Fields) > 0 || len(fresh.Fields) > 0 {
		fields := make(map[string]string, len(creds.Fields)+len(fresh.Fields))
		maps.Copy(fields, creds.Fields)
		maps.Copy(fields, fresh.Fields)
		fresh.Fields = fields
	}
	return fresh, nil
}

// refreshMargin is how long before its expiry an access token is
// refreshed, so that it does not expire during a task (a page of a listing
// can take a while on a slow link).
const refreshMargin = 5 * time.Minute

// Refresher hands out a connected instance's credentials, refreshing the
// access token shortly before it expires and storing the result through
// Env.Save. It is safe for concurrent use; concurrent callers share one
// refresh.
type Refresher struct {
	mu    sync.Mutex
	env   integrations.Env
	creds integrations.Credentials
}

// NewRefresher returns a Refresher starting from env.Credentials.
func NewRefresher(env integrations.Env) *Refresher {
	return &Refresher{env: env, creds: env.Credentials}
}

// now returns the Env's current time.
func (r *Refresher) now() time.Time {
	if r.env.Now == nil {
		return time.Now()
	}
	return r.env.Now()
}

// Credentials returns credentials whose access token is valid for at least
// another minute. When the token expired and cannot be refreshed, the error
// wraps ErrReauthRequired. When the refresh succeeded but Env.Save failed,
// the fresh credentials are kept for this instance and the error is returned.
func (r *Refresher) Credentials(ctx context.Context) (integrations.Credentials, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.creds.Expired(r.now(), refreshMargin) {
		return r.creds, nil
	}
	if r.env.Provider == nil || r.creds.RefreshToken == "" {
		return integrations.Credentials{}, fmt.Errorf("access token expired: %w", integrations.ErrReauthRequired)
	}
	fresh, err := r.env.Provider.Refresh(ctx, r.creds)
	if err != nil {
		return integrations.Credentials{}, err
	}
	r.creds = fresh
	if r.env.Save != nil {
		if err := r.env.Save(ctx, fresh); err != nil {
			return integrations.Credentials{}, fmt.Errorf("save refreshed credentials: %w", err)
		}
	}
	return fresh, nil
}

// Validate runs check, a provider's "do these credentials work" request,
// with fresh credentials. Credentials that cannot be refreshed because the
// provider refused them are reported as not working, without an error.
func (r *Refresher) Validate(ctx context.Context, check func(context.Context, integrations.Credentials) (bool, error)) (bool, error) {
	creds, err := r.Credentials(ctx)
	if errors.Is(err, integrations.ErrReauthRequired) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return check(ctx, creds)
}
