package main

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"searchsvc/integrations/vault"
)

// parser collects every configuration error, so one start-up reports all
// of them.
type parser struct {
	getenv func(string) string
	secret func(string) (string, error)
	errs   []error
}

func (p *parser) fail(name, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s %s", name, fmt.Sprintf(format, args...)))
}

func (p *parser) str(name, def string) string {
	if v := strings.TrimSpace(p.getenv(name)); v != "" {
		return v
	}
	return def
}

func (p *parser) secretValue(name string) string {
	v, err := p.secret(name)
	if err != nil {
		p.errs = append(p.errs, err)
	}
	return v
}

func (p *parser) integer(name string, def, min, max int) int {
	v := p.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		p.fail(name, "must be a whole number from %d to %d, got %q", min, max, v)
		return def
	}
	return n
}

func (p *parser) seconds(name string, def int) time.Duration {
	return time.Duration(p.integer(name, def, 1, 10*365*86400)) * time.Second
}

func (p *parser) boolean(name string, def bool) bool {
	v := p.str(name, "")
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(name, "must be true or false, got %q", v)
		return def
	}
	return b
}

func (p *parser) oneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(p.str(name, def))
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.fail(name, "must be %s, got %q", strings.Join(allowed, " or "), v)
	return def
}

func (p *parser) url(name, def string) *url.URL {
	v := strings.TrimSuffix(p.str(name, def), "/")
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		p.fail(name, "must be an absolute http(s) URL without query, got %q", v)
		return nil
	}
	return u
}

// dirs reads a comma-separated list of absolute directories, each
// cleaned; it refuses a relative one. Whether each exists is not checked:
// a NAS may be mounted after the service starts.
func (p *parser) dirs(name string) []string {
	var out []string
	for _, d := range strings.Split(p.str(name, ""), ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		if !filepath.IsAbs(d) {
			p.fail(name, "must list absolute directories, got %q", d)
			continue
		}
		d = filepath.Clean(d)
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// key parses a credentials key with the vault's own parser, which refuses
// what the vault would (a key of zero bytes among them).
func (p *parser) key(name, s string) []byte {
	k, err := vault.ParseKey(name, s)
	if err != nil {
		p.errs = append(p.errs, err)
		return nil
	}
	return k
}
