package integrations

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// secretCredentials returns credentials whose every secret is a distinct
// marker, so a test can search output for any of them.
func secretCredentials() (Credentials, []string) {
	c := Credentials{
		ClientID:     "client-123",
		ClientSecret: "SECRET-client",
		AccessToken:  "SECRET-access",
		RefreshToken: "SECRET-refresh",
		ExpiresAt:    time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		TokenType:    "Bearer",
		Scope:        "read",
		Fields:       map[string]string{"password": "SECRET-password", "teamId": "SECRET-team"},
	}
	return c, []string{"SECRET-client", "SECRET-access", "SECRET-refresh", "SECRET-password", "SECRET-team"}
}

func assertNoSecret(t *testing.T, out string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("output leaks %q: %s", s, out)
		}
	}
}

func TestCredentialsFmtRedacts(t *testing.T) {
	c, secrets := secretCredentials()
	type holder struct {
		Creds Credentials
		Ptr   *Credentials
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3v"} {
		for name, arg := range map[string]any{"value": c, "pointer": &c, "nested": holder{c, &c}, "slice": []Credentials{c}} {
			t.Run(format+"/"+name, func(t *testing.T) {
				out := fmt.Sprintf(format, arg)
				assertNoSecret(t, out, secrets)
			})
		}
	}
	if got := c.String(); !strings.Contains(got, `clientId:"client-123"`) || !strings.Contains(got, "accessToken:[redacted]") {
		t.Errorf("String() = %s, want the client id and a redacted access token", got)
	}
	if got, want := fmt.Sprintf("%#v", c), "integrations.Credentials{"; !strings.HasPrefix(got, want) {
		t.Errorf("%%#v = %s, want prefix %s", got, want)
	}
	if got := (Credentials{}).String(); !strings.Contains(got, `accessToken:""`) {
		t.Errorf("empty String() = %s, want an empty access token shown as empty", got)
	}
}

func TestCredentialsSlogRedacts(t *testing.T) {
	c, secrets := secretCredentials()
	handlers := map[string]func(*bytes.Buffer) slog.Handler{
		"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(h(&buf))
			log.Info("connect", "creds", c, "ptr", &c, slog.Any("any", c))
			out := buf.String()
			assertNoSecret(t, out, secrets)
			for _, want := range []string{"client-123", "[redacted]", "password,teamId"} {
				if !strings.Contains(out, want) {
					t.Errorf("log %s lacks %q", out, want)
				}
			}
		})
	}
}

func TestCredentialsJSONKeepsSecrets(t *testing.T) {
	c, _ := secretCredentials()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"clientId"`, `"clientSecret"`, `"accessToken"`, `"refreshToken"`, `"expiresAt"`, `"tokenType"`, `"scope"`, `"fields"`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON %s lacks key %s", b, key)
		}
	}
	var back Credentials
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.AccessToken != c.AccessToken || back.Fields["password"] != c.Fields["password"] || !back.ExpiresAt.Equal(c.ExpiresAt) {
		t.Errorf("round trip: got %#v, want the same secrets back", back)
	}
	empty, _ := json.Marshal(Credentials{Fields: map[string]string{"url": "https://x"}})
	if got, want := string(empty), `{"fields":{"url":"https://x"}}`; got != want {
		t.Errorf("manual credentials JSON: got %s, want %s", got, want)
	}
}

func TestCredentialsExpired(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		expiresAt time.Time
		margin    time.Duration
		want      bool
	}{
		{"no expiry", time.Time{}, time.Minute, false},
		{"far future", now.Add(time.Hour), time.Minute, false},
		{"within margin", now.Add(30 * time.Second), time.Minute, true},
		{"exactly at margin", now.Add(time.Minute), time.Minute, true},
		{"past", now.Add(-time.Second), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Credentials{ExpiresAt: tt.expiresAt}.Expired(now, tt.margin)
			if got != tt.want {
				t.Errorf("Expired: got %v, want %v", got, tt.want)
			}
		})
	}
}
