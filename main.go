// Command searchsvc is a self-hosted, privacy-focused search service: it
// registers users, keeps them signed in with server-side cookie sessions,
// connects their external services through OAuth 2.0 or a manual form, and
// syncs their data in the background. One binary, one data directory.
//
// Usage:
//
//	searchsvc [serve]         run the server (the default)
//	searchsvc version         print the version
//	searchsvc verify          check the stores for damage
//	searchsvc repair [--yes]  rewrite a damaged store keeping every intact record
//	searchsvc admin grant|revoke EMAIL
//	searchsvc rotate-key      re-seal credentials, items and the index under the new CREDENTIALS_KEY
//	searchsvc reindex         rebuild the search index from the stored items
//	searchsvc backup DIR      snapshot DATA_DIR while the server runs
//	searchsvc restore DIR     put a snapshot back into an empty DATA_DIR
//	searchsvc help            list commands and configuration variables
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"searchsvc/httpx"
	"searchsvc/httpx/monitor"
	"searchsvc/storage"
)

// version is stamped at build time with -ldflags "-X main.version=…".
var version = "dev"

// shutdownTimeout bounds a graceful stop: in-flight requests get this long
// after SIGTERM before the stores are flushed and the process exits. It is
// half of the 30 s searchsvc.service allows a stop (TimeoutStopSec) before
// systemd kills the process, so that the final flush fits in the rest.
const shutdownTimeout = 15 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "searchsvc: %v\n", err)
		os.Exit(1)
	}
}

// run is the whole program, with its outside world passed in so that tests
// can start it on port 0 with an environment of their own.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 1 {
		cmd = args[1]
	}
	switch cmd {
	case "serve":
		return serve(ctx, getenv, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "searchsvc %s %s\n", version, goVersion())
		return nil
	case "verify":
		return verifyCmd(getenv, stdout)
	case "repair":
		return repairCmd(getenv, args[2:], stdout)
	case "admin":
		return adminCmd(getenv, args[2:], stdout, stderr)
	case "rotate-key":
		return rotateKeyCmd(getenv, stdout, stderr)
	case "reindex":
		return reindexCmd(getenv, stdout, stderr)
	case "backup":
		return backupCmd(getenv, args[2:], stdout)
	case "restore":
		return restoreCmd(getenv, args[2:], stdout, stderr)
	case "help", "--help", "-h":
		usage(stdout)
		return nil
	default:
		usage(stderr)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `searchsvc: a self-hosted, privacy-focused search service.

Commands:
  serve      run the server (the default when no command is given)
  version    print the version
  verify     check both stores under DATA_DIR for damage (safe while serving)
  repair     say what a repair of a damaged store keeps and drops; with
             --yes (server stopped) rewrite it keeping every intact record,
             print what was lost, and keep the original file beside it
  admin grant|revoke EMAIL
             give or take the admin role (recovery; the server must be stopped)
  rotate-key re-seal credentials, items and the search index under
             CREDENTIALS_KEY that are still under a CREDENTIALS_KEY_PREVIOUS
             key (server stopped); on a development data directory, under
             a new key it generates into DATA_DIR/dev-secrets.json
  reindex    rebuild the search index from the stored items (server
             stopped); the index also rebuilds itself at start when damaged
             or missing
  backup DIR take a consistent snapshot of DATA_DIR into DIR while serving
  restore DIR
             put a backup into an empty DATA_DIR (server stopped)
  help       this text

Commands take a secret that is not set from DATA_DIR/dev-secrets.json,
which a development server (SESSION_SECURE=false, make run) generates, when
that file exists; the server takes it only with SESSION_SECURE=false.

Configuration (environment; secrets also as NAME_FILE=path or a file in
$CREDENTIALS_DIRECTORY named like the variable in lower case):
`)
	for _, v := range envVars {
		fmt.Fprintf(w, "  %-34s %s\n", v[0], v[1])
	}
}

func goVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.GoVersion
	}
	return ""
}

