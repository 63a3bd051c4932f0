package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// sealUnder stores a connected record in env's DATA_DIR, its credentials
// sealed under key, as a server running with that key would have.
func sealUnder(t *testing.T, env map[string]string, key []byte) {
	t.Helper()
	if err := ensureDataFormat(env["DATA_DIR"]); err != nil {
		t.Fatal(err)
	}
	v, err := vault.New(key)
	if err != nil {
		t.Fatal(err)
	}
	st := storage.New(filepath.Join(env["DATA_DIR"], mainStoreDir), storage.Options{Sync: storage.SyncNone})
	recs := records.New(st, v, nil)
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	if _, err := recs.Connect("u1", "feed", integrations.Credentials{Fields: map[string]string{"url": "https://example.org/feed"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStartRefusesAKeyThatCannotOpenTheStore: a CREDENTIALS_KEY that did
// not seal the stored data stops the start with a message naming
// CREDENTIALS_KEY and CREDENTIALS_KEY_PREVIOUS; with the old key listed in
// CREDENTIALS_KEY_PREVIOUS the start goes on.
func TestStartRefusesAKeyThatCannotOpenTheStore(t *testing.T) {
	keyA, keyB := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	env := testEnv(t.TempDir())
	env["SESSION_SECRET"] = strings.Repeat("s", 32)
	sealUnder(t, env, keyA)
	log := slog.New(slog.DiscardHandler)

	env["CREDENTIALS_KEY"] = base64.StdEncoding.EncodeToString(keyB)
	c, err := loadConfig(envFunc(env))
	if err != nil {
		t.Fatal(err)
	}
	a, err := openApp(c, envFunc(env), log)
	if err == nil {
		a.close(log)
		t.Fatal("openApp under another key: got nil, want an error")
	}
	if !errors.Is(err, vault.ErrUnknownKey) || !strings.Contains(err.Error(), "CREDENTIALS_KEY ") || !strings.Contains(err.Error(), "CREDENTIALS_KEY_PREVIOUS") ||
		!strings.Contains(err.Error(), vault.KeyID(keyA)) {
		t.Errorf("openApp under another key: got %v, want vault.ErrUnknownKey naming both variables and key id %s", err, vault.KeyID(keyA))
	}

	env["CREDENTIALS_KEY_PREVIOUS"] = base64.StdEncoding.EncodeToString(keyA)
	c, err = loadConfig(envFunc(env))
	if err != nil {
		t.Fatal(err)
	}
	a, err = openApp(c, envFunc(env), log)
	if err != nil {
		t.Fatalf("openApp with the old key in CREDENTIALS_KEY_PREVIOUS: %v", err)
	}
	a.close(log)
}

// TestRestoreWarnsOfAnotherKey: restoring a backup sealed under another
// key succeeds, and says that the server will not start without that key.
func TestRestoreWarnsOfAnotherKey(t *testing.T) {
	keyA, keyB := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	env := testEnv(t.TempDir())
	env["CREDENTIALS_KEY"] = base64.StdEncoding.EncodeToString(keyA)
	sealUnder(t, env, keyA)
	backupDir := filepath.Join(t.TempDir(), "backup")
	if out, err := runCmd(t, env, "backup", backupDir); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		name, key string
		warn      bool
	}{
		{"same key", base64.StdEncoding.EncodeToString(keyA), false},
		{"another key", base64.StdEncoding.EncodeToString(keyB), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh := testEnv(t.TempDir())
			fresh["CREDENTIALS_KEY"] = tc.key
			out, err := runCmd(t, fresh, "restore", backupDir)
			if err != nil || !strings.Contains(out, "restored") {
				t.Fatalf("restore: %v\n%s", err, out)
			}
			warned := strings.Contains(out, "warning:") && strings.Contains(out, "CREDENTIALS_KEY_PREVIOUS") && strings.Contains(out, vault.KeyID(keyA))
			if warned != tc.warn {
				t.Errorf("restore output: got warning %v, want %v:\n%s", warned, tc.warn, out)
			}
		})
	}
}
