package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"searchsvc/auth/totp"
)

// TestBrowserTOTP drives the second factor in headless Chromium against
// run() on port 0, as a person would: register, open Account, set up
// two-step sign-in (the QR code shows as an image from a blob: address,
// never as markup in the page; the key is read off the page as a person
// would type it into an app, and the test computes the app's code), save
// the recovery codes, sign out, and sign in: the form asks for the code,
// refuses a wrong one in words, and takes the right one. The server runs
// with CSRF_TOKENS=true, so every change also proves the token is sent.
//
// It needs Chromium (CHROME_BIN, or chromium on PATH): it skips without
// it, and fails without it in CI.
func TestBrowserTOTP(t *testing.T) {
	bin := chromeBin()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium not found: .ci/run installs chromium")
		}
		t.Skip("browser test skipped: no Chromium found (set CHROME_BIN or put chromium on PATH)")
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	env := testEnv(t.TempDir())
	env["CSRF_TOKENS"] = "true"
	srv := startRun(t, env)
	b := startBrowser(t, bin, 1100, 760)
	b.must(b.session, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": `
		window.__violations = [];
		document.addEventListener('securitypolicyviolation', e =>
			window.__violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));`}, nil)
	w := &webTest{t: t, b: b, base: srv.URL, shots: os.Getenv("WEB_SHOTS")}
	const email, password = "tess@example.org", "a long enough passphrase"

	w.step("totp: register", func() error {
		if err := b.navigate(srv.URL + "/register"); err != nil {
			return err
		}
		if err := b.waitFor("the register form", `document.querySelector('input[name=name]')`); err != nil {
			return err
		}
		for sel, v := range map[string]string{"input[name=email]": email, "input[name=name]": "Tess", "input[name=password]": password} {
			if err := b.fill(sel, v); err != nil {
				return err
			}
		}
		if err := b.click("button[type=submit]", "Create account"); err != nil {
			return err
		}
		return b.waitFor("the search page", `['/', '/search'].includes(location.pathname) && document.querySelector('nav a[href="/account"]')`)
	})
	var secret []byte
	var step int64
	w.step("totp: set up on the Account page", func() error {
		if err := b.click("nav a", "Account"); err != nil {
			return err
		}
		if err := w.waitValue("the card", `(document.querySelector('[data-totp] h2') || {}).textContent`, "Two-step sign-in"); err != nil {
			return err
		}
		if err := b.click("[data-totp] button", "Set up"); err != nil {
			return err
		}
		if err := b.fill("[data-totp] input[name=currentPassword]", password); err != nil {
			return err
		}
		if err := b.click("[data-totp] button[type=submit]", "Continue"); err != nil {
			return err
		}
		// The QR code is an image that loaded from a blob: address; no SVG
		// markup is in the page.
		if err := b.waitFor("the QR code", `(i => i && i.complete && i.naturalWidth > 0)(document.querySelector('[data-totp] img.qr'))`); err != nil {
			return err
		}
		if err := w.eq("the image", `(i => i.src.slice(0, 5) + ' ' + i.alt + ' ' + document.querySelectorAll('svg').length)(document.querySelector('img.qr'))`,
			"blob: QR code for your authenticator app 0"); err != nil {
			return err
		}
		var key string
		if err := b.eval(`document.querySelector('[data-totp-secret]').textContent`, &key); err != nil {
			return err
		}
		var err error
		if secret, err = totp.Encoding.DecodeString(strings.ReplaceAll(key, " ", "")); err != nil || len(secret) != totp.SecretSize {
			return fmt.Errorf("the key on the page %q: %v", key, err)
		}
		step = totp.Step(time.Now())
		if err := b.fill("[data-totp] input[name=code]", totp.Code(secret, step)); err != nil {
			return err
		}
		if err := b.click("[data-totp] button[type=submit]", "Turn on"); err != nil {
			return err
		}
		if err := w.waitValue("the recovery codes", `document.querySelectorAll('[data-totp] ol.recovery li').length + ' ' + document.querySelector('[data-totp] .notice').textContent`,
			"10 Two-step sign-in is on."); err != nil {
			return err
		}
		if err := b.click("[data-totp] button", "I have saved them"); err != nil {
			return err
		}
		return w.waitValue("the card", `(document.querySelector('[data-totp] .badge') || {}).textContent`, "On")
	})
	w.step("totp: sign out", func() error {
		if err := b.click(".who button", "Sign out"); err != nil {
			return err
		}
		return b.waitFor("the sign-in page", `location.pathname === '/login' && document.querySelector('h1').textContent === 'Sign in'`)
	})
	w.step("totp: sign in with a code", func() error {
		if err := b.fill("input[name=email]", email); err != nil {
			return err
		}
		if err := b.fill("input[name=password]", password); err != nil {
			return err
		}
		if err := b.click("button[type=submit]", "Sign in"); err != nil {
			return err
		}
		if err := w.waitValue("the second step", `(c => c && !c.closest('div').hidden ? document.querySelector('main .notice').textContent : 'hidden')(document.querySelector('input[name=code]'))`,
			"Two-step sign-in is on for this account. Enter the code your authenticator app shows."); err != nil {
			return err
		}
		if err := b.fill("input[name=code]", wrongCode(totp.Code(secret, step+1))); err != nil {
			return err
		}
		if err := b.click("button[type=submit]", "Sign in"); err != nil {
			return err
		}
		if err := w.waitValue("the code's error", `document.querySelector('input[name=code]').closest('div').querySelector('.field-error').textContent`,
			"This code is wrong or was already used. Wait for the next code, or use a recovery code."); err != nil {
			return err
		}
		// The app's next code: the confirming one is used.
		if err := b.fill("input[name=code]", totp.Code(secret, step+1)); err != nil {
			return err
		}
		if err := b.click("button[type=submit]", "Sign in"); err != nil {
			return err
		}
		return b.waitFor("the search page", `['/', '/search'].includes(location.pathname) && document.querySelector('nav a[href="/account"]')`)
	})

	// Tess registered first, so she administers the service: the reset an
	// administrator gives someone who lost the app and the codes, here
	// her own, ends her sessions and leaves the password alone to sign in.
	w.step("totp: administrator's reset", func() error {
		if err := b.navigate(srv.URL + "/admin"); err != nil {
			return err
		}
		if err := b.waitFor("the reset button", `[...document.querySelectorAll('tr[data-user] button')].some(x => x.textContent === 'Turn off two-step sign-in')`); err != nil {
			return err
		}
		if err := b.click("tr[data-user] button", "Turn off two-step sign-in"); err != nil {
			return err
		}
		if err := b.click("dialog button", "Turn off"); err != nil {
			return err
		}
		if err := b.waitFor("the sign-in page", `location.pathname === '/login' && document.querySelector('input[name=password]')`); err != nil {
			return err
		}
		for sel, v := range map[string]string{"input[name=email]": email, "input[name=password]": password} {
			if err := b.fill(sel, v); err != nil {
				return err
			}
		}
		if err := b.click("button[type=submit]", "Sign in"); err != nil {
			return err
		}
		// The sign-in page returns to the page the session ended on.
		if err := b.waitFor("the administration page", `location.pathname === '/admin' && document.querySelector('tr[data-user]')`); err != nil {
			return err
		}
		var code bool
		if err := b.eval(`!!document.querySelector('input[name=code]')`, &code); err != nil {
			return err
		}
		if code {
			return fmt.Errorf("the sign-in form still asked for a code after the reset")
		}
		return nil
	})
}

// wrongCode is a six-digit code other than code.
func wrongCode(code string) string {
	b := []byte(code)
	b[0] = '0' + (b[0]-'0'+1)%10
	return string(b)
}
