package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"searchsvc/storage"
)

// itemsDir holds the sealed content files of synced items under DATA_DIR.
const itemsDir = "items"

// backupCmd copies a consistent snapshot of DATA_DIR into dst while the
// server runs. Each store's log is append-only, so its first ValidBytes
// bytes (every complete, checksummed line, as Verify found them) never
// change: copying exactly those bytes from an open descriptor gives the
// store as of one commit, even if a compaction replaces the file meanwhile.
// The item packs are copied before the main store and again after it
// (the second time only what grew or is new), so every item the copied
// log names has its text in the backup: appended before it was
// committed, it is in the second copy; moved by a compaction of its pack
// after the log was copied, it is in the first (see integrations/items'
// pack.go). Secrets are not copied: keep
// CREDENTIALS_KEY apart from the backup, which is useless without it.
func backupCmd(getenv func(string) string, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: searchsvc backup DIR")
	}
	src, dst := dataDir(getenv), args[0]
	if entries, err := os.ReadDir(dst); err == nil && len(entries) > 0 {
		return fmt.Errorf("backup: %s is not empty", dst)
	}
	if err := checkDataFormat(src); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	// The backup has DATA_DIR's layout, its format file included.
	if err := writeFileSync(filepath.Join(dst, formatFile), []byte(dataFormat)); err != nil {
		return err
	}
	manifest := map[string]any{"version": version, "createdAt": time.Now().UTC().Format(time.RFC3339)}
	n, err := copyFiles(filepath.Join(src, itemsDir), filepath.Join(dst, itemsDir))
	if err != nil {
		return fmt.Errorf("backup items: %w", err)
	}
	for _, name := range []string{mainStoreDir, sessionStoreDir} {
		rep, err := copyStore(filepath.Join(src, name), filepath.Join(dst, name))
		if err != nil {
			return fmt.Errorf("backup %s: %w", name, err)
		}
		manifest[name] = map[string]any{"file": filepath.Base(rep.File), "bytes": rep.ValidBytes, "records": rep.Ops}
		fmt.Fprintf(stdout, "%s: %d records, %d bytes\n", name, rep.Ops, rep.ValidBytes)
	}
	more, err := copyFiles(filepath.Join(src, itemsDir), filepath.Join(dst, itemsDir))
	if err != nil {
		return fmt.Errorf("backup items: %w", err)
	}
	n += more
	manifest["itemFiles"] = n
	fmt.Fprintf(stdout, "items: %d sealed files\n", n)
	b, _ := json.MarshalIndent(manifest, "", "  ")
	if err := writeFileSync(filepath.Join(dst, "backup.json"), append(b, '\n')); err != nil {
		return err
	}
	return storage.SyncDir(dst)
}

// copyStore copies the valid prefix of the store's newest log into dst.
func copyStore(src, dst string) (storage.Report, error) {
	for attempt := 0; ; attempt++ {
		rep, err := storage.Verify(nil, src)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && rep.File == "") {
			return rep, os.MkdirAll(dst, 0o700) // a store not created yet
		}
		if err != nil {
			return rep, err
		}
		f, err := os.Open(rep.File)
		if errors.Is(err, fs.ErrNotExist) && attempt < 5 {
			continue // compacted between Verify and Open: look again
		}
		if err != nil {
			return rep, err
		}
		defer f.Close()
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return rep, err
		}
		return rep, copyFile(io.LimitReader(f, rep.ValidBytes), filepath.Join(dst, filepath.Base(rep.File)), rep.ValidBytes)
	}
}

// copyFile writes exactly n bytes of r to a new 0600 file and fsyncs it.
func copyFile(r io.Reader, path string, n int64) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	written, err := io.Copy(out, r)
	if err == nil && n >= 0 && written != n {
		err = fmt.Errorf("%s: copied %d bytes, want %d", path, written, n)
	}
	if err != nil {
		out.Close()
		return err
	}
	return storage.SyncClose(out)
}

// copyFiles copies every regular file under src to dst (0600 files, 0700
// directories), skipping temporary files, and returns how many it copied
// that dst did not have. A file dst has already at the same size is left
// (a pack only grows); one that differs is copied again. A file removed
// while the walk runs (an item deleted meanwhile) is skipped.
func copyFiles(src, dst string) (int, error) {
	n := 0
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if !d.Type().IsRegular() || isTempName(d.Name()) {
			return nil
		}
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := os.Stat(target); err == nil {
			if fi, err := f.Stat(); err == nil && fi.Size() == st.Size() {
				return nil
			}
			if err := os.Remove(target); err != nil {
				return err
			}
		} else {
			n++
		}
		return copyFile(f, target, -1)
	})
	if err != nil {
		return n, err
	}
	return n, syncTree(dst)
}