func newLogger(c *config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serve runs the HTTP server until ctx is cancelled (SIGTERM or SIGINT),
// then stops accepting, lets in-flight requests finish within
// shutdownTimeout and closes the stores.
func serve(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	c, log, err := serveConfig(getenv, stderr)
	if err != nil {
		return err
	}
	// The dashboard shows the last errors logged from here on, as
	// sentences without the lines' values.
	lastErrors := monitor.NewErrors(lastErrorsKept, nil)
	log = slog.New(lastErrors.Handler(log.Handler()))
	notify := newNotifier(getenv)
	notify.log = log.With("component", "systemd")
	// Until it is ready, the start asks systemd for more time as it
	// goes: opening the stores and the start's steps can take minutes
	// after a crash or an upgrade (notifier.ExtendStart).
	starting, started := context.WithCancel(ctx)
	defer started()
	go notify.ExtendStart(starting)
	a, err := openAppPhased(c, getenv, log, settleStart)
	if err != nil {
		return err
	}
	a.dashboard.errors = lastErrors
	defer a.close(log)
	// As between the phases of openAppPhased: the search index and the
	// packages on the stores are open; the limit then follows what the
	// stores hold, without the start's garbage.
	settleStart()
	limit := newLimitFollower(c.MemoryLimit, log)
	limit.follow()
	defer limit.stop()
	if c.GCPercent == gcOff {
		// From here the limit alone starts collections (serveConfig).
		debug.SetGCPercent(-1)
	}
	api, err := apiHandler(a, c, log)
	if err != nil {
		return err
	}
	defer api.FlushAccessLog() // on the way out early; a shutdown flushes before "stopped"
	// The routes are built: the start's steps run through code of their
	// own.
	releaseStartPages()
	pos := startSteps(a)
	settleStart()
	bg := startBackground(a, log, pos)
	defer bg.stopAndWait()
	srv, err := listen(c, a, api, bg, log)
	if err != nil {
		return err
	}
	started()
	if err := notify.Ready(); err != nil {
		log.Warn("tell systemd we are ready", "err", err)
	}
	notify.Status("serving on " + srv.addr)
	releaseStartPages()
	bg.run(func(ctx context.Context) { releaseAfterStart(ctx, time.After(startSettle), releaseStartPages) })
	bg.run(func(ctx context.Context) { notify.Watchdog(ctx, a.healthy) })
	select {
	case err := <-srv.errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	notify.Stopping()
	log.Info("shutting down", "timeout", shutdownTimeout.String())
	// The syncer parks its tasks while the HTTP server drains, not after:
	// both together stay well inside systemd's TimeoutStopSec=30s, so the
	// final flush and close of the stores always run.
	bg.stop()
	err = srv.shutdown()
	api.FlushAccessLog()
	log.Info("stopped")
	return err
}

// serveConfig reads the server's configuration, builds its logger, takes
// the generated secrets of a development setup (SESSION_SECURE=false)
// with a warning, and applies the runtime's memory settings.
func serveConfig(getenv func(string) string, stderr io.Writer) (*config, *slog.Logger, error) {
	c, err := loadConfig(getenv)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: %w", err)
	}
	log := newLogger(c, stderr)
	if !c.SessionSecure {
		if err := c.devSecrets(); err != nil {
			return nil, nil, fmt.Errorf("dev secrets: %w", err)
		}
		for _, name := range c.DevSecrets {
			log.Warn("development mode: using a generated secret from DATA_DIR/dev-secrets.json; set it for production",
				"variable", name)
		}
		log.Warn("development mode: SESSION_SECURE=false, session cookies are sent over plain http")
	}
	if c.MemoryLimit > 0 {
		debug.SetMemoryLimit(c.MemoryLimit)
	}
	switch {
	case c.GCPercent == gcOff:
		// The replay's garbage is collected as it goes, so that the start
		// does not peak at the limit; serve turns the collector's target
		// off once the stores are open.
		debug.SetGCPercent(startGCPercent)
	case c.GCPercent != 0:
		debug.SetGCPercent(c.GCPercent)
	}
	return c, log, nil
}

// startSettle is how long after listening the start's background work
// (the index's comparison with the store and its catch-ups, the syncer's
// first pass; its sweep and the dashboard's first sample run before
// listening, startSteps) has run its course: a second or two at 100,000
// items on a busy Pi.
const startSettle = 5 * time.Second

// releaseAfterStart calls release once settled fires, unless ctx ends
// first. The start's background work runs on after the service listens,
// through code the first release dropped (at 100,000 items some 2 MB of
// the binary's pages, counted in RSS against nothing an idle service
// runs); released again, they come back only if that code runs again.
func releaseAfterStart(ctx context.Context, settled <-chan time.Time, release func()) {
	select {
	case <-ctx.Done():
	case <-settled:
		release()
	}
}

// startGCPercent is the collector's target while the stores open, when
// GC_PERCENT is off. The replay's heap is its live part plus this much of
// it in garbage: at 100,000 items a target of 50 made the replay the
// start's peak (VmHWM), 25 keeps it below the phases after it, for a few
// more collections of a heap of a few MB (settleStart).
const startGCPercent = 25

// background is the work that runs beside the HTTP server until stop:
// the sessions' upkeep, the index's catch-up, the syncer, the TLS
// reloader and the watchdog.
type background struct {
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// startSteps runs the start's one-off work on the open stores: the
// syncer's sweep (items.Store.Sweep and the records' recount: a commit
// when a count is off) and the dashboard's first sample (a walk of the
// content folder). serve runs them as a phase of their own, before the
// background work and the listener: run beside the first requests, as
// they were, their code added to the listener's at the start's peak RSS
// (docs/development.md, "The start's peak at 100,000 items"). It returns
// the store's position before any of their commits, which the index
// compares its checkpoint with: the commits of the sweep reach the index
// as they are made, and compared after them, a level index would be
// caught up for nothing.
func startSteps(a *app) storage.Position {
	pos := a.mainStore.Position()
	a.syncer.Sweep()
	a.dashboard.sample(a)
	return pos
}

// startBackground starts the sessions' upkeep, the index's catch-up from
// pos, where the store stood when it opened, and the syncer.
func startBackground(a *app, log *slog.Logger, pos storage.Position) *background {
	bg := &background{}
	bg.ctx, bg.stop = context.WithCancel(context.Background())
	bg.run(a.sessions.Run)
	bg.run(func(ctx context.Context) { a.indexer.Run(ctx, pos) })
	bg.run(func(ctx context.Context) { a.dashboard.run(ctx, a) })
	bg.run(func(ctx context.Context) {
		if err := a.syncer.Run(ctx); err != nil {
			log.Error("sync stopped", "err", err)
		}
	})
	return bg
}

// run runs f in the background until stop.
func (bg *background) run(f func(ctx context.Context)) {
	bg.wg.Add(1)
	go func() { defer bg.wg.Done(); f(bg.ctx) }()
}

func (bg *background) stopAndWait() {
	bg.stop()
	bg.wg.Wait()
}

// servers are the listeners serve runs: the API's and, with METRICS_ADDR,
// the metrics'. Each one's Serve error arrives on errc.
type servers struct {
	api, metrics *http.Server
	addr         string // the API's address, as listened on
	errc         chan error
}

// listen starts serving api on LISTEN_ADDR (with TLS_CERT_FILE, over TLS
// reloaded on SIGHUP) and /metrics on METRICS_ADDR if set.
func listen(c *config, a *app, api http.Handler, bg *background, log *slog.Logger) (*servers, error) {
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// A download may last far longer than a stop's grace: it ends at the
	// stop, as the client sees the answer cut.
	srv.RegisterOnShutdown(a.integrations.StopDownloads)
	certs, err := reloadTLS(c, srv, bg, log)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", c.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on LISTEN_ADDR %s: %w", c.ListenAddr, err)
	}
	ln = httpx.LimitListener(ln, c.MaxConnections, c.MaxClientConnections, c.TrustedProxies, certs == nil)
	log.Info("listening", "addr", ln.Addr().String(), "tls", certs != nil, "version", version)
	s := &servers{api: srv, addr: ln.Addr().String(), errc: make(chan error, 2)}
	go func() {
		if certs != nil {
			s.errc <- srv.ServeTLS(ln, "", "")
			return
		}
		s.errc <- srv.Serve(ln)
	}()
	if c.MetricsAddr == "" {
		return s, nil
	}
	mln, err := net.Listen("tcp", c.MetricsAddr)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("listen on METRICS_ADDR %s: %w", c.MetricsAddr, err)
	}
	mmux := http.NewServeMux()
	mmux.Handle("GET /metrics", a.metrics.prometheus(a))
	s.metrics = &http.Server{Handler: mmux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("metrics listening", "addr", mln.Addr().String())
	go func() { s.errc <- s.metrics.Serve(mln) }()
	return s, nil
}

