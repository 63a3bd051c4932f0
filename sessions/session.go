// Package sessions owns server-side sessions: their records in the session
// store (a storage.Store of its own, separate from the main database), the
// svc_session cookie, absolute and idle expiry, sliding renewal, the client
// address check, and lastAccessedAt, which is kept exact in memory and
// written to disk only in the background, so that an authenticated request
// costs no write to the SD card.
package sessions

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"searchsvc/integrations/textguard"
	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

// Session is one server-side session. JSON field names are the API's
// (openapi.json's Session).
type Session struct {
	ID             string    `json:"sessionId"`
	UserID         string    `json:"userId"`
	CreatedAt      time.Time `json:"createdAt"`
	LastAccessedAt time.Time `json:"lastAccessedAt"`
	ExpiresAt      time.Time `json:"expiresAt"`
	IPAddress      string    `json:"ipAddress"`
	UserAgent      string    `json:"userAgent"`
	Metadata       Metadata  `json:"metadata"`
	CSRFToken      string    `json:"csrfToken,omitempty"` // stored in the session record; never listed
}

// Metadata describes how a session came to be.
type Metadata struct {
	LoginMethod string `json:"loginMethod"` // "password" | "oauth"
	DeviceName  string `json:"deviceName,omitempty"`
	Location    string `json:"location,omitempty"`
}

// Login methods, the values of Metadata.LoginMethod.
const (
	LoginPassword = "password"
	LoginOAuth    = "oauth"
)

// LogValue logs a session without its id and CSRF token, which are
// credentials: the id is the cookie value.
func (s Session) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("user_id", s.UserID),
		slog.String("session_ref", Ref(s.ID)),
		slog.Time("expires_at", s.ExpiresAt),
	)
}

// Ref returns a short reference to a session id for logs: the first 12 hex
// digits of its SHA-256. It identifies a session across log lines without
// revealing the id, which is a bearer credential.
func Ref(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:6])
}

// Errors of the cookie, the lookup and the validation of a session: the
// one vocabulary of session failures. Their messages are the API's 401
// and 404 messages (openapi.json); auth returns them as they are.
var (
	ErrNoCookie = errors.New("no session cookie")
	ErrInvalid  = errors.New("invalid session")
	ErrExpired  = errors.New("session expired")
	ErrNotFound = errors.New("session not found")
)

// Defaults for Config, and fixed limits.
const (
	DefaultMaxAge         = 7 * 24 * time.Hour // SESSION_MAX_AGE
	DefaultIdleTimeout    = 24 * time.Hour     // SESSION_IDLE_TIMEOUT
	DefaultRenewThreshold = 24 * time.Hour     // SESSION_RENEW_THRESHOLD
	// MaxTouchInterval caps the default TouchInterval.
	MaxTouchInterval = 15 * time.Minute
	// FlushEvery is how often Run writes due lastAccessedAt values.
	FlushEvery = time.Minute
	// MaxUserAgent is the longest user agent stored, in bytes.
	MaxUserAgent = 512
	// DefaultMaxPerUser is how many sessions one user may hold: a new one
	// beyond it ends the oldest. Twenty covers every device of a
	// household; without a bound one user could fill the session store
	// and make their own session list megabytes long.
	DefaultMaxPerUser = 20
	// maxOps bounds the ops of one Commit made by Flush and Cleanup, so
	// that a log line, and the writer's buffer for it, stay a few MiB even
	// with very many sessions.
	maxOps = 4096
)

// Config configures a Manager. Zero durations take the defaults.
type Config struct {
	MaxAge         time.Duration    // SESSION_MAX_AGE, default 7 days
	IdleTimeout    time.Duration    // SESSION_IDLE_TIMEOUT, default 24 h
	Sliding        bool             // SESSION_SLIDING
	RenewThreshold time.Duration    // SESSION_RENEW_THRESHOLD, default 24 h
	Secure         bool             // cookie Secure flag (SESSION_SECURE)
	BindIP         bool             // SESSION_BIND_IP
	CSRF           bool             // CSRF_TOKENS: Create generates a token (32 random bytes, base64url) into the session
	Secret         []byte           // SESSION_SECRET: the keys that seal records and index them by id; required
	TouchInterval  time.Duration    // 0: min(15 min, IdleTimeout/4, MaxAge/4): how stale lastAccessedAt may be on disk
	MaxPerUser     int              // 0: DefaultMaxPerUser
	Now            func() time.Time // nil: time.Now
	Logger         *slog.Logger     // nil: discard
}