// isTempName reports files that are half-written by their nature: the
// sync's staged item content (".tmp-…"), a re-seal in progress
// ("….rotate") and other ".tmp" files. A backup has no use for them.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".tmp-") || strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".rotate")
}

// syncTree fsyncs every directory under root, so the new entries survive
// a power cut.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || !d.IsDir() {
			return err
		}
		return storage.SyncDir(path)
	})
}

// backupKeyWarning checks the restored stores in dataDir against the
// CREDENTIALS_KEY the server will start with (from getenv, or the
// development secrets in DATA_DIR, by the rule of commandSecrets but
// never creating them), and says what is wrong if the backup was sealed
// under another key: the server would refuse to start. A restore is not
// refused for it, as the right key may be set afterwards.
func backupKeyWarning(getenv func(string) string, dataDir string, stderr io.Writer) string {
	const cannot = "cannot check the backup against CREDENTIALS_KEY: "
	c, err := readConfig(getenv, false)
	if err == nil {
		err = c.commandSecrets(stderr, false)
	}
	if err != nil {
		return cannot + err.Error()
	}
	if c.CredentialsKey == nil {
		return "CREDENTIALS_KEY is not set: the backup's sealed credentials and items open only under the key they were sealed with"
	}
	s, err := newStores(c, dataDir, storage.Options{})
	if err != nil {
		return cannot + err.Error()
	}
	if err := s.main.Open(); err != nil {
		return cannot + err.Error()
	}
	defer func() {
		s.closeStores()
		os.Remove(filepath.Join(s.main.Dir(), "LOCK"))
	}()
	if err := s.checkKeys(); err != nil {
		return "the backup was sealed under another key, and the server will not start until it has that key: " + err.Error()
	}
	return ""
}

// restoreCmd puts a backup into DATA_DIR. It refuses to overwrite stores
// that hold data (move DATA_DIR aside first). It copies everything into a
// temporary directory inside DATA_DIR, opens both stores there once (which
// checks every record of the copy), and only then renames the three
// directories into place, so a restore that fails leaves DATA_DIR as it
// was and can simply be run again.
func restoreCmd(getenv func(string) string, args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: searchsvc restore DIR")
	}
	src, dst := args[0], dataDir(getenv)
	if _, err := os.Stat(filepath.Join(src, "backup.json")); err != nil {
		return fmt.Errorf("restore: %s is not a searchsvc backup (no backup.json)", src)
	}
	if err := checkDataFormat(src); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	parts := []string{mainStoreDir, sessionStoreDir, itemsDir}
	for _, name := range parts {
		if entries, err := os.ReadDir(filepath.Join(dst, name)); err == nil && len(entries) > 0 {
			return fmt.Errorf("restore: %s already holds data; move DATA_DIR aside first", filepath.Join(dst, name))
		}
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dst, ".restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // empty once the parts are renamed out
	for _, name := range parts {
		n, err := copyFiles(filepath.Join(src, name), filepath.Join(tmp, name))
		if err != nil {
			return fmt.Errorf("restore %s: %w", name, err)
		}
		fmt.Fprintf(stdout, "%s: %d files\n", name, n)
	}
	for _, name := range []string{mainStoreDir, sessionStoreDir} {
		st := storage.New(filepath.Join(tmp, name), storage.Options{})
		if err := st.Open(); err != nil {
			return fmt.Errorf("restore: the backup's %s store does not open: %w", name, err)
		}
		if err := st.Close(); err != nil {
			return err
		}
		os.Remove(filepath.Join(tmp, name, "LOCK")) // the target takes its own
	}
	if warn := backupKeyWarning(getenv, tmp, stderr); warn != "" {
		fmt.Fprintln(stdout, "warning: "+warn)
	}
	// The format file goes first: a crash before the stores are in
	// place leaves them empty, and the restore can run again.
	if err := ensureDataFormat(dst); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, name := range parts {
		from := filepath.Join(tmp, name)
		if _, err := os.Stat(from); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		to := filepath.Join(dst, name)
		os.Remove(to) // an empty directory left from before; rename cannot replace it
		if err := os.Rename(from, to); err != nil {
			return fmt.Errorf("restore %s: %w", name, err)
		}
	}
	if err := storage.SyncDir(dst); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "restored; start the server")
	return nil
}