// reloadTLS sets srv up for TLS_CERT_FILE and TLS_KEY_FILE, if set, and
// reloads them on SIGHUP until the background stops. Nil: plain HTTP.
func reloadTLS(c *config, srv *http.Server, bg *background, log *slog.Logger) (*certReloader, error) {
	if c.TLSCertFile == "" {
		return nil, nil
	}
	certs, err := newCertReloader(c.TLSCertFile, c.TLSKeyFile, log.With("component", "tls"))
	if err != nil {
		return nil, err
	}
	srv.TLSConfig = certs.tlsConfig()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	bg.run(func(ctx context.Context) {
		defer signal.Stop(hup)
		for {
			select {
			case <-hup:
				certs.reload()
			case <-ctx.Done():
				return
			}
		}
	})
	return certs, nil
}

// shutdown lets in-flight requests finish within shutdownTimeout and
// returns what went wrong on the way.
func (s *servers) shutdown() error {
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := s.api.Shutdown(sctx)
	if s.metrics != nil {
		err = errors.Join(err, s.metrics.Shutdown(sctx))
		if serr := <-s.errc; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
	}
	if serr := <-s.errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// accessLogDelay is how long an access line may wait to be written with
// others (httpx.Config.AccessLogDelay).
const accessLogDelay = 250 * time.Millisecond

// apiHandler is the whole HTTP stack as the service serves it, for run and
// for the benchmark that measures it.
func apiHandler(a *app, c *config, log *slog.Logger) (*httpx.Stack, error) {
	return apiHandlerClock(a, c, log, time.Now)
}

// apiHandlerClock is apiHandler with the access log's clock given, for the
// benchmark that counts what a day of requests logs.
func apiHandlerClock(a *app, c *config, log *slog.Logger, now func() time.Time) (*httpx.Stack, error) {
	mux := http.NewServeMux()
	addRoutes(mux, a)
	return httpx.Handler(mux, httpx.Config{Logger: log, TrustedProxies: c.TrustedProxies, Now: now,
		Observe: a.metrics.observe, AccessLogDelay: accessLogDelay, TrustedOrigins: c.trustedOrigins(),
		BodyBytesInFlight: c.BodyMemory, AccessLog: c.AccessLog, NotFound: http.HandlerFunc(a.web.NotFound)})
}

// router is what addRoutes registers on: the http.ServeMux, or a recorder
// in the test that holds the OpenAPI document to the routes.
type router interface {
	Handle(pattern string, handler http.Handler)
}

// openAPIDoc is the API description served at /v1/openapi.json; a test
// keeps it and addRoutes in step.
//
//go:embed openapi.json
var openAPIDoc []byte

// addRoutes is the whole API in one list.
func addRoutes(mux router, a *app) {
	mux.Handle("GET /healthz", httpx.Health())
	mux.Handle("GET /v1/openapi.json", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPIDoc)
	}))
	mux.Handle("GET /readyz", a.ready())

	au := a.auth
	mux.Handle("POST /v1/auth/register", au.Register())
	mux.Handle("POST /v1/auth/login", au.Login())
	mux.Handle("POST /v1/auth/logout", au.Require(au.Logout()))
	mux.Handle("GET /v1/auth/sessions", au.Require(au.ListSessions()))
	mux.Handle("DELETE /v1/auth/sessions/{sessionId}", au.Require(au.DeleteSession()))
	mux.Handle("POST /v1/auth/logout-all", au.Require(au.LogoutAll()))
	mux.Handle("POST /v1/admin/users/{userId}/force-logout", au.RequireAdmin(au.ForceLogout()))
	mux.Handle("GET /v1/admin/users", au.RequireAdmin(au.ListUsers()))
	mux.Handle("DELETE /v1/admin/users/{userId}", au.RequireAdmin(au.DeleteUser()))
	mux.Handle("GET /v1/admin/metrics", au.RequireAdmin(a.metrics.handler()))
	mux.Handle("GET /v1/admin/dashboard", au.RequireAdmin(a.dashboard.handler(a)))
	mux.Handle("GET /v1/user/profile", au.Require(au.Profile()))
	mux.Handle("PUT /v1/user/password", au.Require(au.ChangePassword()))
	mux.Handle("POST /v1/user/totp", au.Require(au.BeginTOTP()))
	mux.Handle("POST /v1/user/totp/confirm", au.Require(au.ConfirmTOTP()))
	mux.Handle("POST /v1/user/totp/recovery-codes", au.Require(au.RegenerateRecoveryCodes()))
	mux.Handle("DELETE /v1/user/totp", au.Require(au.DisableTOTP()))
	mux.Handle("DELETE /v1/admin/users/{userId}/totp", au.RequireAdmin(au.ResetTOTP()))
	mux.Handle("GET /v1/user/sessions", au.Require(au.ListSessions()))
	mux.Handle("DELETE /v1/user/sessions/{sessionId}", au.Require(au.DeleteSession()))

	o := a.oauth
	mux.Handle("GET /v1/user-integration/oauth/{integration}/authorize", au.Require(o.Authorize()))
	mux.Handle("GET /v1/user-integration/oauth/{integration}/callback", o.Callback()) // cross-site: no svc_session
	ui := a.integrations
	mux.Handle("GET /v1/integrations", au.Require(ui.Catalogue()))
	mux.Handle("GET /v1/user-integrations", au.Require(ui.List()))
	mux.Handle("GET /v1/user-integrations/{id}", au.Require(ui.Get()))
	mux.Handle("DELETE /v1/user-integrations/{id}", au.Require(ui.Delete()))
	mux.Handle("POST /v1/user-integrations/{integration}/credentials", au.Require(ui.SubmitCredentials()))
	mux.Handle("POST /v1/user-integrations/{id}/sync", au.Require(ui.SyncNow()))
	mux.Handle("GET /v1/search", au.Require(ui.Search()))
	mux.Handle("GET /v1/search/suggest", au.Require(ui.Suggest()))
	mux.Handle("GET /v1/items", au.Require(ui.ListItems()))
	mux.Handle("GET /v1/items/{id}", au.Require(ui.GetItem()))
	mux.Handle("GET /v1/items/{id}/thread", au.Require(ui.GetThread()))
	mux.Handle("GET /v1/items/{id}/original", au.Require(ui.GetOriginal()))
	mux.Handle("GET /v1/items/{id}/attachments/{index}", au.Require(ui.GetAttachment()))

	// The web app (package web), not part of the API: each of its pages
	// answers the same document, whose script shows the page its path
	// names, so deep links, reloads and FRONTEND_URL/integrations work;
	// its files are under /assets/, and /opensearch.xml lets a browser's
	// address bar search here (docs/search.md). Any other path, /v1/ included, stays
	// the API's JSON 404.
	for _, page := range []string{"/{$}", "/search", "/login", "/register", "/items/{id}",
		"/integrations", "/sessions", "/account", "/admin", "/assets/{file}", "/opensearch.xml"} {
		mux.Handle("GET "+page, a.web)
	}
}
