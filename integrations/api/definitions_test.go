package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
)

const (
	davUser     = "alice"
	davPassword = "correct horse battery staple"
)

// davServer is a file server that accepts davUser and davPassword.
func davServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != davUser || p != davPassword {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// dav is a manual integration whose form is checked by logging in.
func dav() integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{
			Domain: "dav", DisplayName: "WebDAV", Kind: integrations.KindFiles, AuthType: integrations.AuthManual,
			Fields: []integrations.Field{
				{Name: "url", Label: "Server URL", Type: integrations.FieldURL, Required: true},
				{Name: "username", Label: "User name", Type: integrations.FieldText, Required: true},
				{Name: "password", Label: "Password", Type: integrations.FieldPassword, Required: true, Secret: true},
				{Name: "depth", Label: "Depth", Type: integrations.FieldNumber, Default: "3"},
				{Name: "insecure", Label: "Skip TLS checks", Type: integrations.FieldBool},
			},
		},
		ValidateManual: func(ctx context.Context, f map[string]string, c *http.Client) (integrations.Credentials, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, f["url"], nil)
			if err != nil {
				return integrations.Credentials{}, &integrations.ValidationError{Field: "url", Message: "is not a usable URL"}
			}
			req.SetBasicAuth(f["username"], f["password"])
			resp, err := c.Do(req)
			if err != nil {
				return integrations.Credentials{}, err
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return integrations.Credentials{}, &integrations.ValidationError{Field: "password", Message: "the server refused the user name or password"}
			}
			return integrations.Credentials{Fields: f}, nil
		},
		New: func(integrations.Env) (integrations.Integration, error) { return nil, nil },
	}
}

// revocable is acme with a revocation endpoint at the fake provider.
func revocable() integrations.Definition {
	d := acme()
	spec := *d.OAuth
	spec.RevokeURL = "https://acme.example/revoke"
	spec.Revoke = func(ctx context.Context, env integrations.Env) error {
		p, c := env.Provider, env.Credentials
		form := url.Values{"token": {c.RefreshToken}}
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
		if resp.StatusCode != http.StatusOK {
			var body struct {
				Error string `json:"error"`
			}
			json.NewDecoder(resp.Body).Decode(&body)
			return &oauthclient.TokenError{Status: resp.StatusCode, Code: body.Error}
		}
		return nil
	}
	d.OAuth = &spec
	return d
}

func oauthDefinition(domain string) integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{Domain: domain, DisplayName: "Other", Kind: integrations.KindChat,
			AuthType: integrations.AuthOAuth, Scopes: []string{"read"}},
		OAuth: &integrations.OAuthSpec{AuthURL: "https://other.example/auth", TokenURL: "https://other.example/token"},
		New:   func(integrations.Env) (integrations.Integration, error) { return nil, nil },
	}
}
