package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"searchsvc/auth"
	"searchsvc/integrations/records"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// The two stores under DATA_DIR. The session store is its own log, so
// that session data is kept apart from the main database.
const (
	mainStoreDir    = "main"
	sessionStoreDir = "sessions"
)

func dataDir(getenv func(string) string) string {
	if d := strings.TrimSpace(getenv("DATA_DIR")); d != "" {
		return d
	}
	return "./data"
}

// verifyCmd reads both stores without locking them (safe beside a running
// server) and reports what each holds. It fails when either has damage
// that Open would refuse.
func verifyCmd(getenv func(string) string, stdout io.Writer) error {
	var damaged []string
	for _, name := range []string{mainStoreDir, sessionStoreDir} {
		dir := filepath.Join(dataDir(getenv), name)
		rep, err := storage.Verify(nil, dir)
		var corrupt *storage.CorruptError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(stdout, "%s: not created yet\n", name)
			continue
		case errors.As(err, &corrupt):
			damaged = append(damaged, name)
		case err != nil:
			return fmt.Errorf("verify %s: %w", dir, err)
		}
		printReport(stdout, name, rep)
	}
	if damaged != nil {
		return fmt.Errorf("damaged: %s; stop the server and run `searchsvc repair` to see what a repair keeps and drops, then `searchsvc repair --yes` (the original is kept)", strings.Join(damaged, ", "))
	}
	return nil
}

// repairCmd rewrites each damaged store keeping every intact record,
// the original file kept beside it, and prints exactly what was dropped.
// Without --yes it only says what it would keep and drop.
func repairCmd(getenv func(string) string, args []string, stdout io.Writer) error {
	yes := len(args) > 0 && args[0] == "--yes"
	if len(args) > 1 || (len(args) == 1 && !yes) {
		return errors.New("usage: searchsvc repair [--yes]")
	}
	for _, name := range []string{mainStoreDir, sessionStoreDir} {
		dir := filepath.Join(dataDir(getenv), name)
		// A session revived by a lost logout is worse than one lost: every
		// session a damaged line names is ended.
		opts := storage.RepairOptions{DeleteNamed: name == sessionStoreDir}
		rep, err := storage.Verify(nil, dir)
		var corrupt *storage.CorruptError
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil && !errors.As(err, &corrupt) {
			return fmt.Errorf("verify %s: %w", dir, err)
		}
		if rep.Damage == nil {
			fmt.Fprintf(stdout, "%s: no damage, nothing to repair\n", name)
			continue
		}
		if !yes {
			if rep, err = storage.PlanRepair(nil, dir, opts); err != nil {
				return fmt.Errorf("plan repair of %s: %w", dir, err)
			}
			fmt.Fprintf(stdout, "%s: would rewrite %s keeping %d valid lines; run `searchsvc repair --yes` to do it\n",
				name, rep.File, rep.Kept)
			printLoss(stdout, name, rep)
			continue
		}
		rep, err = storage.Repair(nil, dir, opts)
		if err != nil {
			return fmt.Errorf("repair %s: %w", dir, err)
		}
		fmt.Fprintf(stdout, "%s: rewritten as %s keeping %d valid lines; the original is kept at %s\n",
			name, rep.File, rep.Kept, rep.CopiedTo)
		printLoss(stdout, name, rep)
	}
	return nil
}

