package main

import (
	"bytes"
	"encoding/base64"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"searchsvc/storage"
)

// oldRecord is a user-integration record as builds before the one vault
// wrote it: credentials as a sealed string, "v1.<key id>.<base64>".
type oldRecord struct {
	ID          string `json:"id"`
	UserID      string `json:"userId"`
	Integration string `json:"integration"`
	Status      string `json:"status"`
	Credentials string `json:"credentials"`
}

// writeOldDataDir writes a DATA_DIR the way builds before the one vault
// did: a main store with a record sealed in the string format, an item
// content file as base64 text, and no format file.
func writeOldDataDir(t *testing.T, dir string) {
	t.Helper()
	st := storage.New(filepath.Join(dir, mainStoreDir), storage.Options{Sync: storage.SyncNone})
	recs := storage.Register(st, "integrations", storage.TableConfig[oldRecord]{ID: func(r *oldRecord) string { return r.ID }})
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	rec := oldRecord{ID: "r1", UserID: "u1", Integration: "feed", Status: "connected",
		Credentials: "v1.0123456789abcdef.c2VhbGVkIHVuZGVyIHRoZSBvbGQgc3RyaW5nIGZvcm1hdA"}
	if err := st.Commit(recs.Put(rec)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, itemsDir, "r1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, itemsDir, "r1", "i1"), []byte("v1.0123456789abcdef.AAAA"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// snapshot is every file under dir and its bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "LOCK" {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestOldDataDirRefused: a DATA_DIR written before the one vault is
// refused by the server and by every command that opens it, with one
// sentence saying what to do, and is left exactly as it was.
func TestOldDataDirRefused(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(dir)
	c, err := loadConfig(envFunc(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.devSecrets(); err != nil {
		t.Fatal(err)
	}
	writeOldDataDir(t, dir)
	before := snapshot(t, dir)
	want := errOldFormat(dir).Error()
	if !strings.Contains(want, "move it aside and start with an empty directory") || strings.Count(want, ". ") > 0 {
		t.Fatalf("the refusal is not one sentence saying what to do: %q", want)
	}

	log := slog.New(slog.DiscardHandler)
	a, err := openApp(c, envFunc(env), log)
	if err == nil {
		a.close(log)
		t.Fatal("openApp of an old DATA_DIR: got nil, want the refusal")
	}
	if err.Error() != want {
		t.Errorf("openApp: got %q, want %q", err, want)
	}
	env["CREDENTIALS_KEY_PREVIOUS"] = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	for _, args := range [][]string{{"rotate-key"}, {"reindex"}, {"admin", "grant", "a@example.org"}, {"backup", filepath.Join(t.TempDir(), "b")}} {
		if out, err := runCmd(t, env, args...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v\n%s; want the refusal", args[0], err, out)
		}
	}
	if after := snapshot(t, dir); len(after) != len(before) {
		t.Errorf("the refused DATA_DIR changed: %d files, had %d", len(after), len(before))
	} else {
		for path, b := range before {
			if after[path] != b {
				t.Errorf("the refused DATA_DIR changed: %s", path)
			}
		}
	}
}

// TestDataFormatFile: a new DATA_DIR gets the format file before any store
// writes, opens again, and a format file this build does not know is
// refused; a backup carries the file, and a backup without it is not
// restored.
func TestDataFormatFile(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(dir)
	c, err := loadConfig(envFunc(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.devSecrets(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	for range 2 {
		a, err := openApp(c, envFunc(env), log)
		if err != nil {
			t.Fatal(err)
		}
		a.close(log)
	}
	if b, err := os.ReadFile(filepath.Join(dir, formatFile)); err != nil || string(b) != dataFormat {
		t.Fatalf("format file: got %q, %v; want %q", b, err, dataFormat)
	}

	backup := filepath.Join(t.TempDir(), "b")
	if out, err := runCmd(t, env, "backup", backup); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(backup, formatFile)); err != nil || string(b) != dataFormat {
		t.Errorf("the backup's format file: got %q, %v; want %q", b, err, dataFormat)
	}
	fresh := testEnv(t.TempDir())
	fresh["CREDENTIALS_KEY"], fresh["SESSION_SECRET"] = env["CREDENTIALS_KEY"], env["SESSION_SECRET"]
	if err := os.Remove(filepath.Join(backup, formatFile)); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(t, fresh, "restore", backup); err == nil || !strings.Contains(err.Error(), "move it aside") {
		t.Errorf("restore of a backup without a format file: got %v\n%s; want the refusal", err, out)
	}
	if err := os.WriteFile(filepath.Join(backup, formatFile), []byte(dataFormat), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(t, fresh, "restore", backup); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(fresh["DATA_DIR"], formatFile)); err != nil || string(b) != dataFormat {
		t.Errorf("the restored format file: got %q, %v; want %q", b, err, dataFormat)
	}

	if err := os.WriteFile(filepath.Join(dir, formatFile), []byte("searchsvc data 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a, err := openApp(c, envFunc(env), log); err == nil {
		a.close(log)
		t.Error("openApp under an unknown format: got nil, want an error")
	} else if !strings.Contains(err.Error(), "searchsvc data 3") {
		t.Errorf("openApp under an unknown format: got %v, want it named", err)
	}
	if err := checkDataFormat(filepath.Join(t.TempDir(), "none")); err != nil {
		t.Errorf("a DATA_DIR not made yet: got %v, want nil", err)
	}
}
