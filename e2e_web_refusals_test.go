package main

import (
	"net/http"
	"strings"
)

// TestBrowser's steps where something is refused: a service that no
// longer accepts its stored authorization, and a server that refuses an
// account or a sign-in. Each shows the person what happened and what to
// do, in the exact words checked here.

// reconnectOAuth revokes Gmail's grant at the fake Google, syncs, and
// expects the card to ask for a new sign-in; Reconnect goes through the
// authorize endpoint and Google again, and the same connection is
// connected again.
func (w *webTest) reconnectOAuth(revoke func() error) error {
	card := cardJS("Gmail")
	id, err := w.refuse(card, revoke, "Gmail refused the stored authorization. Connect it again to resume syncing.")
	if err != nil {
		return err
	}
	if err := w.clickIn(card, ":scope > .actions > a", "Reconnect"); err != nil {
		return err
	}
	if err := w.waitValue("the outcome", `location.pathname + location.search + ' ' + (document.querySelector('main .notice.ok') || {}).textContent`,
		"/integrations?status=success&integration=gmail Gmail is connected. Its first sync has started."); err != nil {
		return err
	}
	return w.reconnected(card, id)
}

// reconnectFeed makes the feed answer 401, syncs, and expects the card to
// ask for the form again; the form says why while the feed still refuses,
// and connects the same connection again once it answers.
func (w *webTest) reconnectFeed(feed *fakeFeed) error {
	card := cardJS("RSS")
	id, err := w.refuse(card, func() error { feed.refuse.Store(true); return nil }, "RSS or Atom feed refused the stored authorization. Connect it again to resume syncing.")
	if err != nil {
		return err
	}
	if err := w.clickIn(card, ":scope > .actions > details > summary", "Reconnect"); err != nil {
		return err
	}
	if err := w.b.fill("li[data-record] form[data-integration=feed] textarea[name=url]", feed.URL+"/feed.xml"); err != nil {
		return err
	}
	if err := w.clickIn(card, "form button[type=submit]", "Connect"); err != nil {
		return err
	}
	if err := w.waitValue("the field's error", card+`.querySelector('form .field-error').textContent`,
		"The server answered 401 Unauthorized."); err != nil {
		return err
	}
	feed.refuse.Store(false)
	if err := w.clickIn(card, "form button[type=submit]", "Connect"); err != nil {
		return err
	}
	// The same connection, updated: the API answered 200, not 201.
	if err := w.waitValue("the outcome", `(document.querySelector('main .notice.ok') || {}).textContent`,
		"RSS or Atom feed is updated with the new details. A sync has started."); err != nil {
		return err
	}
	return w.reconnected(card, id)
}

// refuse opens the connections, makes the service refuse, syncs the
// card's connection and waits for it to need a new authorization. It
// returns the connection's id.
func (w *webTest) refuse(card string, refuse func() error, lastError string) (string, error) {
	if err := w.b.navigate(w.base + "/integrations"); err != nil {
		return "", err
	}
	if err := w.waitValue("the card", card+` && `+card+`.querySelector('.badge').textContent`, "Connected"); err != nil {
		return "", err
	}
	var id string
	if err := w.b.eval(card+`.dataset.record`, &id); err != nil {
		return "", err
	}
	if err := refuse(); err != nil {
		return "", err
	}
	if err := w.clickIn(card, ":scope > .actions > button", "Sync now"); err != nil {
		return "", err
	}
	// Its state, its last error, and what it offers: no Sync now.
	return id, w.waitValue("the card", `(c => [c.querySelector('.badge').textContent, (c.querySelector('dd.error') || {}).textContent,
		[...c.querySelectorAll(':scope > .actions > button, :scope > .actions > a, :scope > .actions > details > summary')].map(e => e.textContent).join(', ')])(`+card+`)`,
		[]string{"Needs you to sign in again", lastError, "Reconnect, Disconnect"})
}

// reconnected waits for the card to be the connection id, connected again
// with no error, among the person's two connections.
func (w *webTest) reconnected(card, id string) error {
	return w.waitValue("the card", `(c => [c.dataset.record, c.querySelector('.badge').textContent, String(!!c.querySelector('dd.error')),
		String(document.querySelectorAll('li[data-record]').length)])(`+card+`)`, []string{id, "Connected", "false", "2"})
}

// refusals are the steps on a server with registration closed and two
// sign-in attempts (and two registrations) per address in ten minutes.
func (w *webTest) refusals(srv *server) {
	w.t.Helper()
	resp, err := http.Post(srv.URL+"/v1/auth/register", "application/json",
		strings.NewReader(`{"email":"root@example.org","password":"the first user's passphrase","name":"Root"}`))
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		w.t.Fatalf("the first user of a closed server: got %d, want 201", resp.StatusCode)
	}
	errorJS := `(document.querySelector('main .notice.error') || {}).textContent`
	w.step("registration is closed", func() error {
		if err := w.b.navigate(srv.URL + "/register"); err != nil {
			return err
		}
		if err := w.b.waitFor("the register form", `document.querySelector('input[name=name]')`); err != nil {
			return err
		}
		for sel, v := range map[string]string{"input[name=email]": "cat@example.org", "input[name=name]": "Cat", "input[name=password]": "a long enough passphrase"} {
			if err := w.b.fill(sel, v); err != nil {
				return err
			}
		}
		if err := w.b.click("button[type=submit]", "Create account"); err != nil {
			return err
		}
		return w.waitValue("the refusal", errorJS, "Registration is closed on this server. Ask its administrator to create an account for you.")
	})
	w.step("too many sign-in attempts, and the wait", func() error {
		if err := w.b.click("a", "Sign in"); err != nil {
			return err
		}
		if err := w.b.waitFor("the sign-in form", `location.pathname === '/login' && !document.querySelector('input[name=name]')`); err != nil {
			return err
		}
		if err := w.b.fill("input[name=email]", "root@example.org"); err != nil {
			return err
		}
		if err := w.b.fill("input[name=password]", "not the passphrase"); err != nil {
			return err
		}
		if err := w.b.click("button[type=submit]", "Sign in"); err != nil {
			return err
		}
		if err := w.waitValue("the first attempt", errorJS, "Wrong email or password."); err != nil {
			return err
		}
		// Submitting says "Working…" at once, so each answer is waited
		// for anew.
		if err := w.b.click("button[type=submit]", "Sign in"); err != nil {
			return err
		}
		if err := w.waitValue("the second attempt", errorJS, "Wrong email or password."); err != nil {
			return err
		}
		if err := w.b.click("button[type=submit]", "Sign in"); err != nil {
			return err
		}
		// The window is ten minutes from the first attempt, a second ago.
		return w.waitValue("the third attempt", errorJS, "Too many sign-in attempts from this address. Wait 10 minutes, then try again.")
	})
}
