package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"searchsvc/httpx"
	"searchsvc/integrations/netguard"
)

// config is everything the service reads from its environment, parsed and
// validated before it listens. docs/configuration.md lists the names and
// defaults.
type config struct {
	ListenAddr        string
	DataDir           string
	BaseURL           *url.URL
	FrontendURL       *url.URL
	OAuthRedirectBase *url.URL

	SessionSecret         []byte
	SessionMaxAge         time.Duration
	SessionIdleTimeout    time.Duration
	SessionSecure         bool
	SessionSliding        bool
	SessionRenewThreshold time.Duration
	SessionBindIP         bool
	CSRFTokens            bool

	LoginRateLimit   int
	LoginRateWindow  time.Duration
	TrustedProxies   []netip.Prefix
	RegistrationOpen bool

	CredentialsKey         []byte
	CredentialsKeyPrevious [][]byte

	PollInterval time.Duration
	SyncWorkers  int
	// SearchCacheMB bounds the search index's cache of opened blocks.
	SearchCacheMB int
	StoreSync     string

	LogLevel  slog.Level
	LogFormat string
	// AccessLog says which requests get an access line (ACCESS_LOG).
	AccessLog httpx.AccessLogMode

	// AllowPrivateTargets lets users point manual integrations (a feed
	// URL, an IMAP host) at loopback and private-network addresses.
	AllowPrivateTargets bool
	// PrivateTargets are networks those targets may be on even with
	// AllowPrivateTargets off (a household's LAN); they never open
	// loopback, link-local or metadata addresses (netguard.Dialer).
	PrivateTargets []netip.Prefix
	// FolderRoots are the directories under which users may connect
	// folders (FOLDER_ROOTS); none: the folder integration is listed as
	// not available.
	FolderRoots []string

	// MaxConnections bounds the connections open at once, and
	// MaxClientConnections those from one peer (an IPv4 address or IPv6
	// /64; a trusted proxy excepted); BodyMemory the request-body bytes
	// held at once (a client gets an eighth). MemoryLimit sizes the Go
	// runtime's soft memory limit, in bytes: once the stores are open the
	// limit is a quarter of it above what the runtime holds live, so
	// MemoryLimit itself while that is three quarters of it; 0 leaves the
	// runtime's own (GOMEMLIMIT, or none).
	// GCPercent is the collector's target (debug.SetGCPercent); 0 leaves
	// the runtime's own (GOGC, or 100), gcOff turns the target off so
	// that only MemoryLimit starts a collection.
	MaxConnections       int
	MaxClientConnections int
	BodyMemory           int64
	MemoryLimit          int64
	GCPercent            int

	MetricsAddr string // a separate listener for /metrics; empty: none
	TLSCertFile string // with TLSKeyFile: serve HTTPS, reloaded on SIGHUP
	TLSKeyFile  string

	// DevSecrets names the secrets taken from DataDir/dev-secrets.json
	// because they were not set (devSecrets); run warns about them.
	DevSecrets []string
}

