package api_test

import (
	"time"

	"golang.org/x/oauth2"

	"searchsvc/integrations"
)

// The OAuth provider of the record routes' tests, as in the integrations
// package's own OAuth tests.
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
