package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"searchsvc/httpx"
	"searchsvc/sessions"
	"searchsvc/storage"
)

// Defaults for Config.
const (
	DefaultRateLimit  = 5                // login attempts per window per client address
	DefaultRateWindow = 60 * time.Second // LOGIN_RATE_WINDOW
)

// Config wires Handlers.
type Config struct {
	Sessions *sessions.Manager // required
	Users    *Users            // required
	// Store is the main store, the one Users lives in; nil means that one.
	Store *storage.Store
	// Registration is true when anyone may register (REGISTRATION=open).
	// When false, only the very first user can.
	Registration bool
	// CSRF requires the session's CSRF token on POST, PUT, PATCH and
	// DELETE behind Require. The sessions.Manager must be configured with
	// CSRF too, or it issues no tokens.
	CSRF bool
	// RateLimit login attempts are allowed per RateWindow per client
	// address. 0: DefaultRateLimit, DefaultRateWindow.
	RateLimit  int
	RateWindow time.Duration
	// SignupRateLimit registrations are allowed per RateWindow per client
	// address. 0: RateLimit.
	SignupRateLimit int
	// Hasher hashes passwords. nil: DefaultParams, runtime.NumCPU() at once.
	Hasher *Hasher
	// AfterHashes, if set, is called in a goroutine of its own when the
	// last running password hash ends and none waits (never two at once):
	// main returns the hashes' memory to the system there
	// (debug.FreeOSMemory). It is set on Hasher.
	AfterHashes func()
	// BeforeHash, if set, is called before each password hash, once it
	// has its slot: main runs the collector there (runtime.GC), so that
	// the memory of hashes that ended is reused by the next rather than
	// held beside it as garbage, and a burst of logins holds no more than
	// the hashes running at once. It is set on Hasher.
	BeforeHash func()
	// Now is the clock. nil: time.Now.
	Now func() time.Time
	// Logger receives security events; the caller names the component.
	// nil: discard.
	Logger *slog.Logger
	// OnUserDelete returns extra ops committed atomically with a user's
	// soft delete, e.g. deleting their integration records. May be nil.
	OnUserDelete func(userID string) []storage.Op
	// OnUserDeleted is told about a user whose soft delete (with
	// OnUserDelete's ops) is committed, e.g. to drop their search index.
	// May be nil.
	OnUserDeleted func(userID string)
}

// Handlers serves the /v1/auth, /v1/user and /v1/admin routes, and
// provides the session middleware.
type Handlers struct {
	sessions     *sessions.Manager
	users        *Users
	store        *storage.Store
	open         bool
	csrf         bool
	hasher       *Hasher
	logins       *limiter[netip.Prefix] // login attempts per client address (httpx.AddrKeys)
	pwChanges    *limiter[string]       // password change attempts per user
	signups      *limiter[netip.Prefix] // registration attempts per client address (httpx.AddrKeys)
	failures     *limiter[string]       // failed logins per account, for accountDelay
	totpFailures *limiter[string]       // wrong second factor codes per user
	sleep        func(ctx context.Context, d time.Duration) error
	now          func() time.Time
	log          *slog.Logger
	onUserDelete func(string) []storage.Op
	onDeleted    func(string)
}

