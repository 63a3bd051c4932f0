package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// devSecrets fills the secrets a development setup (SESSION_SECURE=false)
// left unset from DATA_DIR/dev-secrets.json, generating that file (0600)
// on first use so sessions and sealed credentials survive a restart.
func (c *config) devSecrets() error {
	if c.SessionSecret != nil && c.CredentialsKey != nil {
		return nil
	}
	path := filepath.Join(c.DataDir, "dev-secrets.json")
	var s struct {
		SessionSecret  string `json:"sessionSecret"`
		CredentialsKey string `json:"credentialsKey"`
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	case errors.Is(err, os.ErrNotExist):
		s.SessionSecret = rand.Text() + rand.Text()
		key := make([]byte, 32)
		rand.Read(key)
		s.CredentialsKey = base64.StdEncoding.EncodeToString(key)
		b, _ = json.Marshal(s)
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			return err
		}
		if err := writeFileSync(path, b); err != nil {
			return err
		}
	default:
		return err
	}
	if c.SessionSecret == nil {
		c.SessionSecret = []byte(s.SessionSecret)
		c.DevSecrets = append(c.DevSecrets, "SESSION_SECRET")
	}
	if c.CredentialsKey == nil {
		key, err := vault.ParseKey(path+": credentialsKey", s.CredentialsKey)
		if err != nil {
			return err
		}
		c.CredentialsKey = key
		c.DevSecrets = append(c.DevSecrets, "CREDENTIALS_KEY")
	}
	return nil
}

// writeFileSync creates path (0600) with b, atomically: it writes a
// temporary file, fsyncs it, links it into place (failing with
// fs.ErrExist if path exists) and fsyncs the directory, so a power cut
// leaves either no file or the whole one, never an empty file that stops
// every later start.
func writeFileSync(path string, b []byte) error {
	return writeFileSyncLink(path, b, os.Link)
}

// writeFileSyncLink is writeFileSync with link as os.Link, which tests
// replace to play a file system without hard links.
//
// A file system without hard links (a FAT or exFAT backup stick) answers
// link with EPERM or "not supported". There the file is created in place
// with O_EXCL instead, which still never overwrites an existing file,
// even one another process creates meanwhile, but a power cut during the
// write can leave it incomplete (the next start then names it).
func writeFileSyncLink(path string, b []byte, link func(oldname, newname string) error) error {
	tmp := path + ".tmp"
	err := storage.WriteNew(tmp, b, 0o600, os.O_TRUNC)
	if err == nil {
		err = link(tmp, path)
		os.Remove(tmp)
		if noHardLinks(err) {
			err = storage.WriteNew(path, b, 0o600, os.O_EXCL)
		}
	} else {
		os.Remove(tmp)
	}
	if err != nil {
		return err
	}
	return storage.SyncDir(filepath.Dir(path))
}

// noHardLinks reports whether err is a link refused because the file
// system has no hard links.
func noHardLinks(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, errors.ErrUnsupported) ||
		errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS)
}
