package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	unitFile       = "searchsvc.service"
	envExampleFile = "testdata/systemd/searchsvc.env.example"
	maxExposure    = 2.0
)

// unitSetting is one Key=value of a unit file, with its section.
type unitSetting struct {
	section, key, value string
}

// readUnit parses a unit file just enough for these tests: sections,
// Key=value lines, comments. It does not join continuation lines, which
// searchsvc.service does not use.
func readUnit(t *testing.T, path string) []unitSetting {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []unitSetting
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "", line[0] == '#', line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s:%d: not Key=value: %q", path, n, line)
			}
			out = append(out, unitSetting{section, strings.TrimSpace(k), strings.TrimSpace(v)})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// systemdAnalyze returns the path of systemd-analyze, or skips the test.
func systemdAnalyze(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed; the unit is not checked here")
	}
	return path
}

func quietEnv() []string {
	return append(os.Environ(), "SYSTEMD_COLORS=0", "SYSTEMD_PAGER=", "SYSTEMD_LOG_COLOR=0")
}

var exposureRe = regexp.MustCompile(`Overall exposure level for searchsvc\.service: ([0-9]+\.[0-9]+)`)

// TestSystemdUnitSecurity keeps the sandbox honest: systemd's own offline
// review of the unit file must rate its exposure at maxExposure or lower.
func TestSystemdUnitSecurity(t *testing.T) {
	analyze := systemdAnalyze(t)
	unit, err := filepath.Abs(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(analyze, "security", "--offline=yes", "--no-pager", unit)
	cmd.Env = quietEnv()
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "--offline") {
		t.Skipf("systemd-analyze is too old for an offline review (systemd 250 or newer): %s", firstLine(out))
	}
	m := exposureRe.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no exposure level in the output of systemd-analyze security (err %v):\n%s", err, out)
	}
	got, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("systemd-analyze security: exposure %.1f", got)
	if got > maxExposure {
		t.Errorf("exposure: got %.1f, want %.1f or lower; the review:\n%s", got, maxExposure, out)
	}
}

// TestSystemdUnitVerify runs `systemd-analyze verify` on the unit inside a
// throw-away root (--root) holding a copy of the host's system units, so the
// targets it orders after resolve, and an executable stand-in for
// /usr/local/bin/searchsvc, so the check neither depends on nor touches an
// installed copy. verify exits 0 even for unknown keys and bad values, so
// any complaint that names the unit fails the test; a unit with a typo
// proves that the complaint would be seen.
func TestSystemdUnitVerify(t *testing.T) {
	analyze := systemdAnalyze(t)
	hostUnits := ""
	for _, dir := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		if _, err := os.Stat(filepath.Join(dir, "multi-user.target")); err == nil {
			hostUnits = dir
			break
		}
	}
	if hostUnits == "" {
		t.Skip("no systemd unit directory with multi-user.target on this host")
	}
	unit, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := copyTree(filepath.Join(root, "usr/lib/systemd/system"), hostUnits); err != nil {
		t.Fatalf("copy host units: %v", err)
	}
	writeFile(t, filepath.Join(root, "usr/local/bin/searchsvc"), "#!/bin/sh\nexit 0\n", 0o755)

	verify := func(t *testing.T, content string) (complaints []string) {
		t.Helper()
		writeFile(t, filepath.Join(root, "etc/systemd/system", unitFile), content, 0o644)
		cmd := exec.Command(analyze, "verify", "--man=no", "--generators=no", "--root="+root, unitFile)
		cmd.Env = quietEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			complaints = append(complaints, "exit: "+err.Error())
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			switch {
			case line == "":
			case strings.Contains(line, unitFile):
				complaints = append(complaints, line)
			default:
				t.Logf("systemd-analyze verify, about another unit: %s", line)
			}
		}
		return complaints
	}

	t.Run("a typo is reported", func(t *testing.T) {
		typo := strings.Replace(string(unit), "\nWatchdogSec=", "\nWatchdogSecs=", 1)
		if typo == string(unit) {
			t.Fatal("the unit has no WatchdogSec= line to misspell")
		}
		if got := verify(t, typo); len(got) == 0 {
			t.Fatal("systemd-analyze verify reported nothing for WatchdogSecs=; this check cannot see mistakes here")
		}
	})
	t.Run("searchsvc.service", func(t *testing.T) {
		if got := verify(t, string(unit)); len(got) > 0 {
			t.Errorf("systemd-analyze verify: got\n%s\nwant no complaints", strings.Join(got, "\n"))
		}
	})
}

