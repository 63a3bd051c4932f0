package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// devSecretsFile holds, under DATA_DIR, the secrets a development setup
// generated.
const devSecretsFile = "dev-secrets.json"

// devSecretsJSON is DATA_DIR/dev-secrets.json. CredentialsKeyPrevious is
// set only while rotate-key re-seals the data under a new development key:
// the old key stays in the file until the rotation finished, so a crash
// midway leaves a data directory that opens, and a rotate-key that
// resumes.
type devSecretsJSON struct {
	SessionSecret          string   `json:"sessionSecret"`
	CredentialsKey         string   `json:"credentialsKey"`
	CredentialsKeyPrevious []string `json:"credentialsKeyPrevious,omitempty"`
}

func (c *config) devSecretsPath() string { return filepath.Join(c.DataDir, devSecretsFile) }

// devSecrets fills the secrets a development setup (SESSION_SECURE=false)
// left unset from DATA_DIR/dev-secrets.json, generating that file (0600)
// on first use so sessions and sealed credentials survive a restart. A
// CREDENTIALS_KEY taken from the file comes with the file's previous keys.
func (c *config) devSecrets() error {
	if c.SessionSecret != nil && c.CredentialsKey != nil {
		return nil
	}
	path := c.devSecretsPath()
	var s devSecretsJSON
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	case errors.Is(err, os.ErrNotExist):
		s.SessionSecret = rand.Text() + rand.Text()
		s.CredentialsKey = newDevKey()
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
		for _, k := range s.CredentialsKeyPrevious {
			prev, err := vault.ParseKey(path+": credentialsKeyPrevious", k)
			if err != nil {
				return err
			}
			c.CredentialsKeyPrevious = append(c.CredentialsKeyPrevious, prev)
		}
		c.CredentialsKey = key
		c.DevSecrets = append(c.DevSecrets, "CREDENTIALS_KEY")
	}
	return nil
}

// newDevKey returns a new CREDENTIALS_KEY, as base64.
func newDevKey() string {
	key := make([]byte, vault.KeySize)
	rand.Read(key)
	return base64.StdEncoding.EncodeToString(key)
}

// commandSecrets is the rule by which a command finds the secrets of a
// data directory that `make run` created, with no variable set: a secret
// that is not set is taken from DATA_DIR/dev-secrets.json when that file
// exists (whatever SESSION_SECURE says: a command sets no cookie), and
// stderr says so. With SESSION_SECURE=false the file is also created if
// missing, as the server does, when create allows it. A secret that is
// set always wins, and the server itself still takes the file only with
// SESSION_SECURE=false, so a production server never starts on a
// development key.
func (c *config) commandSecrets(stderr io.Writer, create bool) error {
	if c.SessionSecret != nil && c.CredentialsKey != nil {
		return nil
	}
	_, err := os.Stat(c.devSecretsPath())
	if err != nil && !(create && !c.SessionSecure && errors.Is(err, os.ErrNotExist)) {
		return nil
	}
	if err := c.devSecrets(); err != nil {
		return fmt.Errorf("dev secrets: %w", err)
	}
	if slices.Contains(c.DevSecrets, "CREDENTIALS_KEY") {
		fmt.Fprintf(stderr, "searchsvc: CREDENTIALS_KEY from %s (a development data directory); set CREDENTIALS_KEY to use another\n",
			c.devSecretsPath())
	}
	return nil
}

// devRotation is rotate-key's change of the development CREDENTIALS_KEY
// in DATA_DIR/dev-secrets.json: begin writes the new key as current with
// the old ones as previous, finish drops the previous ones once every
// sealed value is under the new key.
type devRotation struct {
	path string
	s    devSecretsJSON
}

// planDevRotation prepares rotate-key's change of a development key: a
// new key in c (the old one becoming previous), or, when the file already
// holds previous keys (a rotation that did not finish), the same keys
// again. Nothing is written yet.
func (c *config) planDevRotation() (*devRotation, error) {
	path := c.devSecretsPath()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &devRotation{path: path}
	if err := json.Unmarshal(b, &r.s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.s.CredentialsKeyPrevious) > 0 {
		return r, nil // resumed: c holds the file's keys already
	}
	next := newDevKey()
	key, err := vault.ParseKey(path+": credentialsKey", next)
	if err != nil {
		return nil, err
	}
	r.s.CredentialsKeyPrevious = []string{r.s.CredentialsKey}
	r.s.CredentialsKey = next
	c.CredentialsKeyPrevious = append([][]byte{c.CredentialsKey}, c.CredentialsKeyPrevious...)
	c.CredentialsKey = key
	return r, nil
}

// begin writes the new key as current, the old ones as previous: from
// now on, data may be sealed under the new key.
func (r *devRotation) begin() error { return r.write() }

// finish writes the rotated state: the new key alone.
func (r *devRotation) finish() error {
	r.s.CredentialsKeyPrevious = nil
	return r.write()
}

func (r *devRotation) write() error {
	b, err := json.Marshal(r.s)
	if err != nil {
		return err
	}
	return storage.ReplaceFile(r.path, ".tmp", b, 0o600)
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
