package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"time"

	"searchsvc/auth"
	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/dropbox"
	"searchsvc/integrations/feed"
	"searchsvc/integrations/folder"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/imap"
	"searchsvc/integrations/index"
	"searchsvc/integrations/netguard"
	"searchsvc/integrations/records"
	"searchsvc/integrations/search"
	"searchsvc/integrations/slack"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/webdav"
	"searchsvc/oauth"
	"searchsvc/sessions"
	"searchsvc/storage"
	"searchsvc/web"
)

// app is the service's state: both stores (opened by openStores) and
// what is built on them.
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
	indexer      *index.Indexer
	metrics      *metrics
	dashboard    *dashboard // GET /v1/admin/dashboard's own figures
	web          *web.App   // the app served at /, a client of the API
}

// registry is the catalogue of integrations the service ships. The IMAP
// host is the user's choice, so its connections are made by dial (a
// netguard.Dialer's; nil: any address); folders may be connected under
// folderRoots (FOLDER_ROOTS; none: not at all).
func registry(dial func(ctx context.Context, network, address string) (net.Conn, error), folderRoots ...string) (*integrations.Registry, error) {
	return integrations.NewRegistry(
		gmail.Definition(),
		slack.Definition(),
		dropbox.Definition(),
		imap.Dialer{DialContext: dial}.Definition(),
		feed.Definition(),
		folder.Definition(folder.Config{Roots: folderRoots}),
		webdav.Definition(webdav.Config{}),
	)
}

// outboundTimeout bounds every request to a provider.
const outboundTimeout = 30 * time.Second

// outbound is how the service reaches providers: the integrations it
// ships, the clients of their requests and their client configuration.
type outbound struct {
	reg *integrations.Registry
	// client makes the integrations' requests; manual those of manual
	// integrations, whose targets users choose.
	client, manual *http.Client
	// getenv reads <DOMAIN>_OAUTH_CLIENT_ID and the like.
	getenv func(string) string
}

// newOutbound builds the registry and the clients. Users choose the
// targets of manual integrations; unless the administrator allows it,
// those may not be this server's own network. Integration client secrets
// may come from files like every secret.
func newOutbound(c *config, getenv func(string) string, log *slog.Logger) (outbound, error) {
	guard := &netguard.Dialer{Allowed: c.PrivateTargets}
	dial, manual := guard.DialContext, guard.Client(outboundTimeout)
	if c.AllowPrivateTargets {
		dial, manual = nil, &http.Client{Timeout: outboundTimeout}
	}
	reg, err := registry(dial, c.FolderRoots...)
	if err != nil {
		return outbound{}, err
	}
	secret := secretEnv(getenv)
	providerEnv := func(name string) string {
		v, err := secret(name)
		if err != nil {
			log.Error("read configuration", "variable", name, "err", err)
		}
		return v
	}
	return outbound{reg: reg, client: &http.Client{Timeout: outboundTimeout}, manual: manual, getenv: providerEnv}, nil
}

// openApp opens the stores under DATA_DIR (openStores) and builds the
// packages on them: the syncer, the search index and its indexer, the
// handlers.
func openApp(c *config, getenv func(string) string, log *slog.Logger) (*app, error) {
	return openAppPhased(c, getenv, log, func() {})
}

// openAppPhased is openApp calling endPhase (serve's settleStart) where
// one phase of the opening ends and the next begins: once the web app's
// files are hashed and compressed, once the logs are replayed, and once
// the search index is open (with the syncer), before the handlers are
// built: run in one phase, the index's code and the handlers' made the
// start's peak RSS at 100,000 items.
func openAppPhased(c *config, getenv func(string) string, log *slog.Logger, endPhase func()) (*app, error) {
	out, err := newOutbound(c, getenv, log)
	if err != nil {
		return nil, err
	}
	webApp, err := web.New(c.BaseURL.String())
	if err != nil {
		return nil, err
	}
	endPhase()
	s, err := openStores(c, log)
	if err != nil {
		return nil, err
	}
	endPhase()
	a := &app{mainStore: s.main, sessionStore: s.session, sessions: s.sessions, users: s.users,
		records: s.records, web: webApp, metrics: newMetrics(c.DataDir), dashboard: newDashboard(c.DataDir, s.items)}
	if err := a.buildSyncAndSearch(c, s, out, log); err != nil {
		s.closeStores()
		return nil, err
	}
	endPhase()
	if a.auth, err = newAuthHandlers(c, a, log); err != nil {
		a.close(log)
		return nil, err
	}
	a.integrations, err = api.New(api.Config{
		Registry:     out.reg,
		Records:      a.records,
		Items:        s.items,
		Search:       a.index,
		Stale:        a.indexer.Stale,
		Sync:         a.syncer,
		Getenv:       out.getenv,
		Client:       out.client,
		ManualClient: out.manual,
		UserID:       userID,
		Logger:       log.With("component", "integrations"),
	})
	if err != nil {
		a.close(log)
		return nil, err
	}
	a.oauth, err = oauth.NewHandlers(oauth.Config{
		Registry:     out.reg,
		Records:      a.records,
		Sessions:     a.sessions,
		Getenv:       out.getenv,
		Client:       out.client,
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
	a.metrics.attach(a)
	return a, nil
}

// buildSyncAndSearch opens the search index with its indexer and builds
// the syncer on the stores' tables, telling the indexer every change.
// The index opens only under a key that opens the store (openStores
// checked it): it opens what it can read, and the indexer rebuilds the
// rest in the background once the service serves. (The index adds
// component=search to its lines.)
func (a *app) buildSyncAndSearch(c *config, s *stores, out outbound, log *slog.Logger) error {
	sc := searchConfig(c.DataDir, s.vault, c.SearchCacheMB, log)
	sc.OnQuery = a.metrics.queries.Observe
	var err error
	a.indexer, err = index.Open(index.Config{
		Search:   sc,
		Items:    s.items,
		Registry: out.reg,
		Logger:   log.With("component", "search"),
	})
	if err != nil {
		return fmt.Errorf("open the search index: %w", err)
	}
	a.index = a.indexer.Search()
	a.syncer, err = syncer.New(syncer.Config{
		Records:      s.records,
		Items:        s.items,
		Tasks:        s.tasks,
		Registry:     out.reg,
		Getenv:       out.getenv,
		Client:       out.client,
		ManualClient: out.manual,
		PollInterval: c.PollInterval,
		Workers:      c.SyncWorkers,
		Indexer:      a.indexer,
		Logger:       log.With("component", "sync"),
	})
	if err != nil {
		// Not started: its catch-ups of damaged users stop, and it
		// records no checkpoint.
		a.indexer.Close(storage.Position{})
		return err
	}
	return nil
}

// newAuthHandlers builds the handlers of users and sessions.
func newAuthHandlers(c *config, a *app, log *slog.Logger) (*auth.Handlers, error) {
	return auth.NewHandlers(auth.Config{
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
	// Nothing changes the items any more: the indexer applies what is
	// queued, and an index that caught up holds what the store holds and
	// says so for the next start.
	if err := a.indexer.Close(a.mainStore.Position()); err != nil {
		log.Error("close the search index", "err", err)
	}
}
