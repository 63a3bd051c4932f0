package oauthclient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/oauthtest"
)

// connected runs Acme's whole flow and returns the stored credentials.
func connected(t *testing.T, srv *oauthtest.Server, p *oauthclient.Provider) integrations.Credentials {
	t.Helper()
	code := srv.Authorize(t, must(p.GenerateAuthorizationURL(redirectURI, "st", verifier)))
	raw, err := p.ExchangeCodeForTokens(context.Background(), code, redirectURI, verifier)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := p.ValidateTokens(raw)
	if err != nil {
		t.Fatal(err)
	}
	creds.Fields = map[string]string{"accountId": "42"}
	return creds
}

func TestRefresh(t *testing.T) {
	srv, p := newAcme(t)
	creds := connected(t, srv, p)

	fresh, err := p.Refresh(context.Background(), creds)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if fresh.AccessToken == creds.AccessToken || !srv.Live(fresh.AccessToken) {
		t.Error("Refresh: got no new live access token")
	}
	if fresh.RefreshToken != creds.RefreshToken || fresh.Fields["accountId"] != "42" || fresh.ClientID != clientID {
		t.Errorf("Refresh: got %v, want the refresh token, fields and client kept", fresh)
	}

	srv.Kill(creds.RefreshToken)
	_, err = p.Refresh(context.Background(), creds)
	if !errors.Is(err, integrations.ErrReauthRequired) {
		t.Errorf("refresh with a revoked token: got %v, want ErrReauthRequired", err)
	}
	assertTokenError(t, err, 400, "invalid_grant", creds.RefreshToken)

	if _, err := p.Refresh(context.Background(), integrations.Credentials{AccessToken: "a"}); !errors.Is(err, oauthclient.ErrNoRefreshToken) {
		t.Errorf("refresh without a refresh token: got %v, want ErrNoRefreshToken", err)
	}
}

func TestRefresher(t *testing.T) {
	srv, p := newAcme(t)
	creds := connected(t, srv, p)
	now := testNow
	p.Now = func() time.Time { return now }
	var saved []integrations.Credentials
	var saveErr error
	r := oauthclient.NewRefresher(integrations.Env{
		Credentials: creds,
		Provider:    p,
		Now:         func() time.Time { return now },
		Save: func(_ context.Context, c integrations.Credentials) error {
			saved = append(saved, c)
			return saveErr
		},
	})
	ctx := context.Background()

	got, err := r.Credentials(ctx)
	if err != nil || got.AccessToken != creds.AccessToken || srv.TokenRequests() != 1 || len(saved) != 0 {
		t.Fatalf("fresh token: got %v, %v after %d token requests; want the same token, no refresh", got, err, srv.TokenRequests())
	}

	now = creds.ExpiresAt.Add(-30 * time.Second) // inside the refresh margin
	got, err = r.Credentials(ctx)
	if err != nil || got.AccessToken == creds.AccessToken || len(saved) != 1 || saved[0].AccessToken != got.AccessToken {
		t.Fatalf("expiring token: got %v, %v, %d saves; want a refreshed, saved token", got, err, len(saved))
	}
	if again, _ := r.Credentials(ctx); again.AccessToken != got.AccessToken || srv.TokenRequests() != 2 {
		t.Errorf("second call: got another refresh (%d token requests), want the refreshed token reused", srv.TokenRequests())
	}

	now = now.Add(2 * time.Hour)
	saveErr = errors.New("disk full")
	if _, err := r.Credentials(ctx); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failed save: got %v, want the save error", err)
	}

	expired := oauthclient.NewRefresher(integrations.Env{
		Credentials: integrations.Credentials{AccessToken: "a", ExpiresAt: testNow},
		Now:         func() time.Time { return testNow },
	})
	if _, err := expired.Credentials(ctx); !errors.Is(err, integrations.ErrReauthRequired) {
		t.Errorf("expired without refresh token: got %v, want ErrReauthRequired", err)
	}
}

func TestRevokeUnsupported(t *testing.T) {
	_, p := newAcme(t)
	if err := p.Revoke(context.Background(), integrations.Credentials{AccessToken: "a"}); !errors.Is(err, oauthclient.ErrRevokeUnsupported) {
		t.Errorf("Revoke: got %v, want ErrRevokeUnsupported", err)
	}
}

func TestProviderRedacts(t *testing.T) {
	_, p := newAcme(t)
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("provider", "p", p)
	for _, out := range []string{buf.String(), fmt.Sprintf("%v %+v %#v %s", p, p, p, p)} {
		if strings.Contains(out, clientSecret) || !strings.Contains(out, clientID) {
			t.Errorf("output %s: want the client id and no secret", out)
		}
	}
}
