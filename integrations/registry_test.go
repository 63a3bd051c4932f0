package integrations

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestEnvPrefix(t *testing.T) {
	tests := []struct{ domain, want string }{
		{"gmail", "GMAIL"},
		{"google-mail", "GOOGLE_MAIL"},
		{"mail.example.com", "MAIL_EXAMPLE_COM"},
		{"imap2", "IMAP2"},
		{"a b/c", "A_B_C"},
		{"é", "__"}, // each byte of a non-ASCII rune
	}
	for _, tt := range tests {
		if got := EnvPrefix(tt.domain); got != tt.want {
			t.Errorf("EnvPrefix(%q): got %q, want %q", tt.domain, got, tt.want)
		}
	}
}

func newInstance(Env) (Integration, error) { return nil, nil }

func oauthDef(domain string) Definition {
	return Definition{
		Manifest: Manifest{Domain: domain, DisplayName: "Example", Kind: KindEmail, AuthType: AuthOAuth, Scopes: []string{"read"}},
		OAuth:    &OAuthSpec{AuthURL: "https://example.com/auth", TokenURL: "https://example.com/token"},
		New:      newInstance,
	}
}

func manualDef(domain string) Definition {
	return Definition{
		Manifest: Manifest{Domain: domain, DisplayName: "Manual", Kind: KindFeed, AuthType: AuthManual,
			Fields: []Field{{Name: "url", Label: "Feed URL", Type: FieldURL, Required: true}}},
		ValidateManual: func(context.Context, map[string]string, *http.Client) (Credentials, error) { return Credentials{}, nil },
		New:            newInstance,
	}
}

func TestNewRegistryRejects(t *testing.T) {
	tests := []struct {
		name   string
		defs   func() []Definition
		errHas string
	}{
		{"empty domain", func() []Definition { return []Definition{oauthDef("")} }, "domain"},
		{"upper case domain", func() []Definition { return []Definition{oauthDef("Gmail")} }, "domain"},
		{"slash in domain", func() []Definition { return []Definition{oauthDef("a/b")} }, "domain"},
		{"leading dash", func() []Definition { return []Definition{oauthDef("-a")} }, "domain"},
		{"too long", func() []Definition { return []Definition{oauthDef(strings.Repeat("a", 64))} }, "domain"},
		{"duplicate", func() []Definition { return []Definition{oauthDef("gmail"), manualDef("gmail")} }, "twice"},
		{"shared env prefix", func() []Definition { return []Definition{oauthDef("a-b"), oauthDef("a.b")} }, "A_B"},
		{"unknown kind", func() []Definition {
			d := oauthDef("x")
			d.Manifest.Kind = "video"
			return []Definition{d}
		}, "kind"},
		{"unknown auth type", func() []Definition {
			d := oauthDef("x")
			d.Manifest.AuthType = "password"
			return []Definition{d}
		}, "auth type"},
		{"oauth without spec", func() []Definition {
			d := oauthDef("x")
			d.OAuth = nil
			return []Definition{d}
		}, "OAuth spec"},
		{"oauth without token URL", func() []Definition {
			d := oauthDef("x")
			d.OAuth = &OAuthSpec{AuthURL: "https://a"}
			return []Definition{d}
		}, "token URL"},
		{"manual without validator", func() []Definition {
			d := manualDef("x")
			d.ValidateManual = nil
			return []Definition{d}
		}, "ValidateManual"},
		{"no factory", func() []Definition {
			d := manualDef("x")
			d.New = nil
			return []Definition{d}
		}, "New"},
		{"no display name", func() []Definition {
			d := manualDef("x")
			d.Manifest.DisplayName = ""
			return []Definition{d}
		}, "display name"},
		{"bad field type", func() []Definition {
			d := manualDef("x")
			d.Manifest.Fields = []Field{{Name: "f", Label: "F", Type: "date"}}
			return []Definition{d}
		}, "unknown type"},
		{"repeated field", func() []Definition {
			d := manualDef("x")
			d.Manifest.Fields = append(d.Manifest.Fields, d.Manifest.Fields[0])
			return []Definition{d}
		}, "repeated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRegistry(tt.defs()...)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("NewRegistry: got error %v, want one mentioning %q", err, tt.errHas)
			}
		})
	}
}

func TestRegistryGetAndList(t *testing.T) {
	r, err := NewRegistry(oauthDef("zeta"), manualDef("alpha"), oauthDef("mid.example"))
	if err != nil {
		t.Fatal(err)
	}
	var domains []string
	for _, m := range r.List() {
		domains = append(domains, m.Domain)
	}
	if want := []string{"alpha", "mid.example", "zeta"}; !slices.Equal(domains, want) {
		t.Errorf("List domains: got %v, want %v", domains, want)
	}
	d, ok := r.Get("alpha")
	if !ok || d.Manifest.AuthType != AuthManual {
		t.Errorf("Get(alpha): got %v %v, want the manual definition", d.Manifest, ok)
	}
	if _, ok := r.Get("missing"); ok {
		t.Error("Get(missing): got ok, want not found")
	}

	// A caller editing the list must not change the registry.
	list := r.List()
	list[0].Fields[0].Name = "changed"
	list[2].Scopes[0] = "changed"
	d, _ = r.Get("alpha")
	z, _ := r.Get("zeta")
	if d.Manifest.Fields[0].Name != "url" || z.Manifest.Scopes[0] != "read" {
		t.Error("editing List's result changed the registry")
	}
}

func TestItemKind(t *testing.T) {
	for _, tc := range []struct{ kind, want string }{
		{KindEmail, "email"}, {KindChat, "message"}, {KindFiles, "file"}, {KindFeed, "entry"}, {"other", "other"},
	} {
		if got := ItemKind(tc.kind); got != tc.want {
			t.Errorf("ItemKind(%q) = %q, want %q", tc.kind, got, tc.want)
		}
	}
}
