package main

import (
	"bytes"
	"encoding/base64"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// debVersion is the package version the tests build; the binary inside
// says debBinVersion.
const (
	debVersion    = "0.0.0~test-1"
	debBinVersion = "0.0.0-test"
	debEpoch      = "1795777582" // SOURCE_DATE_EPOCH: 2026-11-27 11:06:22 UTC
)

// debTool returns the path of a program the package tests need, or skips
// the test without it; in CI (CI set) its absence fails, as .ci/run
// installs it.
func debTool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing; .ci/run installs it (apt-get install %s)", name, pkg)
		}
		t.Skipf("%s not installed (apt-get install %s): the Debian package is not built here", name, pkg)
	}
	return path
}

// buildDeb builds the amd64 package the way `make deb` does, from a binary
// built with the Makefile's release flags, into out.
func buildDeb(t *testing.T, bin, out string) string {
	t.Helper()
	cmd := exec.Command(".ci/debian/build", bin, "amd64", debVersion, out)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+debEpoch, "DEB_MAINTAINER=")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf(".ci/debian/build: %v\n%s", err, got)
	}
	want := filepath.Join(out, "searchsvc_"+debVersion+"_amd64.deb")
	if path := strings.TrimSpace(string(got)); path != want {
		t.Fatalf(".ci/debian/build printed %q, want %q", path, want)
	}
	return want
}

// TestDebianPackage builds the amd64 package as `make deb` does, checks it
// is reproducible, that lintian finds no error in it, and installs it with
// dpkg into a throw-away root: every path the unit names must be there,
// with the owner and mode the unit and README.Debian promise, the secrets
// generated once and kept, and a purge must keep them.
func TestDebianPackage(t *testing.T) {
	debTool(t, "dpkg-deb", "dpkg")
	dpkg := debTool(t, "dpkg", "dpkg")
	lintian := debTool(t, "lintian", "lintian")
	debTool(t, "systemd-sysusers", "systemd") // postinst runs it
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("dpkg --root must run as root to give files their owners; CI runs as root")
		}
		t.Skip("not root: dpkg cannot install into a throw-away root here")
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "searchsvc")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X main.version="+debBinVersion, "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	deb := buildDeb(t, bin, filepath.Join(dir, "a"))

	t.Run("reproducible", func(t *testing.T) {
		again := buildDeb(t, bin, filepath.Join(dir, "b"))
		a, err := os.ReadFile(deb)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("two builds of the same binary differ (%d and %d bytes)", len(a), len(b))
		}
	})

	t.Run("contents", func(t *testing.T) { checkDebContents(t, deb) })
	t.Run("control", func(t *testing.T) { checkDebControl(t, deb) })
	t.Run("copyright", func(t *testing.T) { checkDebCopyright(t, bin) })

	t.Run("lintian", func(t *testing.T) {
		cmd := exec.Command(lintian, "--display-info", deb)
		out, err := cmd.CombinedOutput()
		var errs []string
		for _, line := range strings.Split(string(out), "\n") {
			switch {
			case strings.HasPrefix(line, "E: "):
				errs = append(errs, line)
			case strings.HasPrefix(line, "W: "), strings.HasPrefix(line, "I: "):
				t.Logf("lintian: %s", line)
			}
		}
		if len(errs) > 0 {
			t.Errorf("lintian: got errors\n%s\nwant none", strings.Join(errs, "\n"))
		}
		if err != nil && len(errs) == 0 {
			t.Errorf("lintian failed without an error tag: %v\n%s", err, out)
		}
	})

	t.Run("install", func(t *testing.T) { checkDebInstall(t, dpkg, deb) })
}

// debEntry is one line of `dpkg-deb --contents`.
type debEntry struct{ mode, owner, date, path string }

