package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"searchsvc/auth"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/search"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/sessions"
	"searchsvc/storage"
)

// The composition root: what the service keeps under DATA_DIR is opened
// here, once, for serve and for every command alike. The tables of the
// main store are peers, each registered by its own package on the same
// store before it opens (replay needs them all): the users (auth), the
// user-integration records, the synced items and the syncer's tasks,
// all sealed with one vault. The session store beside it holds the
// sessions. The syncer, the indexer and the handlers are then built on
// these; no package opens a table of another.

// searchDir holds the search index under DATA_DIR: one directory per
// user, every file sealed with the vault.
const searchDir = "search"

// searchConfig configures the search index under dataDir, sealed with v.
func searchConfig(dataDir string, v *vault.Vault, cacheMB int, log *slog.Logger) search.Config {
	return search.Config{
		Dir:        filepath.Join(dataDir, searchDir),
		Vault:      v,
		CacheBytes: int64(cacheMB) << 20,
		Logger:     log,
	}
}

// sessionLoneWindow is the session store's storage.Options.LoneWindow:
// below the cost of an fsync on an SD card, small beside a login's hash.
const sessionLoneWindow = 10 * time.Millisecond

// stores are the stores under DATA_DIR and their tables.
type stores struct {
	main    *storage.Store
	vault   *vault.Vault
	users   *auth.Users
	records *records.Records
	items   *items.Store
	tasks   *syncer.Tasks

	// The session store and its sessions: serve's only (nil in commands).
	session  *storage.Store
	sessions *sessions.Manager
}

// newStores builds the vault and registers every table of the main store
// of the data directory dataDir (DATA_DIR, or a restore's copy of it),
// which it does not open.
func newStores(c *config, dataDir string, opts storage.Options) (*stores, error) {
	v, err := vault.New(c.CredentialsKey, c.CredentialsKeyPrevious...)
	if err != nil {
		return nil, fmt.Errorf("CREDENTIALS_KEY: %w", err)
	}
	st := storage.New(filepath.Join(dataDir, mainStoreDir), opts)
	users, err := auth.NewUsers(st, v)
	if err != nil {
		return nil, err
	}
	s := &stores{main: st, vault: v, users: users, records: records.New(st, v, nil)}
	s.tasks = syncer.NewTasks(st, v)
	s.items = items.New(st, v, filepath.Join(dataDir, itemsDir))
	return s, nil
}

// openStores opens both stores for serve, refuses a data directory of
// another format or a CREDENTIALS_KEY that cannot open what they hold,
// and re-seals under the current key the users sealed under a previous
// one.
func openStores(c *config, log *slog.Logger) (*stores, error) {
	mode, err := storage.ParseSyncMode(c.StoreSync)
	if err != nil {
		return nil, fmt.Errorf("STORE_SYNC: %w", err)
	}
	if err := ensureDataFormat(c.DataDir); err != nil {
		return nil, err
	}
	s, err := newStores(c, c.DataDir, storage.Options{
		Sync: mode, Logger: log.With("component", "storage", "store", mainStoreDir)})
	if err != nil {
		return nil, err
	}
	// Logins commit one by one, spaced by the limit on concurrent
	// password hashes: a short wait lets two of them share an fsync.
	s.session = storage.New(filepath.Join(c.DataDir, sessionStoreDir), storage.Options{
		Sync: mode, Logger: log.With("component", "storage", "store", sessionStoreDir),
		LoneWindow: sessionLoneWindow})
	s.sessions, err = sessions.New(s.session, sessions.Config{
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
	if err := s.openBoth(); err != nil {
		return nil, err
	}
	// A key that cannot open what the store holds would start cleanly and
	// then fail every request that opens something: refuse to start.
	if err := s.checkKeys(); err != nil {
		s.closeStores()
		return nil, err
	}
	if err := s.rotateUsers(log); err != nil {
		s.closeStores()
		return nil, err
	}
	return s, nil
}

// openBoth opens the two stores side by side: start-up after a power cut
// is the time to replay both logs, and each decodes on every core it can
// get. If either fails, neither stays open.
func (s *stores) openBoth() error {
	var sessErr error
	done := make(chan struct{})
	go func() { defer close(done); sessErr = s.session.Open() }()
	mainErr := s.main.Open()
	<-done
	if mainErr == nil && sessErr == nil {
		return nil
	}
	if mainErr == nil {
		s.main.Close()
	}
	if sessErr == nil {
		s.session.Close()
	}
	return errors.Join(wrapErr("open main store", mainErr), wrapErr("open session store", sessErr))
}

// checkKeys reports whether the vault opens everything the main store
// holds sealed (syncer.CheckKeys).
func (s *stores) checkKeys() error {
	return syncer.CheckKeys(s.records, s.items, s.tasks)
}

// rotateUsers re-seals under the current CREDENTIALS_KEY the users sealed
// under a previous one, before serving.
func (s *stores) rotateUsers(log *slog.Logger) error {
	s.sessions.LoadSeen()
	nUsers, err := s.users.RotateKeys()
	if err != nil {
		return fmt.Errorf("seal stored data: %w", err)
	}
	if nUsers > 0 {
		log.Info("sealed data stored under a previous key", "users", nUsers)
	}
	return nil
}

// closeStores closes the stores that are open, the sessions' first, and
// returns the first error.
func (s *stores) closeStores() error {
	var err error
	for _, st := range []*storage.Store{s.session, s.main} {
		if st == nil {
			continue
		}
		if cerr := st.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", st.Dir(), cerr)
		}
	}
	return err
}

// commandConfig is the configuration of a command: the server's, with
// the secrets of a development data directory found by commandSecrets,
// and CREDENTIALS_KEY required, as every command that opens the main
// store needs it.
func commandConfig(getenv func(string) string, stderr io.Writer) (*config, error) {
	c, err := readConfig(getenv, false)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if err := c.commandSecrets(stderr, true); err != nil {
		return nil, err
	}
	if c.CredentialsKey == nil {
		return nil, fmt.Errorf("configuration: CREDENTIALS_KEY is required: set it as for the server (no %s in DATA_DIR %s)",
			devSecretsFile, c.DataDir)
	}
	return c, nil
}

// openOffline opens the main store of DATA_DIR for a command that needs
// the server stopped: the store's lock refuses a second writer, and the
// error then says what to do.
func openOffline(c *config) (*stores, error) {
	if err := ensureDataFormat(c.DataDir); err != nil {
		return nil, err
	}
	s, err := newStores(c, c.DataDir, storage.Options{})
	if err != nil {
		return nil, err
	}
	if err := s.main.Open(); err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return nil, fmt.Errorf("%w; stop the server first (systemctl stop searchsvc), then run this again", err)
		}
		return nil, fmt.Errorf("open %s: %w", s.main.Dir(), err)
	}
	return s, nil
}
