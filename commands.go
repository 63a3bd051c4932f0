package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"searchsvc/auth"
	"searchsvc/integrations/index"
	"searchsvc/integrations/search"
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
func adminCmd(getenv func(string) string, args []string, stdout, stderr io.Writer) error {
	if len(args) != 2 || (args[0] != "grant" && args[0] != "revoke") {
		return errors.New("usage: searchsvc admin grant|revoke EMAIL")
	}
	role := auth.RoleAdmin
	if args[0] == "revoke" {
		role = auth.RoleUser
	}
	c, err := commandConfig(getenv, stderr)
	if err != nil {
		return err
	}
	s, err := openOffline(c)
	if err != nil {
		return err
	}
	_, err = s.users.RotateKeys()
	if err == nil {
		err = s.users.SetRole(args[1], role)
	}
	if cerr := s.closeStores(); err == nil {
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
// On a development data directory whose CREDENTIALS_KEY is the generated
// one, it generates the new key itself and keeps DATA_DIR/dev-secrets.json
// in step (devRotation).
func rotateKeyCmd(getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := commandConfig(getenv, stderr)
	if err != nil {
		return err
	}
	var dev *devRotation
	if slices.Contains(c.DevSecrets, "CREDENTIALS_KEY") {
		if dev, err = c.planDevRotation(); err != nil {
			return fmt.Errorf("rotate-key: %w", err)
		}
	}
	if len(c.CredentialsKeyPrevious) == 0 {
		return errors.New("rotate-key: set CREDENTIALS_KEY to the new key and CREDENTIALS_KEY_PREVIOUS to the old one(s)")
	}
	s, err := openOffline(c)
	if err != nil {
		return err
	}
	// The store is locked: no server seals anything meanwhile, and the
	// new development key goes into the file before anything is sealed
	// under it.
	if dev != nil {
		if err := dev.begin(); err != nil {
			s.closeStores()
			return fmt.Errorf("rotate-key: %w", err)
		}
	}
	n, items, tasks, nUsers, docs, err := rotateKeys(c, s)
	if cerr := s.closeStores(); err == nil {
		err = cerr
	}
	if err == nil && dev != nil {
		err = dev.finish()
	}
	if err != nil {
		return fmt.Errorf("rotate-key: %d credentials and %d items re-sealed before: %w", n, items, err)
	}
	fmt.Fprintf(stdout, "re-sealed %d integration credentials, %s, %s, %s and the search index (%s) under key %s\n",
		n, plural(items, "item", "items"), plural(tasks, "task or sync state", "tasks and sync states"),
		plural(nUsers, "user", "users"), plural(docs, "document", "documents"), s.vault.KeyID())
	return nil
}

// rotateKeys re-seals under the vault's current key what s holds sealed
// under a previous one: the records' credentials, the items and the
// syncer's tasks and kept values (counted together as items), the users,
// and the search index.
func rotateKeys(c *config, s *stores) (creds, items, tasks, users, docs int, err error) {
	before := s.main.Position()
	creds, err = s.records.RotateKeys()
	if err == nil {
		items, err = s.items.RotateKeys()
	}
	if err == nil {
		tasks, err = s.tasks.RotateKeys()
	}
	if err == nil {
		users, err = s.users.RotateKeys()
	}
	if err == nil {
		docs, err = resealIndex(c, s.vault, before, s.main.Position())
	}
	return creds, items, tasks, users, docs, err
}

// resealIndex rewrites the search index under the new CREDENTIALS_KEY. An index that was level with the store before the
// rotation (at position before) is recorded as level with it after
// (after): the rotation re-seals items but adds or removes none.
func resealIndex(c *config, v *vault.Vault, before, after storage.Position) (int, error) {
	ix, err := search.Open(searchConfig(c.DataDir, v, c.SearchCacheMB, slog.New(slog.DiscardHandler)))
	if err != nil {
		return 0, err
	}
	level := ix.Checkpoint() == index.Checkpoint(before) && len(ix.NeedsRebuild()) == 0
	err = ix.Reseal()
	if err == nil && level {
		ix.SetCheckpoint(index.Checkpoint(after))
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
func reindexCmd(getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := commandConfig(getenv, stderr)
	if err != nil {
		return err
	}
	reg, err := registry(nil) // reindex connects nowhere
	if err != nil {
		return err
	}
	s, err := openOffline(c)
	if err != nil {
		return err
	}
	defer s.closeStores()
	if err := s.checkKeys(); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(c.DataDir, searchDir)); err != nil {
		return fmt.Errorf("remove the old index: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: slog.LevelWarn}))
	x, err := index.Open(index.Config{
		Search: searchConfig(c.DataDir, s.vault, c.SearchCacheMB, log), Items: s.items, Registry: reg, Logger: log})
	if err != nil {
		return err
	}
	if failed := x.CatchUp(nil); len(failed) > 0 {
		err = fmt.Errorf("%d users could not be indexed (logged above)", len(failed))
	}
	stats := x.Search().Stats()
	// Caught up, the index records the store's position (Close). Its
	// size is read after: Close writes what the index still buffered.
	if cerr := x.Close(s.main.Position()); err == nil {
		err = cerr
	}
	var size int64
	if err == nil {
		size, err = dirSize(filepath.Join(c.DataDir, searchDir))
	}
	if err != nil {
		return fmt.Errorf("reindex: %w", err)
	}
	fmt.Fprintf(stdout, "indexed %s of %s into %s (%s)\n", plural(stats.Docs, "item", "items"),
		plural(stats.Users, "user", "users"), filepath.Join(c.DataDir, searchDir), plural(int(size), "byte", "bytes"))
	return nil
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// plural is n and the noun for it: "1 user", "2 users".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