// TestSystemdUnitCredentials checks that the credentials the unit loads are
// exactly those searchsvc reads from $CREDENTIALS_DIRECTORY, from the files
// `make install` creates, in the format it generates: a config loaded from
// nothing but those files is a valid production config.
func TestSystemdUnitCredentials(t *testing.T) {
	var ids []string
	dir := t.TempDir()
	want := map[string]string{
		// make install writes base64 of 48 and of 32 random bytes.
		"session_secret":  base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 48)),
		"credentials_key": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32)),
	}
	for _, s := range readUnit(t, unitFile) {
		if s.section != "Service" || s.key != "LoadCredential" {
			continue
		}
		id, path, ok := strings.Cut(s.value, ":")
		if !ok {
			t.Fatalf("LoadCredential=%s: want ID:PATH", s.value)
		}
		if wantPath := "/etc/searchsvc/credentials/" + id; path != wantPath {
			t.Errorf("LoadCredential %s: got path %s, want %s (where make install creates it)", id, path, wantPath)
		}
		ids = append(ids, id)
		if v, ok := want[id]; ok {
			writeFile(t, filepath.Join(dir, id), v+"\n", 0o600) // as make install writes it
		}
	}
	slices.Sort(ids)
	if wantIDs := []string{"credentials_key", "session_secret"}; !slices.Equal(ids, wantIDs) {
		t.Fatalf("LoadCredential ids: got %q, want %q", ids, wantIDs)
	}

	c, err := loadConfig(func(k string) string {
		return map[string]string{"CREDENTIALS_DIRECTORY": dir}[k]
	})
	if err != nil {
		t.Fatalf("loadConfig with only $CREDENTIALS_DIRECTORY: %v", err)
	}
	if !c.SessionSecure {
		t.Fatal("SessionSecure: got false, want the production default true")
	}
	if got := string(c.SessionSecret); got != want["session_secret"] {
		t.Errorf("SessionSecret: got %q, want the session_secret credential %q", got, want["session_secret"])
	}
	if got := base64.StdEncoding.EncodeToString(c.CredentialsKey); got != want["credentials_key"] {
		t.Errorf("CredentialsKey: got %q, want the credentials_key credential %q", got, want["credentials_key"])
	}
}

var envLineRe = regexp.MustCompile(`^#?([A-Z][A-Z0-9_]*)=(.*)$`)

// TestSystemdEnvExample checks the EnvironmentFile example: it sets nothing
// until edited, it shows every non-secret variable of envVars, and the value
// it shows for each is the real default (uncommenting every line changes no
// setting).
func TestSystemdEnvExample(t *testing.T) {
	b, err := os.ReadFile(envExampleFile)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" {
			continue
		}
		if line[0] != '#' {
			t.Errorf("%s:%d: got active line %q, want every setting commented out", envExampleFile, i+1, line)
			continue
		}
		if m := envLineRe.FindStringSubmatch(line); m != nil {
			shown[m[1]] = m[2]
		}
	}

	notHere := []string{"DATA_DIR", "SESSION_SECRET", "CREDENTIALS_KEY", "CREDENTIALS_KEY_PREVIOUS"}
	for _, v := range envVars {
		name := v[0]
		_, ok := shown[name]
		switch {
		case strings.HasPrefix(name, "<DOMAIN>"):
		case slices.Contains(notHere, name) && ok:
			t.Errorf("%s: shows %s, which the unit or a credential sets", envExampleFile, name)
		case !slices.Contains(notHere, name) && !ok:
			t.Errorf("%s: %s missing", envExampleFile, name)
		}
	}
	for _, domain := range []string{"GMAIL", "SLACK", "DROPBOX"} {
		for _, suffix := range []string{"_OAUTH_CLIENT_ID", "_OAUTH_CLIENT_SECRET"} {
			if _, ok := shown[domain+suffix]; !ok {
				t.Errorf("%s: %s missing", envExampleFile, domain+suffix)
			}
		}
	}

	// Secrets are needed for a production config; they come from elsewhere.
	secrets := map[string]string{
		"SESSION_SECRET":  strings.Repeat("s", 64),
		"CREDENTIALS_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)),
	}
	defaults, err := loadConfig(func(k string) string { return secrets[k] })
	if err != nil {
		t.Fatal(err)
	}
	uncommented, err := loadConfig(func(k string) string {
		if v, ok := secrets[k]; ok {
			return v
		}
		return shown[k]
	})
	if err != nil {
		t.Fatalf("loadConfig with every example line uncommented: %v", err)
	}
	if !reflect.DeepEqual(uncommented, defaults) {
		t.Errorf("uncommenting the example changes the config:\ngot  %+v\nwant %+v", uncommented, defaults)
	}
}

func writeFile(t *testing.T, path, content string, perm fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies directories, regular files and symbolic links (as links)
// from src to dst.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		default:
			return errors.New(path + ": not a file, directory or link")
		}
	})
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// TestSystemdUnitMemory: the unit caps the service's memory above the
// binary's own soft limit (MEMORY_LIMIT_MIB, 48 MiB by default), so the
// kernel never has to act before the Go collector does.
func TestSystemdUnitMemory(t *testing.T) {
	b, err := os.ReadFile("searchsvc.service")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"MemoryHigh": "112M", "MemoryMax": "160M"}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if w, in := want[k]; ok && in {
			if v != w {
				t.Errorf("%s=%s, want %s", k, v, w)
			}
			delete(want, k)
		}
	}
	for k := range want {
		t.Errorf("searchsvc.service has no %s=", k)
	}
}
