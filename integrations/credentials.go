package integrations

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// redacted replaces a secret wherever Credentials are printed or logged.
const redacted = "[redacted]"

// Credentials are what a connected integration needs to reach its provider.
// They are sealed by the Vault before they are stored and are never
// returned to clients.
//
// Credentials print and log themselves redacted: fmt's verbs (%v, %+v, %#v,
// %s…) and slog show which secrets are set but never their values. Only
// encoding/json sees the values, for the vault to seal them.
type Credentials struct {
	ClientID     string    `json:"clientId,omitempty"`
	ClientSecret string    `json:"clientSecret,omitempty"`
	AccessToken  string    `json:"accessToken,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	ExpiresAt    time.Time `json:"expiresAt,omitzero"` // zero: the access token does not expire
	TokenType    string    `json:"tokenType,omitempty"`
	Scope        string    `json:"scope,omitempty"` // as the provider granted it
	// Fields holds a manual form's values and provider extras (a Slack
	// team id, a user token). Any value may be secret: only keys are shown.
	Fields map[string]string `json:"fields,omitempty"`
}

// Expired reports whether the access token expires before now plus margin.
// A token without an expiry never expires.
func (c Credentials) Expired(now time.Time, margin time.Duration) bool {
	return !c.ExpiresAt.IsZero() && !now.Add(margin).Before(c.ExpiresAt)
}

// String describes c without any secret value.
func (c Credentials) String() string {
	var b strings.Builder
	b.WriteString("Credentials{")
	fmt.Fprintf(&b, "clientId:%q", c.ClientID)
	fmt.Fprintf(&b, " clientSecret:%s", mask(c.ClientSecret))
	fmt.Fprintf(&b, " accessToken:%s", mask(c.AccessToken))
	fmt.Fprintf(&b, " refreshToken:%s", mask(c.RefreshToken))
	if !c.ExpiresAt.IsZero() {
		fmt.Fprintf(&b, " expiresAt:%s", c.ExpiresAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, " tokenType:%q scope:%q", c.TokenType, c.Scope)
	fmt.Fprintf(&b, " fields:%v", c.fieldNames())
	b.WriteString("}")
	return b.String()
}

// GoString describes c for %#v, without any secret value.
func (c Credentials) GoString() string {
	return "integrations." + c.String()
}

// Format makes every fmt verb print the redacted form, so that neither %x
// nor a width flag can reach a secret.
func (c Credentials) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, c.GoString())
		return
	}
	fmt.Fprint(f, c.String())
}

// LogValue makes slog log c redacted.
func (c Credentials) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("client_id", c.ClientID),
		slog.String("client_secret", mask(c.ClientSecret)),
		slog.String("access_token", mask(c.AccessToken)),
		slog.String("refresh_token", mask(c.RefreshToken)),
	}
	if !c.ExpiresAt.IsZero() {
		attrs = append(attrs, slog.Time("expires_at", c.ExpiresAt))
	}
	attrs = append(attrs,
		slog.String("token_type", c.TokenType),
		slog.String("scope", c.Scope),
		slog.String("fields", strings.Join(c.fieldNames(), ",")),
	)
	return slog.GroupValue(attrs...)
}

func (c Credentials) fieldNames() []string {
	return slices.Sorted(maps.Keys(c.Fields))
}

// mask shows whether a secret is set, never its value.
func mask(secret string) string {
	if secret == "" {
		return strconv.Quote("")
	}
	return redacted
}
