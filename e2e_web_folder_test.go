package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestBrowserFolder: the folder form on the connections page, on a
// server with FOLDER_ROOTS set: the path field's help says where folders
// may be; a path outside the root and a link leading out of it are
// refused under the field, in sentences naming the root; a folder given
// by its path inside the root is connected, and its card shows its
// label and its source. Without FOLDER_ROOTS the catalogue card names
// the setting. It needs Chromium, as TestBrowser does; it fails without
// it in CI.
func TestBrowserFolder(t *testing.T) {
	bin := chromeBin()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is missing; .ci/run installs it")
		}
		t.Skip("browser test skipped: no Chromium found (set CHROME_BIN or put chromium on PATH)")
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	root := filepath.Join(t.TempDir(), "files")
	if err := os.MkdirAll(filepath.Join(root, "papers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "papers", "lease.txt"), []byte("the lease of the flat"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "away")); err != nil {
		t.Fatal(err)
	}
	env := testEnv(t.TempDir())
	env["FOLDER_ROOTS"] = root
	srv := startRun(t, env)
	b := startBrowser(t, bin, 1100, 760)
	w := &webTest{t: t, b: b, base: srv.URL, shots: os.Getenv("WEB_SHOTS")}
	const form = "form[data-integration=folder]"
	fieldError := `(e => e ? e.textContent : '')(document.querySelector('` + form + ` input[name=path]').closest('div').querySelector('.field-error'))`
	w.step("register", func() error {
		if err := b.navigate(srv.URL + "/register"); err != nil {
			return err
		}
		if err := b.waitFor("the register form", `document.querySelector('input[name=name]')`); err != nil {
			return err
		}
		for sel, v := range map[string]string{"input[name=email]": "ann@example.org", "input[name=name]": "Ann", "input[name=password]": "a long enough passphrase"} {
			if err := b.fill(sel, v); err != nil {
				return err
			}
		}
		if err := b.click("button[type=submit]", "Create account"); err != nil {
			return err
		}
		return b.waitFor("the search page", `['/', '/search'].includes(location.pathname) && document.querySelector('nav a[href="/integrations"]')`)
	})
	w.step("the path field's help says where folders may be", func() error {
		if err := b.navigate(srv.URL + "/integrations"); err != nil {
			return err
		}
		if err := b.waitFor("the folder form", `document.querySelector('`+form+`')`); err != nil {
			return err
		}
		if err := b.click("summary", "Connect Folder on this server"); err != nil {
			return err
		}
		return w.waitValue("the help", `document.querySelector('`+form+` input[name=path]').closest('div').querySelector('.help').textContent`,
			"A folder under "+root+": its full path, or its path inside "+root+". Hidden files are skipped; nothing in it is ever changed.")
	})
	for _, c := range []struct{ path, want string }{
		{"/etc", "Folder must be inside " + root + "."},
		{"away", "Folder must stay inside " + root + " once its symbolic links are followed, and this one leads out of it."},
		{"nowhere", "Folder is not readable: there is no such folder."},
	} {
		w.step("the path "+c.path+" is refused under the field", func() error {
			if err := b.fill(form+" input[name=path]", c.path); err != nil {
				return err
			}
			if err := b.click(form+" button[type=submit]", "Connect"); err != nil {
				return err
			}
			return w.waitValue("the field's error", fieldError, c.want)
		})
	}
	w.step("a folder inside the root is connected; its card shows its label and source", func() error {
		if err := b.fill(form+" input[name=path]", "papers"); err != nil {
			return err
		}
		if err := b.fill(form+" input[name=label]", "Home papers"); err != nil {
			return err
		}
		if err := b.click(form+" button[type=submit]", "Connect"); err != nil {
			return err
		}
		card := `document.querySelector('li.card[data-record]')`
		if err := b.waitFor("the folder's card", card+` && `+card+`.querySelector('.record-label')`); err != nil {
			return err
		}
		var got []string
		if err := b.eval(`[`+card+`.querySelector('.record-label').textContent, `+card+`.querySelector('dd.record-source').textContent]`, &got); err != nil {
			return err
		}
		if len(got) != 2 || got[0] != "Home papers" || got[1] != filepath.Join(root, "papers") {
			return fmt.Errorf("card: got %q, want label Home papers, source %s", got, filepath.Join(root, "papers"))
		}
		return nil
	})
	w.step("without FOLDER_ROOTS the catalogue card names the setting", func() error {
		var got string
		err := b.eval(`catalogueCard({domain: 'folder', displayName: 'Folder on this server', kind: 'files', authType: 'manual',
			fields: [], configured: false, requires: ['FOLDER_ROOTS']}, liveRegion(), async () => []).querySelector('p:last-child').textContent`, &got)
		if err != nil {
			return err
		}
		if want := "Not available yet: the administrator must set FOLDER_ROOTS."; got != want {
			return fmt.Errorf("catalogue card: got %q, want %q", got, want)
		}
		return nil
	})
}