// envVars documents every variable for --help, in docs/configuration.md's order.
var envVars = [][2]string{
	{"LISTEN_ADDR", "address to listen on (127.0.0.1:8080)"},
	{"DATA_DIR", "all persistent state (./data)"},
	{"BASE_URL", "public address of this service (http://localhost:8080)"},
	{"FRONTEND_URL", "where OAuth results are redirected (BASE_URL: the web app this binary serves)"},
	{"OAUTH_REDIRECT_BASE_URL", "callback base; https unless loopback (BASE_URL)"},
	{"SESSION_SECRET", "secret, at least 32 bytes; required when SESSION_SECURE=true"},
	{"SESSION_MAX_AGE", "absolute session lifetime, seconds (604800)"},
	{"SESSION_IDLE_TIMEOUT", "idle timeout, seconds (86400)"},
	{"SESSION_SECURE", "cookie Secure flag (true)"},
	{"SESSION_SAME_SITE", "only strict is accepted (strict)"},
	{"SESSION_SLIDING", "sliding renewal (false)"},
	{"SESSION_RENEW_THRESHOLD", "seconds left below which sliding renewal extends a session (86400)"},
	{"SESSION_BIND_IP", "invalidate a session used from another /24 or /64 (false)"},
	{"CSRF_TOKENS", "require per-session CSRF tokens on POST, PUT, DELETE (false)"},
	{"LOGIN_RATE_LIMIT", "login attempts per window per client address (5)"},
	{"LOGIN_RATE_WINDOW", "seconds (60)"},
	{"TRUSTED_PROXIES", "comma-separated CIDRs whose X-Forwarded-For is believed (none)"},
	{"REGISTRATION", "open or closed (open)"},
	{"CREDENTIALS_KEY", "base64 of 32 bytes; required when SESSION_SECURE=true"},
	{"CREDENTIALS_KEY_PREVIOUS", "comma-separated old keys still accepted for decryption"},
	{"<DOMAIN>_OAUTH_CLIENT_ID, _SECRET", "OAuth client per integration (gmail, slack, dropbox)"},
	{"<DOMAIN>_OAUTH_AUTH_URL, _TOKEN_URL, _REVOKE_URL, <DOMAIN>_API_BASE_URL", "provider URL overrides"},
	{"ALLOW_PRIVATE_TARGETS", "let feed URLs and IMAP hosts be loopback or private-network addresses (false)"},
	{"PRIVATE_TARGETS", "comma-separated CIDRs feed URLs and IMAP hosts may be on, never loopback, link-local or metadata (none)"},
	{"FOLDER_ROOTS", "comma-separated absolute directories under which users may connect folders, kept read-only (none: folders cannot be connected)"},
	{"POLL_INTERVAL", "seconds between sync runs of one integration (900)"},
	{"SYNC_WORKERS", "concurrent sync tasks (2)"},
	{"SEARCH_CACHE_MB", "memory for the search index's opened blocks, in MiB (16)"},
	{"STORE_SYNC", "fsync or none (fsync)"},
	{"MAX_CONNECTIONS", "connections open at once; more are answered 503 (512)"},
	{"MAX_CLIENT_CONNECTIONS", "connections open at once from one address, a trusted proxy excepted (64)"},
	{"BODY_MEMORY_MIB", "MiB of request bodies held at once, an eighth per client (IPv4 address or IPv6 /64); more are answered 503 (16)"},
	{"MEMORY_LIMIT_MIB", "the Go runtime's soft memory limit in MiB, kept a quarter of it above what is live; 0 for none (48, or GOMEMLIMIT when set)"},
	{"GC_PERCENT", "the Go collector's target percentage, off to collect only near MEMORY_LIMIT_MIB, 0 for the runtime's (off, or GOGC when set)"},
	{"METRICS_ADDR", "separate address serving /metrics, Prometheus text (none; admins: GET /v1/admin/metrics)"},
	{"TLS_CERT_FILE", "serve HTTPS with this certificate (PEM), reloaded on SIGHUP (none)"},
	{"TLS_KEY_FILE", "the certificate's private key (PEM) (none)"},
	{"LOG_LEVEL", "debug, info, warn, error (info)"},
	{"LOG_FORMAT", "text or json (text)"},
	{"ACCESS_LOG", "summary (errors, requests over 1 s, and a line of counts per minute), all or off (summary)"},
}