func (c Config) withDefaults() Config {
	if c.MaxAge <= 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.RenewThreshold <= 0 {
		c.RenewThreshold = DefaultRenewThreshold
	}
	if c.TouchInterval <= 0 {
		// It follows the max age too: a short SESSION_MAX_AGE gets
		// renewals (and flushes) often enough to keep a session in use
		// alive (see Validate).
		c.TouchInterval = min(MaxTouchInterval, c.IdleTimeout/4, c.MaxAge/4)
	}
	if c.MaxPerUser <= 0 {
		c.MaxPerUser = DefaultMaxPerUser
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Manager creates, validates and ends sessions. It is safe for concurrent
// use.
type Manager struct {
	store *storage.Store
	tab   *storage.Table[record]
	ended *storage.Table[Ended] // per user: sessions ended by MaxPerUser
	seen  *storage.Table[seenRecord]
	keys  keys
	cfg   Config
	log   *slog.Logger

	// mu guards entries: the in-memory state of sessions met since start,
	// by record id (key).
	// It is never held while calling the store, and the store never calls
	// back, so the two locks never nest.
	mu      sync.RWMutex
	entries map[string]*entry
	// keyOf caches the record key (an HMAC) of the session ids met by
	// Validate, by id, so that a request of a known session computes no
	// HMAC. Only ids whose record was found go in, so its size is bounded
	// by the sessions met, not by what clients send; forget drops them.
	keyOf map[string]string

	// flushMu serialises Flush and Run's flushes and owns scratch.
	flushMu sync.Mutex
	scratch []idEntry

	// tick starts Run's ticker; time.NewTicker in production, a channel
	// the test drives in tests.
	tick func(d time.Duration) (c <-chan time.Time, stop func())
	// afterTick, if set, is called when Run has done a tick's work, so a
	// test knows when to look.
	afterTick func()
}

// New returns a Manager keeping its sessions in st. It registers its
// tables on st, so it must be called before st.Open; after st.Open, call
// LoadSeen once. Without cfg.Secret it is an error.
func New(st *storage.Store, cfg Config) (*Manager, error) {
	cfg = cfg.withDefaults()
	k, err := newKeys(cfg.Secret)
	if err != nil {
		return nil, err
	}
	m := &Manager{
		store:   st,
		keys:    k,
		cfg:     cfg,
		log:     cfg.Logger,
		entries: make(map[string]*entry),
		keyOf:   make(map[string]string),
		tick: func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		},
	}
	m.tab = storage.Register(st, "sessions_sealed", storage.TableConfig[record]{
		ID: func(r *record) string { return r.ID },
		// Only absolute expiry: the idle check needs the in-memory
		// lastAccessedAt, which the store does not see.
		Expired: func(r *record, now time.Time) bool { return now.After(fromSecs(r.Expires)) },
		Index:   map[string]func(*record) string{"user": func(r *record) string { return r.UserID }},
		Pack:    pack,
		// The sealed parts stay in the log until needed: they are most
		// of a record, and a session's are read once it is met.
		Cold: &storage.Cold[record]{
			Strip: func(r *record) { r.Sealed = "" },
			Ref:   func(r *record) *storage.ColdRef { return &r.Cold },
		},
	})
	m.ended = storage.Register(st, "sessions_ended", storage.TableConfig[Ended]{
		ID: func(e *Ended) string { return e.UserID },
	})
	m.seen = storage.Register(st, seenTable, storage.TableConfig[seenRecord]{
		ID: func(r *seenRecord) string { return r.ID },
	})
	return m, nil
}

// Ended tells a user that sessions of theirs were ended to make room for
// new ones (Config.MaxPerUser): how many in all, and when the last was.
// The session list shows it, so a user whose old sessions vanish learns
// why, and one who did not sign in that often learns someone else did.
type Ended struct {
	UserID string    `json:"userId"`
	Count  int       `json:"count"`
	LastAt time.Time `json:"lastAt"`
}

// EndedByLimit returns what Ended holds for userID, if any.
func (m *Manager) EndedByLimit(userID string) (Ended, bool) {
	return m.ended.Get(userID)
}

// MaxPerUser is how many sessions a user may hold.
func (m *Manager) MaxPerUser() int { return m.cfg.MaxPerUser }

// capOps are the ops that end the oldest sessions of userID so that one
// more fits within MaxPerUser, and note them in Ended.
func (m *Manager) capOps(userID string, now time.Time) ([]storage.Op, []string) {
	held := m.tab.Find("user", userID)
	over := len(held) - m.cfg.MaxPerUser + 1
	if over <= 0 {
		return nil, nil
	}
	slices.SortFunc(held, func(a, b record) int {
		if c := cmp.Compare(a.Created, b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	ops := make([]storage.Op, 0, over+1)
	ids := make([]string, 0, over)
	for _, s := range held[:over] {
		ops = append(ops, m.tab.DeleteIfExists(s.ID, nil))
		ids = append(ids, s.ID)
	}
	e, _ := m.ended.Get(userID)
	e.UserID, e.Count, e.LastAt = userID, e.Count+over, now
	return append(ops, m.ended.Put(e)), ids
}

// Create starts a session for userID and returns it once it is durable.
// ip is the client address; userAgent is kept up to MaxUserAgent bytes.
func (m *Manager) Create(userID string, ip netip.Addr, userAgent, loginMethod string) (Session, error) {
	if userID == "" {
		return Session{}, errors.New("sessions: create: empty user id")
	}
	if loginMethod != LoginPassword && loginMethod != LoginOAuth {
		return Session{}, fmt.Errorf("sessions: create: unknown login method %q", loginMethod)
	}
	now := m.cfg.Now().UTC()
	s := Session{
		ID:             uuid.New(),
		UserID:         userID,
		CreatedAt:      toSecond(now), // as the record keeps them
		LastAccessedAt: toSecond(now),
		ExpiresAt:      toSecond(now.Add(m.cfg.MaxAge)),
		// Made valid first, so that what is stored is what a JSON round
		// trip gives back.
		UserAgent: textguard.Truncate(strings.ToValidUTF8(userAgent, "\uFFFD"), MaxUserAgent),
		Metadata:  Metadata{LoginMethod: loginMethod},
	}
	if ip.IsValid() {
		s.IPAddress = ip.Unmap().WithZone("").String()
	}
	if m.cfg.CSRF {
		var b [32]byte
		rand.Read(b[:]) // never returns an error; it crashes the program instead
		s.CSRFToken = base64.RawURLEncoding.EncodeToString(b[:])
	}
	ops, ended := m.capOps(userID, now)
	if err := m.store.Commit(append(ops, m.tab.Insert(m.seal(s)))...); err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	for _, id := range ended {
		m.forget(id)
	}
	if len(ended) > 0 {
		m.log.Info("oldest sessions ended: too many for one user", "user_id", userID, "ended", len(ended), "limit", m.cfg.MaxPerUser)
	}
	return s, nil
}

// Get returns the session with id as stored, expired or not, with its
// in-memory lastAccessedAt.
func (m *Manager) Get(id string) (Session, bool) {
	r, ok := m.tab.Get(m.key(id))
	if !ok {
		return Session{}, false
	}
	s, err := m.open(r)
	if err != nil {
		return Session{}, false
	}
	s.LastAccessedAt = m.lastAccess(r.ID, fromSecs(r.Accessed))
	return s, true
}

// Delete ends the session with id and returns once that is durable, so a
// revoked session never comes back after a crash. It returns ErrNotFound if
// there is no such session, or another request deleted it first; that
// too only once the other deletion is durable (DeleteIfExists is answered
// with the batch of the commits ahead of it, where plain Delete would fail
// before that batch is written).
func (m *Manager) Delete(id string) error {
	key := m.key(id)
	if _, ok := m.tab.Get(key); !ok {
		return ErrNotFound // memory drops a record only once its deletion is durable
	}
	var found bool
	if err := m.store.Commit(m.tab.DeleteIfExists(key, &found)); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	m.forget(key)
	if !found {
		return ErrNotFound
	}
	return nil
}

// DeleteUser ends every session of userID except keep ("" keeps none) in
// one durable Commit, and returns how many it ended. Sessions that others
// delete meanwhile are left to them; they are gone either way.
func (m *Manager) DeleteUser(userID, keep string) (int, error) {
	keepKey := ""
	if keep != "" {
		keepKey = m.key(keep)
	}
	var ids []string
	for _, r := range m.tab.Find("user", userID) {
		if r.ID != keepKey {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := m.deleteAll(ids)
	if err != nil {
		return 0, fmt.Errorf("delete sessions of user: %w", err)
	}
	return n, nil
}

// List returns the active sessions of userID (neither expired nor idle
// beyond the idle timeout), newest first, with their in-memory
// lastAccessedAt and without their CSRF tokens.
func (m *Manager) List(userID string) []Session {
	now := m.cfg.Now()
	var out []Session
	for _, r := range m.tab.Find("user", userID) {
		last := m.lastAccess(r.ID, fromSecs(r.Accessed))
		if !m.active(fromSecs(r.Expires), last, now) {
			continue
		}
		s, err := m.open(r)
		if err != nil {
			m.log.Error("session record does not open", "user_id", userID, "err", err)
			continue
		}
		s.CSRFToken, s.LastAccessedAt = "", last
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Session) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// active reports whether a session expiring at expires and last accessed
// (in memory) at last is neither past its expiry nor idle beyond the idle
// timeout at now.
func (m *Manager) active(expires, last, now time.Time) bool {
	return !now.After(expires) && now.Sub(last) <= m.cfg.IdleTimeout
}