// printLoss lists what a repair drops: each damaged stretch with the
// sequence number, tables and ids that could be read of it, then the
// sequence numbers missing between the lines kept.
func printLoss(w io.Writer, name string, rep storage.Report) {
	for _, l := range rep.Lost {
		fmt.Fprintf(w, "%s: lost %d bytes at offset %d (%s)", name, l.Bytes, l.Offset, l.Reason)
		if l.Seq > 0 {
			fmt.Fprintf(w, ", sequence number %d", l.Seq)
		}
		for _, o := range l.Ops {
			verb := "put"
			if o.Del {
				verb = "delete"
			}
			fmt.Fprintf(w, ", %s %s %s", o.Table, verb, o.ID)
		}
		if len(l.Ops) == 0 && !l.Torn {
			fmt.Fprint(w, ", no table or id could be read")
		}
		for _, o := range l.Deleted {
			fmt.Fprintf(w, "; deleted again: %s %s", o.Table, o.ID)
		}
		if l.Torn {
			fmt.Fprint(w, " [never acknowledged]")
		}
		fmt.Fprintln(w)
	}
	if len(rep.LostSeqs) > 0 {
		seqs := make([]string, len(rep.LostSeqs))
		for i, s := range rep.LostSeqs {
			seqs[i] = strconv.FormatUint(s, 10)
		}
		fmt.Fprintf(w, "%s: lost sequence numbers: %s\n", name, strings.Join(seqs, ", "))
	}
	if len(rep.Lost) == 0 {
		fmt.Fprintf(w, "%s: nothing lost\n", name)
	}
}

func printReport(w io.Writer, name string, rep storage.Report) {
	if rep.File == "" {
		fmt.Fprintf(w, "%s: empty (no log file)\n", name)
		return
	}
	fmt.Fprintf(w, "%s: %s: %d lines, %d records, %d bytes valid", name, rep.File, rep.Lines, rep.Ops, rep.ValidBytes)
	if rep.TornBytes > 0 {
		fmt.Fprintf(w, ", %d bytes of torn tail (cut at next open)", rep.TornBytes)
	}
	if rep.Damage != nil {
		fmt.Fprintf(w, ", DAMAGE at byte %d (%s), %d valid lines after it, which repair keeps", rep.Damage.Offset, rep.Damage.Reason, rep.LinesAfter)
	}
	fmt.Fprintln(w)
}

// adminCmd grants or revokes the admin role from the command line, for
// recovery. It opens the main store for writing, so it refuses while a
// server holds it (the store's lock) rather than risk two writers.
func adminCmd(getenv func(string) string, args []string, stdout io.Writer) error {
	if len(args) != 2 || (args[0] != "grant" && args[0] != "revoke") {
		return errors.New("usage: searchsvc admin grant|revoke EMAIL")
	}
	role := auth.RoleAdmin
	if args[0] == "revoke" {
		role = auth.RoleUser
	}
	c, err := loadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if !c.SessionSecure {
		if err := c.devSecrets(); err != nil {
			return err
		}
	}
	dir := filepath.Join(c.DataDir, mainStoreDir)
	st := storage.New(dir, storage.Options{})
	users, err := auth.NewUsers(st, c.CredentialsKey, c.CredentialsKeyPrevious...)
	if err != nil {
		return fmt.Errorf("CREDENTIALS_KEY: %w", err)
	}
	if err := st.Open(); err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return fmt.Errorf("%w; stop the server first (systemctl stop searchsvc), then run this again", err)
		}
		return fmt.Errorf("open %s: %w", dir, err)
	}
	_, err = users.ConvertUsers()
	if err == nil {
		err = users.SetRole(args[1], role)
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, auth.ErrUserNotFound) {
		return fmt.Errorf("no user with email %q", args[1])
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s is now %s\n", strings.ToLower(args[1]), role)
	return nil
}

