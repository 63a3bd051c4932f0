package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runSplit is runCmd with stdout and stderr apart.
func runSplit(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), append([]string{"searchsvc"}, args...), envFunc(env), &out, &errOut)
	return out.String(), errOut.String(), err
}

// readDevSecrets returns DATA_DIR/dev-secrets.json as it is on disk.
func readDevSecrets(t *testing.T, dir string) devSecretsJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, devSecretsFile))
	if err != nil {
		t.Fatal(err)
	}
	var s devSecretsJSON
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// devServer fills a data directory as `make run` does (SESSION_SECURE=false,
// the secrets generated into it): two users, the first an admin, and a feed
// of two entries synced and indexed. It returns the stopped server's
// environment and the logged-in first user.
func devServer(t *testing.T) (map[string]string, *client) {
	t.Helper()
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, testFeed)
	}))
	t.Cleanup(feedSrv.Close)
	env := testEnv(t.TempDir())
	env["ALLOW_PRIVATE_TARGETS"] = "true" // the test feed is on 127.0.0.1
	srv := startRun(t, env)
	c := newClient(t, srv.URL)
	for _, email := range []string{"first@example.org", "second@example.org"} {
		if status, body, _ := newClient(t, srv.URL).do("POST", "/v1/auth/register", map[string]string{
			"email": email, "password": "a long enough password", "name": "N"}); status != 201 {
			t.Fatalf("register %s: %d %v", email, status, body)
		}
	}
	c.do("POST", "/v1/auth/login", map[string]string{"email": "first@example.org", "password": "a long enough password"})
	if status, body, _ := c.do("POST", "/v1/user-integrations/feed/credentials", map[string]any{"fields": map[string]string{"url": feedSrv.URL}}); status != 201 {
		t.Fatalf("connect feed: %d %v", status, body)
	}
	waitItems(t, c, 2)
	waitFor(t, "the entries found", func() bool { got, _ := searchIDs(t, c, "q=headline"); return len(got) == 2 })
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	return env, c
}