// checkDebContents compares the archive's listing with the files the
// package must hold: each owned by root, dated SOURCE_DATE_EPOCH.
func checkDebContents(t *testing.T, deb string) {
	cmd := exec.Command("dpkg-deb", "--contents", deb)
	cmd.Env = append(os.Environ(), "TZ=UTC") // dpkg-deb prints local time
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"./etc/searchsvc/searchsvc.env":                 "-rw-r--r--",
		"./usr/bin/searchsvc":                           "-rwxr-xr-x",
		"./usr/lib/systemd/system/searchsvc.service":    "-rw-r--r--",
		"./usr/lib/sysusers.d/searchsvc.conf":           "-rw-r--r--",
		"./usr/share/doc/searchsvc/README.Debian":       "-rw-r--r--",
		"./usr/share/doc/searchsvc/changelog.Debian.gz": "-rw-r--r--",
		"./usr/share/doc/searchsvc/copyright":           "-rw-r--r--",
		"./usr/share/lintian/overrides/searchsvc":       "-rw-r--r--",
		"./usr/share/man/man1/searchsvc.1.gz":           "-rw-r--r--",
	}
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Fatalf("dpkg-deb --contents: unexpected line %q", line)
		}
		e := debEntry{mode: f[0], owner: f[1], date: f[3] + " " + f[4], path: f[5]}
		paths = append(paths, e.path)
		if e.owner != "root/root" {
			t.Errorf("%s: owner %s, want root/root", e.path, e.owner)
		}
		if e.date != "2026-11-27 11:06" { // debEpoch

			t.Errorf("%s: dated %s, want SOURCE_DATE_EPOCH", e.path, e.date)
		}
		if strings.HasSuffix(e.path, "/") {
			if e.mode != "drwxr-xr-x" {
				t.Errorf("%s: mode %s, want drwxr-xr-x", e.path, e.mode)
			}
			continue
		}
		m, ok := want[e.path]
		if !ok {
			t.Errorf("%s: in the package, not expected", e.path)
			continue
		}
		if e.mode != m {
			t.Errorf("%s: mode %s, want %s", e.path, e.mode, m)
		}
		delete(want, e.path)
	}
	for p := range want {
		t.Errorf("%s: missing from the package", p)
	}
	if !slices.IsSorted(paths) {
		t.Errorf("archive order not sorted:\n%s", strings.Join(paths, "\n"))
	}
}

