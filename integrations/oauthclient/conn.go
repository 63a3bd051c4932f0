package oauthclient

import (
	"context"
	"fmt"
	"net/http"

	"searchsvc/integrations"
)

// OAuthConn is what an OAuth integration's instance is built on: its
// credentials, refreshed as they near expiry, the HTTP client and the
// provider's API base URL. Instances embed it, which gives them
// Initialize.
type OAuthConn struct {
	Tokens *Refresher
	Client *http.Client
	API    string
}

// NewOAuthConn builds an OAuth instance's connection from env; domain
// names the integration in the error when env lacks the provider.
func NewOAuthConn(domain string, env integrations.Env) (OAuthConn, error) {
	if env.Provider == nil {
		return OAuthConn{}, fmt.Errorf("%s: instance needs the OAuth provider", domain)
	}
	client := env.Client
	if client == nil {
		client = env.Provider.Client()
	}
	return OAuthConn{Tokens: NewRefresher(env), Client: client, API: env.Provider.APIBaseURL()}, nil
}

// Initialize refreshes the access token if it is about to expire.
func (c OAuthConn) Initialize(ctx context.Context) error {
	_, err := c.Tokens.Credentials(ctx)
	return err
}