// TestCommandsOnADevDataDir: every command works on the data directory
// `make run` leaves with DATA_DIR alone set (no SESSION_SECURE=false, no
// secret), taking the generated secrets from it and saying so on stderr.
func TestCommandsOnADevDataDir(t *testing.T) {
	env, _ := devServer(t)
	dir := env["DATA_DIR"]
	plain := map[string]string{"DATA_DIR": dir}
	said := "CREDENTIALS_KEY from " + filepath.Join(dir, devSecretsFile)

	if out, _, err := runSplit(t, plain, "verify"); err != nil || !strings.Contains(out, "main: ") {
		t.Errorf("verify: %v\n%s", err, out)
	}
	out, errOut, err := runSplit(t, plain, "admin", "grant", "second@example.org")
	if err != nil || !strings.Contains(out, "second@example.org is now admin") || !strings.Contains(errOut, said) {
		t.Errorf("admin grant: %v\nstdout %q\nstderr %q; want the grant, and stderr naming the secrets file", err, out, errOut)
	}
	out, errOut, err = runSplit(t, plain, "reindex")
	if err != nil || !strings.Contains(out, "indexed 2 items of 1 user ") || !strings.Contains(errOut, said) {
		t.Errorf("reindex: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	out, _, err = runSplit(t, plain, "rotate-key")
	if err != nil || !strings.Contains(out, "re-sealed 1 integration credentials, 2 items, 1 task or sync state, 2 users and the search index (2 documents)") {
		t.Errorf("rotate-key: %v\n%s", err, out)
	}
	backupDir := filepath.Join(t.TempDir(), "backup")
	if out, _, err := runSplit(t, plain, "backup", backupDir); err != nil || !strings.Contains(out, "main: ") {
		t.Errorf("backup: %v\n%s", err, out)
	}
	// The secrets are not part of a backup: a user copies them along, as
	// CREDENTIALS_KEY would be set for a production restore.
	fresh := map[string]string{"DATA_DIR": t.TempDir()}
	copyDevSecrets(t, dir, fresh["DATA_DIR"])
	out, errOut, err = runSplit(t, fresh, "restore", backupDir)
	if err != nil || !strings.Contains(out, "restored") || strings.Contains(out, "warning") || !strings.Contains(errOut, devSecretsFile) {
		t.Errorf("restore: %v\nstdout %q\nstderr %q; want a restore without a warning", err, out, errOut)
	}

	// Without the file a command still says what it needs.
	if _, _, err := runSplit(t, map[string]string{"DATA_DIR": t.TempDir()}, "reindex"); err == nil || !strings.Contains(err.Error(), "CREDENTIALS_KEY is required") {
		t.Errorf("reindex on a directory without secrets: got %v, want CREDENTIALS_KEY required", err)
	}
	// And the server itself never takes the file unless told it is in
	// development: SESSION_SECURE=true still requires both secrets.
	if err := run(context.Background(), []string{"searchsvc"}, envFunc(plain), &bytes.Buffer{}, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "CREDENTIALS_KEY is required when SESSION_SECURE=true") {
		t.Errorf("serve with DATA_DIR alone: got %v, want the secrets required", err)
	}
}

// TestDevRotateKey: rotate-key on a development data directory makes a new
// key current in dev-secrets.json and drops the old one once everything
// is re-sealed; the server then opens under the new key alone, finds the
// items and keeps the sessions. A rotation cut short (the file holding the
// new key with the old as previous) still opens, and the next rotate-key
// finishes it under the same new key.
func TestDevRotateKey(t *testing.T) {
	env, c := devServer(t)
	dir := env["DATA_DIR"]
	plain := map[string]string{"DATA_DIR": dir}
	before := readDevSecrets(t, dir)

	out, _, err := runSplit(t, plain, "rotate-key")
	if err != nil || !strings.Contains(out, "re-sealed 1 integration credentials, 2 items, 1 task or sync state, 2 users") {
		t.Fatalf("rotate-key: %v\n%s", err, out)
	}
	after := readDevSecrets(t, dir)
	if after.CredentialsKey == before.CredentialsKey || len(after.CredentialsKeyPrevious) != 0 || after.SessionSecret != before.SessionSecret {
		t.Fatalf("dev-secrets.json after rotate-key: got %+v from %+v; want a new key alone, the session secret kept", after, before)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, devSecretsFile+"*")); len(entries) != 1 {
		t.Errorf("files beside dev-secrets.json: %v", entries)
	}
	assertServes(t, env, c)

	// A rotation cut short: the new key written, nothing re-sealed yet.
	cfg, err := commandConfig(envFunc(plain), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := cfg.planDevRotation()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.begin(); err != nil {
		t.Fatal(err)
	}
	begun := readDevSecrets(t, dir)
	if begun.CredentialsKey == after.CredentialsKey || len(begun.CredentialsKeyPrevious) != 1 || begun.CredentialsKeyPrevious[0] != after.CredentialsKey {
		t.Fatalf("dev-secrets.json of a begun rotation: %+v", begun)
	}
	assertServes(t, env, c)
	// (The server re-sealed the users at its start already.)
	out, _, err = runSplit(t, plain, "rotate-key")
	if err != nil || !strings.Contains(out, "re-sealed 1 integration credentials, 2 items, ") {
		t.Fatalf("rotate-key resuming: %v\n%s", err, out)
	}
	if done := readDevSecrets(t, dir); done.CredentialsKey != begun.CredentialsKey || len(done.CredentialsKeyPrevious) != 0 {
		t.Errorf("dev-secrets.json after the resumed rotation: got %+v, want %s alone", done, begun.CredentialsKey)
	}
	assertServes(t, env, c)
}

// assertServes starts the development server on env and checks that c's
// session, its items and the search index came through.
func assertServes(t *testing.T, env map[string]string, c *client) {
	t.Helper()
	srv := startRun(t, env)
	c.base = srv.URL
	if status, body, _ := c.do("GET", "/v1/user/profile", nil); status != 200 {
		t.Errorf("profile: %d %v", status, body)
	}
	for _, it := range waitItems(t, c, 2) {
		id := it.(map[string]any)["id"].(string)
		if status, body, _ := c.do("GET", "/v1/items/"+id, nil); status != 200 || !strings.Contains(jsonString(body), "body text") {
			t.Errorf("item %s: %d %v", id, status, body)
		}
	}
	if got, _ := searchIDs(t, c, "q=headline"); len(got) != 2 {
		t.Errorf("search: %v, want 2 results", got)
	}
	if logs := srv.Logs.String(); strings.Contains(logs, "damaged") {
		t.Errorf("the index was found damaged:\n%s", logs)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestMakeRunPassesListenAddrAndBaseURL: `make run` starts the server on
// the LISTEN_ADDR and BASE_URL given on the command line or in the
// environment, 127.0.0.1:8080 and the server's default otherwise. make -n
// prints the recipe without running it.
func TestMakeRunPassesListenAddrAndBaseURL(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	serveLine := func(args []string, env ...string) string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"-n", "--no-print-directory", "run"}, args...)...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "LISTEN_ADDR=") && !strings.HasPrefix(kv, "BASE_URL=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("make -n run %v: %v", args, err)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasSuffix(l, "./bin/searchsvc serve") {
				return l
			}
		}
		t.Fatalf("make -n run %v printed no serve line:\n%s", args, out)
		return ""
	}
	for _, tc := range []struct {
		name      string
		args, env []string
		want      []string
		not       string
	}{
		{"defaults", nil, nil, []string{"LISTEN_ADDR='127.0.0.1:8080'", "SESSION_SECURE=false"}, "BASE_URL"},
		{"empty", nil, []string{"LISTEN_ADDR=", "BASE_URL="}, []string{"LISTEN_ADDR='127.0.0.1:8080'"}, "BASE_URL"},
		{"command line", []string{"LISTEN_ADDR=0.0.0.0:9000", "BASE_URL=http://pi.local:9000"}, nil,
			[]string{"LISTEN_ADDR='0.0.0.0:9000'", "BASE_URL='http://pi.local:9000'"}, "8080"},
		{"environment", nil, []string{"LISTEN_ADDR=0.0.0.0:9001", "BASE_URL=http://pi.local:9001"},
			[]string{"LISTEN_ADDR='0.0.0.0:9001'", "BASE_URL='http://pi.local:9001'"}, "8080"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := serveLine(tc.args, tc.env...)
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("got %q, want %s in it", line, w)
				}
			}
			if strings.Contains(line, tc.not) {
				t.Errorf("got %q, want no %s", line, tc.not)
			}
		})
	}
}