// NewHandlers returns Handlers for cfg. Without cfg.Sessions or cfg.Users
// it is an error.
func NewHandlers(cfg Config) (*Handlers, error) {
	if cfg.Sessions == nil || cfg.Users == nil {
		return nil, errors.New("auth: NewHandlers needs Sessions and Users")
	}
	if cfg.Store == nil {
		cfg.Store = cfg.Users.st
	}
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = DefaultRateLimit
	}
	if cfg.RateWindow <= 0 {
		cfg.RateWindow = DefaultRateWindow
	}
	if cfg.Hasher == nil {
		h, err := NewHasher(DefaultParams(), 0)
		if err != nil {
			return nil, fmt.Errorf("auth: the default hasher: %w", err)
		}
		cfg.Hasher = h
	}
	cfg.Hasher.idle = cfg.AfterHashes
	cfg.Hasher.before = cfg.BeforeHash
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handlers{
		sessions:     cfg.Sessions,
		users:        cfg.Users,
		store:        cfg.Store,
		open:         cfg.Registration,
		csrf:         cfg.CSRF,
		hasher:       cfg.Hasher,
		logins:       newAddrLimiter(cfg.RateLimit, cfg.RateWindow, defaultMaxTracked),
		pwChanges:    newLimiter[string](cfg.RateLimit, cfg.RateWindow, defaultMaxTracked),
		signups:      newAddrLimiter(cmp.Or(cfg.SignupRateLimit, cfg.RateLimit), cfg.RateWindow, defaultMaxTracked),
		failures:     newLimiter[string](accountFreeFailures, accountFailureWindow, defaultMaxTracked),
		totpFailures: newLimiter[string](totpFreeFailures, totpFailureWindow, defaultMaxTracked),
		sleep:        sleepCtx,
		now:          func() time.Time { return cfg.Now().UTC() },
		log:          cfg.Logger,
		onUserDelete: cfg.OnUserDelete,
		onDeleted:    cfg.OnUserDeleted,
	}, nil
}

// Per-account failed logins: after accountFreeFailures failures within
// accountFailureWindow, every login to that account, right or wrong,
// first waits accountDelay. A delay, not a lock-out: an attacker who
// fails on purpose only makes the owner's next login slower by that much,
// while guessing the account costs the attacker accountDelay per guess on
// top of the per-address limit, whichever addresses it comes from.
const (
	accountFreeFailures  = 10
	accountFailureWindow = 15 * time.Minute
	accountDelay         = 2 * time.Second
)

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// endpoint returns one of auth's handlers in the service's handler shape:
// its errors, auth's sentinels among them, are mapped to their answers by
// httpError before httpx writes them.
func endpoint(op string, fn httpx.HandlerFunc) *httpx.Endpoint {
	return httpx.Handle(op, func(w http.ResponseWriter, r *http.Request) error {
		if err := fn(w, r); err != nil {
			return httpError(err)
		}
		return nil
	})
}

// userView is a user as responses show it.
type userView struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"createdAt"`
	// TOTPEnabled is whether the second factor is on.
	TOTPEnabled bool `json:"totpEnabled"`
}

func viewUser(u User) userView {
	return userView{ID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role, CreatedAt: u.CreatedAt, TOTPEnabled: u.TOTPEnabled}
}

// sessionView is a session as the session lists show it: never its CSRF
// token.
type sessionView struct {
	SessionID      string       `json:"sessionId"`
	UserID         string       `json:"userId"`
	CreatedAt      time.Time    `json:"createdAt"`
	LastAccessedAt time.Time    `json:"lastAccessedAt"`
	ExpiresAt      time.Time    `json:"expiresAt"`
	IPAddress      string       `json:"ipAddress"`
	UserAgent      string       `json:"userAgent"`
	Metadata       metadataView `json:"metadata"`
	Current        bool         `json:"current"`
}

type metadataView struct {
	LoginMethod string `json:"loginMethod"`
	DeviceName  string `json:"deviceName,omitempty"`
	Location    string `json:"location,omitempty"`
}

func viewSession(s sessions.Session, current string) sessionView {
	return sessionView{
		SessionID: s.ID, UserID: s.UserID,
		CreatedAt: s.CreatedAt.UTC(), LastAccessedAt: s.LastAccessedAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(),
		IPAddress: s.IPAddress, UserAgent: s.UserAgent,
		Metadata: metadataView{LoginMethod: s.Metadata.LoginMethod, DeviceName: s.Metadata.DeviceName, Location: s.Metadata.Location},
		Current:  s.ID == current,
	}
}

// success writes {"success": true} and any extra fields.
func success(w http.ResponseWriter, r *http.Request, op string, extra ...httpx.Field) {
	httpx.Write(w, r, http.StatusOK, op, append([]httpx.Field{httpx.F("success", true)}, extra...)...)
}
