package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"searchsvc/auth"
	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/dropbox"
	"searchsvc/integrations/feed"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/imap"
	"searchsvc/integrations/netguard"
	"searchsvc/integrations/records"
	"searchsvc/integrations/search"
	"searchsvc/integrations/slack"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/oauth"
	"searchsvc/sessions"
	"searchsvc/storage"
	"searchsvc/web"
)

// app is the service's state: both stores and what is built on them.
type app struct {
	mainStore    *storage.Store
	sessionStore *storage.Store
	sessions     *sessions.Manager
	users        *auth.Users
	auth         *auth.Handlers
	records      *records.Records
	integrations *api.Handlers
	oauth        *oauth.Handlers
	syncer       *syncer.Syncer
	index        *search.Index
	indexer      *indexer
	metrics      *metrics
	web          *web.App // the app served at /, a client of the API
}

// registry is the catalogue of integrations the service ships. The IMAP
// host is the user's choice, so its connections are vetted by control
// (nil: any address).
func registry(control func(network, address string, c syscall.RawConn) error) (*integrations.Registry, error) {
	return integrations.NewRegistry(
		gmail.Definition(),
		slack.Definition(),
		dropbox.Definition(),
		imap.Dialer{Control: control}.Definition(),
		feed.Definition(),
	)
}

// sessionLoneWindow is the session store's storage.Options.LoneWindow:
// below the cost of an fsync on an SD card, small beside a login's hash.
const sessionLoneWindow = 10 * time.Millisecond

// outboundTimeout bounds every request to a provider.
const outboundTimeout = 30 * time.Second

// openApp opens both stores under DATA_DIR and builds the packages on
// them. Tables are registered before each store opens (replay needs them).
func openApp(c *config, getenv func(string) string, log *slog.Logger) (*app, error) {
	// Users choose the targets of manual integrations; unless the
	// administrator allows it, those may not be this server's own network.
	control, manualClient := netguard.PublicOnly, netguard.PublicClient(outboundTimeout)
	if c.AllowPrivateTargets {
		control, manualClient = nil, &http.Client{Timeout: outboundTimeout}
	}
	reg, err := registry(control)
	if err != nil {
		return nil, err
	}
	webApp, err := web.New()
	if err != nil {
		return nil, err
	}
	v, err := vault.NewVault(c.CredentialsKey, c.CredentialsKeyPrevious...)
	if err != nil {
		return nil, fmt.Errorf("CREDENTIALS_KEY: %w", err)
	}
	// Integration client secrets may come from files like every secret.
	secret := secretEnv(getenv)
	providerEnv := func(name string) string {
		v, err := secret(name)
		if err != nil {
			log.Error("read configuration", "variable", name, "err", err)
		}
		return v
	}
	mode, err := storage.ParseSyncMode(c.StoreSync)
	if err != nil {
		return nil, fmt.Errorf("STORE_SYNC: %w", err)
	}
	a := &app{
		mainStore: storage.New(filepath.Join(c.DataDir, mainStoreDir), storage.Options{
			Sync: mode, Logger: log.With("component", "storage", "store", mainStoreDir)}),
		// Logins commit one by one, spaced by the limit on concurrent
		// password hashes: a short wait lets two of them share an fsync.
		sessionStore: storage.New(filepath.Join(c.DataDir, sessionStoreDir), storage.Options{
			Sync: mode, Logger: log.With("component", "storage", "store", sessionStoreDir),
			LoneWindow: sessionLoneWindow}),
	}
	a.web = webApp
	if a.users, err = auth.NewUsers(a.mainStore, c.CredentialsKey, c.CredentialsKeyPrevious...); err != nil {
		return nil, fmt.Errorf("CREDENTIALS_KEY: %w", err)
	}
	a.records = records.New(a.mainStore, v, nil)
	// The search index follows the item store: the indexer is the
	// syncer's Indexer, completed once the index is open.
	x := newIndexer()
	client := &http.Client{Timeout: outboundTimeout}
	a.syncer, err = syncer.New(syncer.Config{
		Records:      a.records,
		Registry:     reg,
		DataDir:      c.DataDir,
		Getenv:       providerEnv,
		Client:       client,
		ManualClient: manualClient,
		PollInterval: c.PollInterval,
		Workers:      c.SyncWorkers,
		Indexer:      x,
		Logger:       log.With("component", "sync"),
	})
	if err != nil {
		return nil, err
	}
	a.sessions, err = sessions.New(a.sessionStore, sessions.Config{
		MaxAge:         c.SessionMaxAge,
		IdleTimeout:    c.SessionIdleTimeout,
		Sliding:        c.SessionSliding,
		RenewThreshold: c.SessionRenewThreshold,
		Secure:         c.SessionSecure,
		BindIP:         c.SessionBindIP,
		CSRF:           c.CSRFTokens,
		Secret:         c.SessionSecret,
		Logger:         log.With("component", "sessions"),
	})
	if err != nil {
		return nil, err
	}
	// The two logs replay side by side: start-up after a power cut is the
	// time to open both, and each decodes on every core it can get.
	var sessErr error
	done := make(chan struct{})
	go func() { defer close(done); sessErr = a.sessionStore.Open() }()
	mainErr := a.mainStore.Open()
	<-done
	if mainErr != nil || sessErr != nil {
		if mainErr == nil {
			a.mainStore.Close()
		}
		if sessErr == nil {
			a.sessionStore.Close()
		}
		return nil, errors.Join(wrapErr("open main store", mainErr), wrapErr("open session store", sessErr))
	}
	// A key that cannot open what the store holds would start cleanly and
	// then fail every request that opens something: refuse to start.
	if err := a.syncer.CheckKeys(); err != nil {
		a.mainStore.Close()
		a.sessionStore.Close()
		return nil, err
	}
	// Data an older version stored in clear, or under a previous
	// CREDENTIALS_KEY, is sealed under the current keys before serving.
	a.sessions.LoadSeen()
	nSessions, err := a.sessions.ConvertLegacy()
	var nUsers int
	if err == nil {
		nUsers, err = a.users.ConvertUsers()
	}
	if err != nil {
		a.mainStore.Close()
		a.sessionStore.Close()
		return nil, fmt.Errorf("seal stored data: %w", err)
	}
	if nSessions > 0 || nUsers > 0 {
		log.Info("sealed data stored in clear or under a previous key", "sessions", nSessions, "users", nUsers)
	}
	// Opened only under a key that opens the store: the index opens what
	// it can read and rebuilds the rest in the background once the
	// service serves. (The index adds component=search to its lines.)
	if a.index, err = openIndex(c.DataDir, v, c.SearchCacheMB, log, x.onDamage); err != nil {
		a.mainStore.Close()
		a.sessionStore.Close()
		return nil, fmt.Errorf("open the search index: %w", err)
	}
	a.indexer = x.connect(a.index, a.syncer.Items(), reg, log.With("component", "search"))
	a.auth, err = auth.NewHandlers(auth.Config{
		Sessions:      a.sessions,
		Users:         a.users,
		Store:         a.mainStore,
		Registration:  c.RegistrationOpen,
		CSRF:          c.CSRFTokens,
		RateLimit:     c.LoginRateLimit,
		RateWindow:    c.LoginRateWindow,
		Logger:        log.With("component", "auth"),
		OnUserDelete:  a.syncer.DeleteUserOps,
		OnUserDeleted: a.syncer.DeletedUser,
		// Each Argon2 hash allocates 19 MiB; once a burst of logins is
		// over, that memory goes back to the system at once instead of
		// staying resident until the scavenger gets to it minutes later.
		AfterHashes: debug.FreeOSMemory,
		// Each Argon2id run allocates its 19 MiB anew; collected first,
		// the last one's is free for it. A collection of the stores'
		// tens of MB costs a fraction of the hash itself.
		BeforeHash: runtime.GC,
	})
	if err != nil {
		a.close(log)
		return nil, err
	}
	a.integrations, err = api.New(api.Config{
		Registry:     reg,
		Records:      a.records,
		Items:        a.syncer.Items(),
		Search:       a.index,
		Sync:         a.syncer,
		Getenv:       providerEnv,
		Client:       client,
		ManualClient: manualClient,
		UserID:       userID,
		Logger:       log.With("component", "integrations"),
	})
	if err != nil {
		a.close(log)
		return nil, err
	}
	a.oauth, err = oauth.NewHandlers(oauth.Config{
		Registry:     reg,
		Records:      a.records,
		Sessions:     a.sessions,
		Getenv:       providerEnv,
		Client:       client,
		RedirectBase: c.OAuthRedirectBase,
		FrontendURL:  c.FrontendURL,
		Secure:       c.SessionSecure,
		Logger:       log.With("component", "oauth"),
		OnConnect:    a.syncer.Connected,
	})
	if err != nil {
		a.close(log)
		return nil, err
	}
	a.metrics = newMetrics(a)
	return a, nil
}