// rotateKeyCmd re-seals every credential sealed under a key in
// CREDENTIALS_KEY_PREVIOUS with CREDENTIALS_KEY. Like admin, it needs the
// server stopped. Once it reports nothing left, the previous keys can go.
func rotateKeyCmd(getenv func(string) string, stdout io.Writer) error {
	c, err := loadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if !c.SessionSecure {
		if err := c.devSecrets(); err != nil {
			return err
		}
	}
	if len(c.CredentialsKeyPrevious) == 0 {
		return errors.New("rotate-key: set CREDENTIALS_KEY to the new key and CREDENTIALS_KEY_PREVIOUS to the old one(s)")
	}
	v, err := vault.NewVault(c.CredentialsKey, c.CredentialsKeyPrevious...)
	if err != nil {
		return err
	}
	reg, err := registry(nil) // rotate-key connects nowhere
	if err != nil {
		return err
	}
	dir := filepath.Join(c.DataDir, mainStoreDir)
	st := storage.New(dir, storage.Options{})
	recs := records.New(st, v, nil)
	users, err := auth.NewUsers(st, c.CredentialsKey, c.CredentialsKeyPrevious...)
	if err != nil {
		return err
	}
	sy, err := syncer.New(syncer.Config{Records: recs, Registry: reg, DataDir: c.DataDir})
	if err != nil {
		return err
	}
	if err := st.Open(); err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return fmt.Errorf("%w; stop the server first (systemctl stop searchsvc), then run this again", err)
		}
		return fmt.Errorf("open %s: %w", dir, err)
	}
	before := st.Position()
	n, err := recs.RotateKeys()
	var items, nUsers int
	if err == nil {
		items, err = sy.RotateKeys()
	}
	if err == nil {
		nUsers, err = users.ConvertUsers()
	}
	var docs int
	if err == nil {
		docs, err = resealIndex(c, v, before, st.Position())
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("rotate-key: %d credentials and %d items re-sealed before: %w", n, items, err)
	}
	fmt.Fprintf(stdout, "re-sealed %d integration credentials, %d items, %d users and the search index (%d documents) under key %s\n",
		n, items, nUsers, docs, v.KeyID())
	return nil
}

// resealIndex rewrites the search index under the subkey of the new
// CREDENTIALS_KEY. An index that was level with the store before the
// rotation (at position before) is recorded as level with it after
// (after): the rotation re-seals items but adds or removes none.
func resealIndex(c *config, v *vault.Vault, before, after storage.Position) (int, error) {
	ix, err := openIndex(c.DataDir, v, c.SearchCacheMB, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		return 0, err
	}
	level := ix.Checkpoint() == checkpoint(before) && len(ix.NeedsRebuild()) == 0
	err = ix.Reseal()
	if err == nil && level {
		ix.SetCheckpoint(checkpoint(after))
	}
	docs := ix.Stats().Docs
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("re-seal the search index: %w", err)
	}
	return docs, nil
}

// reindexCmd rebuilds the search index from the item store: the index is
// derived data, so this is always safe. Like admin, it needs the server
// stopped.
func reindexCmd(getenv func(string) string, stdout io.Writer) error {
	c, err := loadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if !c.SessionSecure {
		if err := c.devSecrets(); err != nil {
			return err
		}
	}
	v, err := vault.NewVault(c.CredentialsKey, c.CredentialsKeyPrevious...)
	if err != nil {
		return err
	}
	reg, err := registry(nil) // reindex connects nowhere
	if err != nil {
		return err
	}
	dir := filepath.Join(c.DataDir, mainStoreDir)
	st := storage.New(dir, storage.Options{})
	sy, err := syncer.New(syncer.Config{Records: records.New(st, v, nil), Registry: reg, DataDir: c.DataDir})
	if err != nil {
		return err
	}
	if err := st.Open(); err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return fmt.Errorf("%w; stop the server first (systemctl stop searchsvc), then run this again", err)
		}
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer st.Close()
	if err := sy.CheckKeys(); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(c.DataDir, searchDir)); err != nil {
		return fmt.Errorf("remove the old index: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ix, err := openIndex(c.DataDir, v, c.SearchCacheMB, log, nil)
	if err != nil {
		return err
	}
	x := newIndexer().connect(ix, sy.Items(), reg, log)
	if failed := x.CatchUp(context.Background(), nil); len(failed) > 0 {
		err = fmt.Errorf("%d users could not be indexed (logged above)", len(failed))
	}
	if err == nil {
		ix.SetCheckpoint(checkpoint(st.Position()))
	}
	stats := ix.Stats()
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("reindex: %w", err)
	}
	fmt.Fprintf(stdout, "indexed %d items of %d users into %s (%d bytes)\n",
		stats.Docs, stats.Users, filepath.Join(c.DataDir, searchDir), stats.BytesOnDisk)
	return nil
}