// trustedOrigins are the origins besides the request's own host whose
// unsafe requests are accepted: BASE_URL's (behind a proxy that rewrites
// Host) and FRONTEND_URL's, when the frontend is served elsewhere.
func (c *config) trustedOrigins() []string {
	var out []string
	for _, u := range []*url.URL{c.BaseURL, c.FrontendURL} {
		if u == nil || u.Host == "" {
			continue
		}
		o := u.Scheme + "://" + u.Host
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// secretEnv resolves a variable the way every secret may be given: the
// variable itself, else the file named by NAME_FILE, else the file named
// like the variable in lower case in $CREDENTIALS_DIRECTORY (systemd's
// LoadCredential=). One trailing newline of a file is dropped.
func secretEnv(getenv func(string) string) func(string) (string, error) {
	return func(name string) (string, error) {
		if v := getenv(name); v != "" {
			return v, nil
		}
		path := getenv(name + "_FILE")
		if path == "" {
			dir := getenv("CREDENTIALS_DIRECTORY")
			if dir == "" {
				return "", nil
			}
			path = filepath.Join(dir, strings.ToLower(name))
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				return "", nil
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		s := strings.TrimSuffix(string(b), "\n")
		return strings.TrimSuffix(s, "\r"), nil
	}
}

// loadConfig reads and validates the environment of the server. Every
// error names the variable at fault.
func loadConfig(getenv func(string) string) (*config, error) {
	return readConfig(getenv, true)
}

// readConfig is loadConfig; serving says whether SESSION_SECURE=true
// requires both secrets here. A command sets no cookie and needs no
// SESSION_SECRET: commandConfig checks CREDENTIALS_KEY itself, once the
// secrets of a development data directory are taken into account.
func readConfig(getenv func(string) string, serving bool) (*config, error) {
	p := parser{getenv: getenv, secret: secretEnv(getenv)}
	c := &config{
		ListenAddr:            p.str("LISTEN_ADDR", "127.0.0.1:8080"),
		DataDir:               p.str("DATA_DIR", "./data"),
		SessionMaxAge:         p.seconds("SESSION_MAX_AGE", 604800),
		SessionIdleTimeout:    p.seconds("SESSION_IDLE_TIMEOUT", 86400),
		SessionSecure:         p.boolean("SESSION_SECURE", true),
		SessionSliding:        p.boolean("SESSION_SLIDING", false),
		SessionRenewThreshold: p.seconds("SESSION_RENEW_THRESHOLD", 86400),
		SessionBindIP:         p.boolean("SESSION_BIND_IP", false),
		CSRFTokens:            p.boolean("CSRF_TOKENS", false),
		AllowPrivateTargets:   p.boolean("ALLOW_PRIVATE_TARGETS", false),
		LoginRateLimit:        p.integer("LOGIN_RATE_LIMIT", 5, 1, 1_000_000),
		LoginRateWindow:       p.seconds("LOGIN_RATE_WINDOW", 60),
		PollInterval:          p.seconds("POLL_INTERVAL", 900),
		SyncWorkers:           p.integer("SYNC_WORKERS", 2, 1, 64),
		SearchCacheMB:         p.integer("SEARCH_CACHE_MB", 16, 1, 4096),
		StoreSync:             p.oneOf("STORE_SYNC", "fsync", "fsync", "none"),
		LogFormat:             p.oneOf("LOG_FORMAT", "text", "text", "json"),
	}
	p.oneOf("SESSION_SAME_SITE", "strict", "strict")
	loadResources(&p, c)
	c.MetricsAddr = p.str("METRICS_ADDR", "")
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			p.fail("METRICS_ADDR", "must be host:port, got %q", c.MetricsAddr)
		}
	}
	c.TLSCertFile, c.TLSKeyFile = p.str("TLS_CERT_FILE", ""), p.str("TLS_KEY_FILE", "")
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		p.fail("TLS_CERT_FILE", "and TLS_KEY_FILE must be set together")
	}
	c.RegistrationOpen = p.oneOf("REGISTRATION", "open", "open", "closed") == "open"
	if _, _, err := net.SplitHostPort(c.ListenAddr); err != nil {
		p.fail("LISTEN_ADDR", "must be host:port, got %q", c.ListenAddr)
	}
	c.AccessLog, _ = httpx.ParseAccessLogMode(p.oneOf("ACCESS_LOG", "summary", "summary", "all", "off"))
	switch lvl := strings.ToLower(p.str("LOG_LEVEL", "info")); lvl {
	case "debug", "info", "warn", "error":
		c.LogLevel.UnmarshalText([]byte(lvl))
	default:
		p.fail("LOG_LEVEL", "must be debug, info, warn or error, got %q", lvl)
	}
	if c.SessionRenewThreshold >= c.SessionMaxAge && c.SessionSliding {
		p.fail("SESSION_RENEW_THRESHOLD", "must be shorter than SESSION_MAX_AGE")
	}
	if prefixes, err := httpx.ParsePrefixes(p.str("TRUSTED_PROXIES", "")); err != nil {
		p.fail("TRUSTED_PROXIES", "%v", err)
	} else {
		c.TrustedProxies = prefixes
	}
	c.PrivateTargets = privateTargets(&p)
	c.FolderRoots = p.dirs("FOLDER_ROOTS")
	c.BaseURL = p.url("BASE_URL", "http://localhost:8080")
	if c.BaseURL != nil {
		c.FrontendURL = p.url("FRONTEND_URL", c.BaseURL.String())
		c.OAuthRedirectBase = p.url("OAUTH_REDIRECT_BASE_URL", c.BaseURL.String())
	}
	if u := c.OAuthRedirectBase; u != nil && u.Scheme != "https" && !isLoopback(u.Hostname()) {
		p.fail("OAUTH_REDIRECT_BASE_URL", "must use https unless its host is localhost, 127.0.0.1 or ::1, got %q", u.String())
	}

	loadSecrets(&p, c, serving)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return c, nil
}