// userID is the authenticated caller's id, for the packages that must not
// import auth.
func userID(r *http.Request) (string, bool) {
	u, ok := auth.UserFrom(r.Context())
	return u.ID, ok
}

// healthy reports whether neither store has failed for good (a write or
// fsync error other than a full disk: a dying SD card), which a restart
// may cure: while it is false the watchdog pings stop and systemd
// restarts the service. A full disk is not such a failure: a restart
// would not make room, and with StartLimitBurst it could take reads down
// too; the stores take writes again by themselves once there is space.
func (a *app) healthy() bool {
	return a.mainStore.Err() == nil && a.sessionStore.Err() == nil
}

// ready answers GET /readyz: 200 while both stores take writes, 503 while
// either has failed or its disk is full. While full, each call checks (at
// most once a second) whether space came back, so it turns green again
// without a restart or a user's write.
func (a *app) ready() http.Handler {
	return httpx.Handle("health.ready", func(w http.ResponseWriter, r *http.Request) error {
		if err := errors.Join(a.mainStore.CheckSpace(), a.sessionStore.CheckSpace()); err != nil {
			return httpx.Unavailable(err)
		}
		httpx.One(w, r, "health.ready", map[string]string{"status": "ready"})
		return nil
	})
}

// wrapErr prefixes err with what failed, keeping nil nil.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// close flushes what is only in memory (sessions' lastAccessedAt) and
// closes both stores.
func (a *app) close(log *slog.Logger) {
	if err := a.sessions.Flush(); err != nil {
		log.Error("flush sessions", "err", err)
	}
	for _, st := range []*storage.Store{a.sessionStore, a.mainStore} {
		if err := st.Close(); err != nil {
			log.Error("close store", "dir", st.Dir(), "err", err)
		}
	}
	// Nothing changes the items any more: an index that caught up holds
	// what the store holds, and says so for the next start.
	if a.indexer.CaughtUp() {
		a.index.SetCheckpoint(checkpoint(a.mainStore.Position()))
	}
	if err := a.index.Close(); err != nil {
		log.Error("close the search index", "err", err)
	}
}
