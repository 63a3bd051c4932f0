package integrations

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Definition is everything the service knows about one integration: its
// manifest, how it authenticates and how to build a connected instance.
// Each provider subpackage exports one.
type Definition struct {
	Manifest Manifest
	// OAuth describes the provider's OAuth endpoints and quirks; nil for a
	// manual integration.
	OAuth *OAuthSpec
	// ValidateManual checks a submitted manual form before it is stored:
	// it validates the fields and proves that they work against the provider
	// (for example by logging in), and returns the credentials to seal.
	// Its errors are *ValidationError when the user can fix them. Nil for an
	// OAuth integration.
	ValidateManual func(ctx context.Context, fields map[string]string, client *http.Client) (Credentials, error)
	// New builds a connected instance from stored credentials.
	New func(env Env) (Integration, error)
	// Sources lists what a record of this integration follows, from its
	// credentials, for the record's view (a feed record's addresses).
	// Nil: nothing is shown. It must return no secret.
	Sources func(c Credentials) []string
	// Describe names a record from its credentials, without a secret: the
	// name it goes by without a label (its host, its folder) and its
	// source (the IMAP user and host, the folder's path). Nil: neither is
	// shown.
	Describe func(c Credentials) (name, source string)
	// Details says of each thing a record follows what the last sync
	// learnt of it (a feed's own title, its last fetch's status), from
	// the record's credentials and the values it keeps (Env.State), for
	// the record's view. Nil: nothing is shown. It must return no secret.
	Details func(c Credentials, state func(key string) string) []SourceDetail
	// Requires names the administrator's settings this deployment lacks
	// for a manual integration to be connected (FOLDER_ROOTS); the
	// catalogue lists it as not configured, naming them. Nil: none.
	Requires []string
}

// SourceDetail is what a record's view says of one thing it follows.
type SourceDetail struct {
	// Source is what is followed, as Sources names it (a feed's address).
	Source string `json:"source"`
	// Title is the source's own name (a feed's title); empty until known.
	Title string `json:"title,omitempty"`
	// Status is "ok" when the last sync read it, the sentence of its
	// failure when it did not, and empty before the first sync.
	Status string `json:"status,omitempty"`
}

// Env is what a connected instance is built from.
type Env struct {
	// Credentials are the opened (decrypted) credentials of the record.
	Credentials Credentials
	// Client makes the instance's outbound requests.
	Client *http.Client
	// Provider is the integration's OAuth client, built with this
	// deployment's configuration: it refreshes tokens and gives the HTTP
	// client and the URLs of the provider's API. Nil for a manual
	// integration.
	Provider OAuthClient
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Save stores credentials that the instance refreshed, so that the next
	// instance starts from them; nil means they are not stored.
	Save func(ctx context.Context, c Credentials) error
	// Known reports whether the record already holds the item with this
	// provider id, so that a task lists past what an earlier sync fetched
	// instead of downloading it again. Nil means nothing is known yet.
	Known func(providerID string) bool
	// State returns the value the record keeps for key (TaskResult.State),
	// including what this sync staged but did not commit yet; "" if none.
	// Nil means nothing is kept.
	State func(key string) string
	// ProviderIDs lists the provider ids of the record's items, as the
	// finished tasks left them (it commits them first), so that a task can
	// compare the provider's listing with what is stored: the IMAP sync
	// finds expunged mail and renumbered mailboxes this way, Dropbox and
	// Slack the stored version of an item whose id carries one (a file's
	// content hash, a message's edit). It opens every item's metadata:
	// call it once per sync, from RunTask's own goroutine. Nil means
	// nothing is stored.
	ProviderIDs func() ([]string, error)
}

// EnvPrefix returns the prefix of an integration's environment variables:
// the domain upper-cased with every character other than A-Z and 0-9
// replaced by '_' ("google-mail" gives "GOOGLE_MAIL").
func EnvPrefix(domain string) string {
	b := []byte(strings.ToUpper(domain))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Registry is the catalogue of integrations, keyed by domain. It is built
// once and read concurrently.
type Registry struct {
	defs map[string]Definition
}

// NewRegistry builds a registry from defs. It refuses a definition that is
// incomplete or inconsistent, a domain that is not a lower-case name
// (letters, digits, '.', '-'), and two domains that are equal or share an
// environment prefix.
func NewRegistry(defs ...Definition) (*Registry, error) {
	r := &Registry{defs: make(map[string]Definition, len(defs))}
	prefixes := make(map[string]string, len(defs))
	for _, d := range defs {
		if err := checkDefinition(d); err != nil {
			return nil, err
		}
		domain := d.Manifest.Domain
		if _, ok := r.defs[domain]; ok {
			return nil, fmt.Errorf("integration %q registered twice", domain)
		}
		p := EnvPrefix(domain)
		if other, ok := prefixes[p]; ok {
			return nil, fmt.Errorf("integrations %q and %q share the environment prefix %s", other, domain, p)
		}
		prefixes[p] = domain
		r.defs[domain] = d
	}
	return r, nil
}

// Get returns the definition of domain.
func (r *Registry) Get(domain string) (Definition, bool) {
	d, ok := r.defs[domain]
	return d, ok
}

// List returns the manifests of all integrations, sorted by domain. The
// caller may modify the result.
func (r *Registry) List() []Manifest {
	out := make([]Manifest, 0, len(r.defs))
	for _, d := range r.defs {
		m := d.Manifest
		m.Scopes = slices.Clone(m.Scopes)
		m.Fields = slices.Clone(m.Fields)
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Manifest) int { return strings.Compare(a.Domain, b.Domain) })
	return out
}

// validDomain reports whether s can be an integration domain: 1 to 63
// lower-case letters, digits, '.' and '-', starting and ending with a letter
// or digit, so that it is safe in a URL path and an environment name.
func validDomain(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && ((c != '.' && c != '-') || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

func checkDefinition(d Definition) error {
	m := d.Manifest
	if !validDomain(m.Domain) {
		return fmt.Errorf("integration domain %q: want 1-63 lower-case letters, digits, '.' or '-'", m.Domain)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("integration %s: %s", m.Domain, fmt.Sprintf(format, args...))
	}
	if m.DisplayName == "" {
		return fail("no display name")
	}
	switch m.Kind {
	case KindEmail, KindChat, KindFiles, KindFeed:
	default:
		return fail("unknown kind %q", m.Kind)
	}
	if d.New == nil {
		return fail("no instance factory (New)")
	}
	switch m.AuthType {
	case AuthOAuth:
		if d.OAuth == nil || d.ValidateManual != nil || len(m.Fields) > 0 {
			return fail("an oauth integration has an OAuth spec and no manual form")
		}
		if d.OAuth.AuthURL == "" || d.OAuth.TokenURL == "" {
			return fail("OAuth spec without authorization or token URL")
		}
	case AuthManual:
		if d.OAuth != nil || d.ValidateManual == nil {
			return fail("a manual integration has ValidateManual and no OAuth spec")
		}
	default:
		return fail("unknown auth type %q", m.AuthType)
	}
	seen := make(map[string]bool, len(m.Fields))
	for _, f := range m.Fields {
		if f.Name == "" || f.Label == "" || seen[f.Name] {
			return fail("form field %q: empty or repeated name, or no label", f.Name)
		}
		seen[f.Name] = true
		switch f.Type {
		case FieldText, FieldPassword, FieldNumber, FieldBool, FieldURL, FieldMultiline:
		default:
			return fail("form field %q: unknown type %q", f.Name, f.Type)
		}
	}
	return nil
}
