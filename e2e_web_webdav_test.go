package main

import (
	"os"
	"testing"
)

// TestBrowserWebDAV: the WebDAV form on the connections page: the
// address and app password fields have their help; an http address, a
// loopback address (without ALLOW_PRIVATE_TARGETS) and a missing app
// password are each refused under their own field, in sentences that
// say why. It needs Chromium, as TestBrowser does; it fails without it
// in CI.
func TestBrowserWebDAV(t *testing.T) {
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
	srv := startRun(t, testEnv(t.TempDir()))
	b := startBrowser(t, bin, 1100, 760)
	w := &webTest{t: t, b: b, base: srv.URL, shots: os.Getenv("WEB_SHOTS")}
	const form = "form[data-integration=webdav]"
	under := func(name, class string) string {
		return `(e => e ? e.textContent : '')(document.querySelector('` + form + ` [name=` + name + `]').closest('div').querySelector('.` + class + `'))`
	}
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
	w.step("the address and app password fields have their help", func() error {
		if err := b.navigate(srv.URL + "/integrations"); err != nil {
			return err
		}
		if err := b.waitFor("the WebDAV form", `document.querySelector('`+form+`')`); err != nil {
			return err
		}
		if err := b.click("summary", "Connect WebDAV folder"); err != nil {
			return err
		}
		if err := w.waitValue("the address's help", under("url", "help"),
			"The https address of the folder to search, as the server's WebDAV settings show it (Nextcloud: https://cloud.example.org/remote.php/dav/files/USERNAME/). Its sub-folders are searched too; nothing in it is ever changed."); err != nil {
			return err
		}
		return w.waitValue("the password's help", under("password", "help"),
			"An app password made for this service in the server's security settings, rather than your own password.")
	})
	for _, c := range []struct{ url, password, field, want string }{
		{"http://cloud.example.org/dav/", "secret", "url",
			"Plain http is not supported: the password would cross the network unencrypted; use the server's https address."},
		{"https://127.0.0.1/dav/", "secret", "url",
			"This host is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true."},
		{"https://cloud.example.org/dav/", "", "password", "App password is required."},
	} {
		w.step(c.url+" is refused under the "+c.field+" field", func() error {
			for name, v := range map[string]string{"url": c.url, "username": "ann", "password": c.password} {
				if err := b.fill(form+" [name="+name+"]", v); err != nil {
					return err
				}
			}
			if err := b.click(form+" button[type=submit]", "Connect"); err != nil {
				return err
			}
			return w.waitValue("the field's error", under(c.field, "field-error"), c.want)
		})
	}
}