// checkDebControl checks the control fields and the maintainer scripts.
func checkDebControl(t *testing.T, deb string) {
	want := map[string]string{
		"Package":      "searchsvc",
		"Version":      debVersion,
		"Architecture": "amd64",
		"Depends":      "systemd | systemd-standalone-sysusers | systemd-sysusers",
		"Section":      "net",
		"Priority":     "optional",
	}
	for field, v := range want {
		out, err := exec.Command("dpkg-deb", "--field", deb, field).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != v {
			t.Errorf("%s: got %q, want %q", field, got, v)
		}
	}
	out, err := exec.Command("dpkg-deb", "--field", deb, "Installed-Size").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The binary alone is several MiB; a size counted in bytes or blocks of
	// the build's file system would be far off.
	if kib, err := strconv.Atoi(strings.TrimSpace(string(out))); err != nil || kib < 4000 || kib > 40000 {
		t.Errorf("Installed-Size: got %q, want the KiB of the files (4000 to 40000)", out)
	}
	ctrl := t.TempDir()
	if out, err := exec.Command("dpkg-deb", "--control", deb, ctrl).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --control: %v\n%s", err, out)
	}
	conffiles, err := os.ReadFile(filepath.Join(ctrl, "conffiles"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(conffiles); got != "/etc/searchsvc/searchsvc.env\n" {
		t.Errorf("conffiles: got %q, want only /etc/searchsvc/searchsvc.env", got)
	}
	sums, err := os.ReadFile(filepath.Join(ctrl, "md5sums"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(sums), "\n"); n != 9 || !strings.Contains(string(sums), "  usr/bin/searchsvc\n") {
		t.Errorf("md5sums: got %d lines\n%s\nwant one for each of the 9 files", n, sums)
	}
}

// checkDebCopyright checks that .ci/debian/copyright names every Go module
// compiled into the binary: each one's license asks that a binary carry
// its notice.
func checkDebCopyright(t *testing.T, bin string) {
	copyright, err := os.ReadFile(".ci/debian/copyright")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "dep" {
			continue
		}
		deps++
		if !bytes.Contains(copyright, []byte(f[1]+"/*")) {
			t.Errorf(".ci/debian/copyright: no Files: paragraph for %s, compiled into the binary", f[1])
		}
	}
	if deps == 0 {
		t.Errorf("go version -m: no dep lines in\n%s", out)
	}
}

// debRoot is a throw-away root dpkg installs into, running the maintainer
// scripts outside a chroot with DPKG_ROOT set (postinst keeps every path
// under it).
type debRoot struct {
	dir, dpkg string
}

func newDebRoot(t *testing.T, dpkg string) *debRoot {
	t.Helper()
	r := &debRoot{dir: t.TempDir(), dpkg: dpkg}
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates", "etc"} {
		if err := os.MkdirAll(r.at(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"var/lib/dpkg/status", "var/lib/dpkg/available"} {
		writeFile(t, r.at(f), "", 0o644)
	}
	return r
}

// at is the path inside the root of an absolute or relative path p.
func (r *debRoot) at(p string) string { return filepath.Join(r.dir, p) }

// run runs dpkg on the root and returns its output.
func (r *debRoot) run(t *testing.T, args ...string) string {
	t.Helper()
	args = append([]string{"--root=" + r.dir, "--force-script-chrootless", "--force-depends"}, args...)
	out, err := exec.Command(r.dpkg, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// unitValues returns the values of key in the [Service] section of the
// installed unit.
func (r *debRoot) unitValues(t *testing.T, key string) []string {
	t.Helper()
	var vs []string
	for _, s := range readUnit(t, r.at("usr/lib/systemd/system/searchsvc.service")) {
		if s.section == "Service" && s.key == key {
			vs = append(vs, s.value)
		}
	}
	return vs
}

// checkDebInstall installs the package into a throw-away root and checks
// every path the installed unit names against what landed, then a second
// install and a purge.
func checkDebInstall(t *testing.T, dpkg, deb string) {
	r := newDebRoot(t, dpkg)
	out := r.run(t, "--install", deb)
	for _, name := range []string{"session_secret", "credentials_key"} {
		if want := "searchsvc: created /etc/searchsvc/credentials/" + name; !strings.Contains(out, want) {
			t.Errorf("first install: output lacks %q:\n%s", want, out)
		}
	}
	gid := debGroupID(t, r.at("etc/group"), "searchsvc")
	exe := checkDebExecStart(t, r)
	checkDebUser(t, r, gid)
	env := checkDebEnvFile(t, r, gid)
	secrets := checkDebSecrets(t, r)

	// A second install keeps the secrets and the administrator's settings.
	edited := append(bytes.Clone(env), "BASE_URL=https://search.example.org\n"...)
	envPath := r.at("etc/searchsvc/searchsvc.env")
	if err := os.WriteFile(envPath, edited, 0o640); err != nil {
		t.Fatal(err)
	}
	if out := r.run(t, "--install", deb); strings.Contains(out, "searchsvc: created") {
		t.Errorf("second install: created a secret:\n%s", out)
	}
	debCheckSecretsKept(t, r, secrets, "second install")
	if got, _ := os.ReadFile(envPath); !bytes.Equal(got, edited) {
		t.Errorf("second install: searchsvc.env not kept as edited:\n%s", got)
	}
	debCheckFile(t, envPath, 0o640, gid)

	// A purge takes the package and its configuration, not the secrets.
	r.run(t, "--purge", "searchsvc")
	for _, gone := range []string{exe, "/usr/lib/systemd/system/searchsvc.service", "/etc/searchsvc/searchsvc.env"} {
		if _, err := os.Lstat(r.at(gone)); !os.IsNotExist(err) {
			t.Errorf("after purge: %s: got %v, want it removed", gone, err)
		}
	}
	debCheckSecretsKept(t, r, secrets, "after purge")
}

// checkDebExecStart checks the binary ExecStart names, and that it runs;
// it returns its path.
func checkDebExecStart(t *testing.T, r *debRoot) string {
	t.Helper()
	exe, _, _ := strings.Cut(r.unitValues(t, "ExecStart")[0], " ")
	if exe != "/usr/bin/searchsvc" {
		t.Errorf("ExecStart: got %s, want /usr/bin/searchsvc", exe)
	}
	debCheckFile(t, r.at(exe), 0o755, 0)
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		got, err := exec.Command(r.at(exe), "version").Output()
		if err != nil || !strings.HasPrefix(string(got), "searchsvc "+debBinVersion+" ") {
			t.Errorf("%s version: got %q, %v; want searchsvc %s …", exe, got, err, debBinVersion)
		}
	}
	return exe
}

// checkDebUser checks that the user the unit names exists, from
// sysusers.d, with its own group gid, no home and no shell.
func checkDebUser(t *testing.T, r *debRoot, gid int) {
	t.Helper()
	if users := r.unitValues(t, "User"); len(users) != 1 || users[0] != "searchsvc" {
		t.Fatalf("User=: got %q, want searchsvc", users)
	}
	debCheckFile(t, r.at("usr/lib/sysusers.d/searchsvc.conf"), 0o644, 0)
	passwd, err := os.ReadFile(r.at("etc/passwd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(passwd), "\n") {
		if f := strings.Split(line, ":"); len(f) == 7 && f[0] == "searchsvc" {
			if want := strconv.Itoa(gid) + ":searchsvc service:/nonexistent:/usr/sbin/nologin"; strings.Join(f[3:], ":") != want {
				t.Errorf("etc/passwd: got %q, want searchsvc:x:<uid>:%s", line, want)
			}
			return
		}
	}
	t.Errorf("etc/passwd: no user searchsvc in\n%s", passwd)
}

// checkDebEnvFile checks the file EnvironmentFile= names: the example,
// readable by root and the group searchsvc only. It returns its content.
func checkDebEnvFile(t *testing.T, r *debRoot, gid int) []byte {
	t.Helper()
	envFiles := r.unitValues(t, "EnvironmentFile")
	if len(envFiles) != 1 || envFiles[0] != "-/etc/searchsvc/searchsvc.env" {
		t.Fatalf("EnvironmentFile=: got %q, want -/etc/searchsvc/searchsvc.env", envFiles)
	}
	path := r.at(strings.TrimPrefix(envFiles[0], "-"))
	debCheckFile(t, path, 0o640, gid)
	example, err := os.ReadFile(envExampleFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, example) {
		t.Errorf("%s: not the example %s", path, envExampleFile)
	}
	return example
}

// checkDebSecrets checks the files LoadCredential= reads: 0600 root in a
// 0700 directory, base64 of 48 and 32 random bytes, a valid production
// configuration as they are. It returns them by credential id.
func checkDebSecrets(t *testing.T, r *debRoot) map[string][]byte {
	t.Helper()
	secrets := map[string][]byte{}
	for _, lc := range r.unitValues(t, "LoadCredential") {
		id, path, _ := strings.Cut(lc, ":")
		debCheckFile(t, r.at(path), 0o600, 0)
		b, err := os.ReadFile(r.at(path))
		if err != nil {
			t.Fatal(err)
		}
		secrets[id] = b
	}
	credDir := r.at("etc/searchsvc/credentials")
	if fi, err := os.Stat(credDir); err != nil || fi.Mode() != fs.ModeDir|0o700 {
		t.Errorf("%s: got %v, %v; want a directory 0700", credDir, fi.Mode(), err)
	}
	for id, n := range map[string]int{"session_secret": 48, "credentials_key": 32} {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(secrets[id])))
		if err != nil || len(raw) != n {
			t.Errorf("%s: got %d bytes (%v), want base64 of %d random bytes", id, len(raw), err, n)
		}
	}
	if _, err := loadConfig(func(k string) string {
		return map[string]string{"CREDENTIALS_DIRECTORY": credDir}[k]
	}); err != nil {
		t.Errorf("loadConfig with the generated credentials: %v", err)
	}
	return secrets
}

// debCheckSecretsKept checks that each secret is still there, unchanged.
func debCheckSecretsKept(t *testing.T, r *debRoot, secrets map[string][]byte, when string) {
	t.Helper()
	for id, b := range secrets {
		if got, err := os.ReadFile(r.at("etc/searchsvc/credentials/" + id)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s: %s: got %v, changed %t; want it kept unchanged", when, id, err, !bytes.Equal(got, b))
		}
	}
}

// debGroupID returns the id of group name in the group file at path.
func debGroupID(t *testing.T, path, name string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 4 && f[0] == name {
			id, err := strconv.Atoi(f[2])
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
	}
	t.Fatalf("%s: no group %s in\n%s", path, name, b)
	return 0
}

// debCheckFile checks that path is a regular file with mode perm, owned by
// root and group gid.
func debCheckFile(t *testing.T, path string, perm fs.FileMode, gid int) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	st := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != perm || st.Uid != 0 || int(st.Gid) != gid {
		t.Errorf("%s: got %v %d:%d, want a file %v 0:%d", path, fi.Mode(), st.Uid, st.Gid, perm, gid)
	}
}