// loadResources reads the limits on connections, request bodies and
// memory into c.
func loadResources(p *parser, c *config) {
	c.MaxConnections = p.integer("MAX_CONNECTIONS", 512, 1, 1_000_000)
	c.MaxClientConnections = p.integer("MAX_CLIENT_CONNECTIONS", 64, 1, 1_000_000)
	c.BodyMemory = int64(p.integer("BODY_MEMORY_MIB", 16, 1, 1<<20)) << 20
	// The limit, not a collector target, bounds the heap: with the
	// collector off below it (GC_PERCENT=off, the default), a request
	// path pays for a collection only once it has allocated a quarter of
	// MEMORY_LIMIT_MIB, however small the live heap, and a quiet service
	// collects never. Once the stores are open the runtime's limit follows
	// what is live, a quarter of MEMORY_LIMIT_MIB above it (limitFor in
	// memlimit.go), so the heap does not fill to the configured value
	// before a collection. The default is a Pi's working set
	// (BenchmarkPiMemory's 10,000 users and 100,000 sessions live in about
	// 30 MiB) with room for requests and syncs, and keeps RSS, binary
	// pages and the search cache's arena (outside the Go heap) included,
	// well under the unit's MemoryHigh.
	if p.getenv("MEMORY_LIMIT_MIB") != "" || p.getenv("GOMEMLIMIT") == "" {
		c.MemoryLimit = int64(p.integer("MEMORY_LIMIT_MIB", 48, 0, 1<<20)) << 20
	}
	limited := c.MemoryLimit > 0 || p.getenv("GOMEMLIMIT") != ""
	switch v := p.getenv("GC_PERCENT"); {
	case v == "off" && !limited:
		// Off without a limit would never collect.
		p.fail("GC_PERCENT", "off needs a memory limit (MEMORY_LIMIT_MIB above 0 or GOMEMLIMIT)")
	case v == "off", v == "" && p.getenv("GOGC") == "" && limited:
		c.GCPercent = gcOff
	case v != "":
		c.GCPercent = p.integer("GC_PERCENT", 0, 0, 10_000)
	}
}

// gcOff is config.GCPercent for GC_PERCENT=off: the collector runs only
// when the heap nears the memory limit (debug.SetGCPercent(-1)).
const gcOff = -1

// loadSecrets reads the session secret and the credentials keys into c;
// a secure deployment must have both to serve (serving).
func loadSecrets(p *parser, c *config, serving bool) {
	if s := p.secretValue("SESSION_SECRET"); s != "" {
		if len(s) < 32 {
			p.fail("SESSION_SECRET", "must be at least 32 bytes, got %d", len(s))
		}
		c.SessionSecret = []byte(s)
	}
	if s := p.secretValue("CREDENTIALS_KEY"); s != "" {
		c.CredentialsKey = p.key("CREDENTIALS_KEY", s)
	}
	if s := p.secretValue("CREDENTIALS_KEY_PREVIOUS"); s != "" {
		for _, k := range strings.Split(s, ",") {
			if k = strings.TrimSpace(k); k != "" {
				c.CredentialsKeyPrevious = append(c.CredentialsKeyPrevious, p.key("CREDENTIALS_KEY_PREVIOUS", k))
			}
		}
	}
	if c.SessionSecure && serving {
		if c.SessionSecret == nil {
			p.fail("SESSION_SECRET", "is required when SESSION_SECURE=true")
		}
		if c.CredentialsKey == nil {
			p.fail("CREDENTIALS_KEY", "is required when SESSION_SECURE=true")
		}
	}
}

// isLoopback reports whether host is one docs/configuration.md allows over plain
// http: localhost, 127.0.0.1 or ::1, exactly.
func isLoopback(host string) bool {
	switch host {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// privateTargets reads PRIVATE_TARGETS, refusing an entry that could
// open nothing: one wholly inside loopback, link-local or a metadata
// address, which only ALLOW_PRIVATE_TARGETS=true reaches.
func privateTargets(p *parser) []netip.Prefix {
	prefixes, err := httpx.ParsePrefixes(p.str("PRIVATE_TARGETS", ""))
	if err != nil {
		p.fail("PRIVATE_TARGETS", "%v", err)
		return nil
	}
	for _, pr := range prefixes {
		if netguard.ServerOnly(pr) {
			p.fail("PRIVATE_TARGETS", "cannot allow %s: loopback, link-local and metadata addresses are reached only with ALLOW_PRIVATE_TARGETS=true", pr)
			return nil
		}
	}
	return prefixes
}
