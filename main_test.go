package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func envFunc(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigDefaults(t *testing.T) {
	c, err := loadConfig(envFunc(map[string]string{"SESSION_SECURE": "false"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.ListenAddr != "127.0.0.1:8080" || c.DataDir != "./data" || c.SessionMaxAge.Seconds() != 604800 ||
		c.SessionIdleTimeout.Seconds() != 86400 || c.LoginRateLimit != 5 || c.LoginRateWindow.Seconds() != 60 ||
		c.PollInterval.Seconds() != 900 || c.SyncWorkers != 2 || c.StoreSync != "fsync" || !c.RegistrationOpen ||
		c.BaseURL.String() != "http://localhost:8080" || c.FrontendURL.String() != "http://localhost:8080" ||
		c.OAuthRedirectBase.String() != "http://localhost:8080" || c.SessionSliding || c.CSRFTokens || c.SessionBindIP {
		t.Errorf("defaults differ from the table of docs/configuration.md: %+v", c)
	}
	if c.MaxConnections != 512 || c.MaxClientConnections != 64 || c.BodyMemory != 16<<20 || c.MemoryLimit != 48<<20 ||
		c.GCPercent != gcOff {
		t.Errorf("load limits: got %d, %d, %d, %d, GC %d%%; want 512, 64, 16 MiB, 48 MiB, GC off (-1)",
			c.MaxConnections, c.MaxClientConnections, c.BodyMemory, c.MemoryLimit, c.GCPercent)
	}
	// GOMEMLIMIT alone is left to the runtime; MEMORY_LIMIT_MIB wins.
	for _, tt := range []struct {
		env  map[string]string
		want int64
	}{
		{map[string]string{"GOMEMLIMIT": "200MiB"}, 0},
		{map[string]string{"GOMEMLIMIT": "200MiB", "MEMORY_LIMIT_MIB": "48"}, 48 << 20},
		{map[string]string{"MEMORY_LIMIT_MIB": "0"}, 0},
	} {
		tt.env["SESSION_SECURE"] = "false"
		c, err := loadConfig(envFunc(tt.env))
		if err != nil || c.MemoryLimit != tt.want {
			t.Errorf("%v: got %d (%v), want %d", tt.env, c.MemoryLimit, err, tt.want)
		}
	}
	// Likewise GOGC alone is left to the runtime; GC_PERCENT wins. The
	// collector is off below the limit unless there is no limit.
	for _, tt := range []struct {
		env  map[string]string
		want int
	}{
		{map[string]string{"GOGC": "200"}, 0},
		{map[string]string{"GOGC": "200", "GC_PERCENT": "30"}, 30},
		{map[string]string{"GOGC": "200", "GC_PERCENT": "off"}, gcOff},
		{map[string]string{"GC_PERCENT": "0"}, 0},
		{map[string]string{"GC_PERCENT": "off"}, gcOff},
		{map[string]string{"MEMORY_LIMIT_MIB": "0"}, 0},
		{map[string]string{"MEMORY_LIMIT_MIB": "0", "GOMEMLIMIT": "100MiB"}, gcOff},
	} {
		tt.env["SESSION_SECURE"] = "false"
		c, err := loadConfig(envFunc(tt.env))
		if err != nil || c.GCPercent != tt.want {
			t.Errorf("%v: got %d (%v), want %d", tt.env, c.GCPercent, err, tt.want)
		}
	}
}

// TestConfigFolderRoots: FOLDER_ROOTS is cleaned, its repeats dropped,
// and none by default.
func TestConfigFolderRoots(t *testing.T) {
	c, err := loadConfig(envFunc(map[string]string{"SESSION_SECURE": "false"}))
	if err != nil || c.FolderRoots != nil {
		t.Fatalf("default: got %q (%v), want none", c.FolderRoots, err)
	}
	c, err = loadConfig(envFunc(map[string]string{"SESSION_SECURE": "false", "FOLDER_ROOTS": " /srv/files/ , /mnt/nas,/srv/files,"}))
	if err != nil || !slices.Equal(c.FolderRoots, []string{"/srv/files", "/mnt/nas"}) {
		t.Errorf("got %q (%v), want [/srv/files /mnt/nas]", c.FolderRoots, err)
	}
}

// TestConfigGCOffNeedsLimit: a collector off with no limit would never
// collect, so the configuration refuses it.
func TestConfigGCOffNeedsLimit(t *testing.T) {
	_, err := loadConfig(envFunc(map[string]string{"SESSION_SECURE": "false", "GC_PERCENT": "off", "MEMORY_LIMIT_MIB": "0"}))
	want := "GC_PERCENT off needs a memory limit (MEMORY_LIMIT_MIB above 0 or GOMEMLIMIT)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
}

func TestConfigErrorsNameTheVariable(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	secure := map[string]string{"SESSION_SECRET": strings.Repeat("s", 32), "CREDENTIALS_KEY": key}
	tests := []struct {
		name, value string
		want        string
	}{
		{"SESSION_MAX_AGE", "-1", "SESSION_MAX_AGE must be a whole number"},
		{"SESSION_IDLE_TIMEOUT", "1h", "SESSION_IDLE_TIMEOUT must be a whole number"},
		{"SESSION_SECURE", "yes please", "SESSION_SECURE must be true or false"},
		{"SESSION_SAME_SITE", "lax", "SESSION_SAME_SITE must be strict"},
		{"LOGIN_RATE_LIMIT", "0", "LOGIN_RATE_LIMIT must be a whole number"},
		{"REGISTRATION", "invite", "REGISTRATION must be open or closed"},
		{"STORE_SYNC", "sometimes", "STORE_SYNC must be fsync or none"},
		{"LOG_FORMAT", "xml", "LOG_FORMAT must be text or json"},
		{"LOG_LEVEL", "loud", "LOG_LEVEL must be debug"},
		{"TRUSTED_PROXIES", "10.0.0.0/99", "TRUSTED_PROXIES"},
		{"PRIVATE_TARGETS", "192.168.1.0/33", `PRIVATE_TARGETS "192.168.1.0/33" is not a CIDR`},
		{"PRIVATE_TARGETS", "192.168.1.0/24,127.0.0.0/8", "PRIVATE_TARGETS cannot allow 127.0.0.0/8: loopback, link-local and metadata addresses are reached only with ALLOW_PRIVATE_TARGETS=true"},
		{"PRIVATE_TARGETS", "169.254.169.254", "PRIVATE_TARGETS cannot allow 169.254.169.254/32"},
		{"LISTEN_ADDR", "8080", "LISTEN_ADDR must be host:port"},
		{"BASE_URL", "ftp://x", "BASE_URL must be an absolute http(s) URL"},
		{"OAUTH_REDIRECT_BASE_URL", "http://search.example.org", "OAUTH_REDIRECT_BASE_URL must use https"},
		{"OAUTH_REDIRECT_BASE_URL", "http://127.0.0.2:8080", "OAUTH_REDIRECT_BASE_URL must use https"},
		{"SESSION_SECRET", "short", "SESSION_SECRET must be at least 32 bytes"},
		{"CREDENTIALS_KEY", "bm90IDMyIGJ5dGVz", "CREDENTIALS_KEY must be base64 of exactly 32 bytes"},
		{"CREDENTIALS_KEY", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "CREDENTIALS_KEY must not be all zero bytes"},
		{"CREDENTIALS_KEY_PREVIOUS", key + ",AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "CREDENTIALS_KEY_PREVIOUS must not be all zero bytes"},
		{"CREDENTIALS_KEY_PREVIOUS", key + ",zzz", "CREDENTIALS_KEY_PREVIOUS must be base64"},
		{"SYNC_WORKERS", "1000", "SYNC_WORKERS must be a whole number from 1 to 64"},
		{"FOLDER_ROOTS", "/srv/files,nas", `FOLDER_ROOTS must list absolute directories, got "nas"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range secure {
				env[k] = v
			}
			env[tt.name] = tt.value
			_, err := loadConfig(envFunc(env))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestConfigSecureNeedsSecrets(t *testing.T) {
	_, err := loadConfig(envFunc(map[string]string{}))
	if err == nil || !strings.Contains(err.Error(), "SESSION_SECRET is required") ||
		!strings.Contains(err.Error(), "CREDENTIALS_KEY is required") {
		t.Errorf("got %v, want both missing secrets named", err)
	}
}

func TestSecretsFromFiles(t *testing.T) {
	dir := t.TempDir()
	secret := strings.Repeat("f", 40)
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	os.WriteFile(filepath.Join(dir, "secret"), []byte(secret+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "credentials_key"), []byte(key+"\n"), 0o600)
	c, err := loadConfig(envFunc(map[string]string{
		"SESSION_SECRET_FILE":   filepath.Join(dir, "secret"),
		"CREDENTIALS_DIRECTORY": dir,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if string(c.SessionSecret) != secret {
		t.Errorf("SESSION_SECRET from SESSION_SECRET_FILE: got %q", c.SessionSecret)
	}
	if !bytes.Equal(c.CredentialsKey, bytes.Repeat([]byte{7}, 32)) {
		t.Errorf("CREDENTIALS_KEY from $CREDENTIALS_DIRECTORY/credentials_key: got %x", c.CredentialsKey)
	}
	_, err = loadConfig(envFunc(map[string]string{"SESSION_SECRET_FILE": filepath.Join(dir, "missing")}))
	if err == nil || !strings.Contains(err.Error(), "SESSION_SECRET") {
		t.Errorf("unreadable SESSION_SECRET_FILE: got %v, want an error naming SESSION_SECRET", err)
	}
}

func TestDevSecretsPersist(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"SESSION_SECURE": "false", "DATA_DIR": dir}
	c1, _ := loadConfig(envFunc(env))
	if err := c1.devSecrets(); err != nil {
		t.Fatal(err)
	}
	c2, _ := loadConfig(envFunc(env))
	if err := c2.devSecrets(); err != nil {
		t.Fatal(err)
	}
	if len(c1.SessionSecret) < 32 || !bytes.Equal(c1.SessionSecret, c2.SessionSecret) || !bytes.Equal(c1.CredentialsKey, c2.CredentialsKey) {
		t.Errorf("dev secrets not reused across starts")
	}
	if strings.Join(c2.DevSecrets, ",") != "SESSION_SECRET,CREDENTIALS_KEY" {
		t.Errorf("DevSecrets: got %v", c2.DevSecrets)
	}
}

// writeFileSync never overwrites a file, with hard links or without (a
// FAT stick, played by a link that answers EPERM), and leaves no
// temporary file behind.
func TestWriteFileSync(t *testing.T) {
	noLinks := func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EPERM} }
	brokenLink := func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EIO} }
	for _, tc := range []struct {
		name string
		link func(string, string) error
	}{{"hard links", os.Link}, {"no hard links", noLinks}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if err := writeFileSyncLink(path, []byte("first"), tc.link); err != nil {
				t.Fatal(err)
			}
			if err := writeFileSyncLink(path, []byte("second"), tc.link); !errors.Is(err, fs.ErrExist) {
				t.Errorf("second write: got %v, want fs.ErrExist", err)
			}
			b, err := os.ReadFile(path)
			fi, _ := os.Stat(path)
			if err != nil || string(b) != "first" || fi.Mode().Perm() != 0o600 {
				t.Errorf("file: %q %v, mode %v; want \"first\", 0600", b, err, fi.Mode().Perm())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only f.json", len(entries))
			}
		})
	}
	// Any other link error is an error, not a reason to write otherwise.
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := writeFileSyncLink(path, []byte("x"), brokenLink); !errors.Is(err, syscall.EIO) {
		t.Errorf("link failing with EIO: got %v, want it returned", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("after a failed write the directory holds %d entries, want none", len(entries))
	}
}

func TestCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"searchsvc", "help"}, envFunc(nil), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"serve", "version", "LISTEN_ADDR", "SESSION_SECRET", "STORE_SYNC", "CREDENTIALS_DIRECTORY"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %s", want)
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"searchsvc", "version"}, envFunc(nil), &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "searchsvc dev") {
		t.Errorf("version: got %q, %v", out.String(), err)
	}
	err := run(context.Background(), []string{"searchsvc", "frobnicate"}, envFunc(nil), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `unknown command "frobnicate"`) {
		t.Errorf("unknown command: got %v", err)
	}
	err = run(context.Background(), []string{"searchsvc"}, envFunc(map[string]string{"SESSION_MAX_AGE": "x"}), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "SESSION_MAX_AGE") {
		t.Errorf("bad config: got %v, want it to name SESSION_MAX_AGE", err)
	}
}

func TestConfigPlainHTTPOnlyOnLoopback(t *testing.T) {
	for _, base := range []string{"http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080", "https://search.example.org"} {
		if _, err := loadConfig(envFunc(map[string]string{"SESSION_SECURE": "false", "OAUTH_REDIRECT_BASE_URL": base})); err != nil {
			t.Errorf("OAUTH_REDIRECT_BASE_URL=%s: got %v, want it accepted", base, err)
		}
	}
}
