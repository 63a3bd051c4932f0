package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/integrations/oauthtest"
)

// TestBrowser drives the web app in headless Chromium against run() on
// port 0, as a person would: register, connect a feed served by an
// httptest server and a fake Gmail through OAuth, sync, search (a word of
// an entry, more results, the filters and the order), open an entry, end
// another device's session, open a hostile entry whose title and text are
// markup (and prove none of it ran), reconnect both services after they
// refused their stored authorization, administer, disconnect, change the
// password and sign out; then, on a second server with registration
// closed, read why an account cannot be made and why a sign-in must wait.
// The server runs with CSRF_TOKENS=true, so every change the app makes
// also proves it sends the token.
//
// It needs Chromium (CHROME_BIN, or chromium on PATH) and skips without
// it. WEB_SHOTS=dir keeps a screenshot of each step there;
// docs/search.png in the README is the one named search.png.
func TestBrowser(t *testing.T) {
	bin := chromeBin()
	if bin == "" {
		t.Skip("browser test skipped: no Chromium found (set CHROME_BIN or put chromium on PATH)")
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	feed := newFakeFeed(t)
	const clientID, clientSecret = "client-id-web.apps", "client-secret-web"
	var (
		grantMu sync.Mutex
		grant   string // the refresh token of the fake Google's latest grant
	)
	google := oauthtest.New(t, oauthtest.Options{
		ClientID: clientID, ClientSecret: clientSecret, Basic: true, Body: true, Scope: gmail.Scope,
		AuthParams: map[string]string{"access_type": "offline", "prompt": "consent"},
		Token: func(is oauthtest.Issued) map[string]any {
			body := map[string]any{"access_token": is.AccessToken, "token_type": "Bearer", "expires_in": 3599, "scope": is.Scope}
			if is.RefreshToken != "" {
				body["refresh_token"] = is.RefreshToken
				grantMu.Lock()
				grant = is.RefreshToken
				grantMu.Unlock()
			}
			return body
		},
	})
	gmailtest.New(t, gmailtest.Options{Messages: len(mails), Mux: google.Mux, URL: google.URL,
		Authorized: google.Bearer, Message: mail, Thread: mailThread, Fault: gmailFault})
	env := testEnv(t.TempDir())
	env["ALLOW_PRIVATE_TARGETS"] = "true" // the fake feed is on 127.0.0.1
	env["CSRF_TOKENS"] = "true"
	env["GMAIL_OAUTH_CLIENT_ID"] = clientID
	env["GMAIL_OAUTH_CLIENT_SECRET"] = clientSecret
	env["GMAIL_OAUTH_AUTH_URL"] = google.URL + "/authorize"
	env["GMAIL_OAUTH_TOKEN_URL"] = google.URL + "/token"
	env["GMAIL_API_BASE_URL"] = google.URL
	// The OAuth callback must come back to this very server, and then to
	// its app (FRONTEND_URL is left to default to BASE_URL), so it listens
	// on a port chosen before it starts.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env["LISTEN_ADDR"] = ln.Addr().String()
	ln.Close()
	env["BASE_URL"] = "http://" + env["LISTEN_ADDR"]
	srv := startRun(t, env)

	b := startBrowser(t, bin, 1100, 760)
	// Installed by the test, not by the page, so the CSP does not apply to
	// it: it notes every CSP or Trusted Types violation the page causes.
	b.must(b.session, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": `
		window.__violations = [];
		document.addEventListener('securitypolicyviolation', e =>
			window.__violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));`}, nil)

	w := &webTest{t: t, b: b, base: srv.URL, shots: os.Getenv("WEB_SHOTS")}
	step, eq := w.step, w.eq

	step("open the app", func() error {
		if err := b.navigate(srv.URL + "/"); err != nil {
			return err
		}
		if err := b.waitFor("the sign-in page", `location.pathname === '/login' && document.querySelector('h1').textContent === 'Sign in'`); err != nil {
			return err
		}
		// Nobody ever signed in here: the app does not ask for a profile,
		// whose 401 the browser would log as an error.
		if got := b.requests("/v1/user/profile"); len(got) != 0 {
			return fmt.Errorf("a visitor who never signed in: the app asked for the profile %d times, want 0", len(got))
		}
		return nil
	})
	step("register with a weak password", func() error {
		if err := b.click("a", "Create an account"); err != nil {
			return err
		}
		if err := b.waitFor("the register form", `location.pathname === '/register' && document.querySelector('input[name=name]')`); err != nil {
			return err
		}
		for sel, v := range map[string]string{"input[name=email]": "ann@example.org", "input[name=name]": "Ann", "input[name=password]": "short"} {
			if err := b.fill(sel, v); err != nil {
				return err
			}
		}
		if err := b.click("button[type=submit]", "Create account"); err != nil {
			return err
		}
		return b.waitFor("the reason", `document.body.innerText.includes('Password must be at least 10 characters.')`)
	})
	step("register", func() error {
		if err := b.fill("input[name=password]", "a long enough passphrase"); err != nil {
			return err
		}
		if err := b.click("button[type=submit]", "Create account"); err != nil {
			return err
		}
		// The first user is the administrator.
		return b.waitFor("the search page as admin", `['/', '/search'].includes(location.pathname) && document.querySelector('nav a[href="/admin"]')`)
	})
	step("connect a feed", func() error {
		if err := b.click("nav a", "Connections"); err != nil {
			return err
		}
		if err := b.waitFor("the catalogue", `document.querySelector('form[data-integration=feed]')`); err != nil {
			return err
		}
		if err := b.click("summary", "RSS or Atom feed"); err != nil {
			return err
		}
		if err := b.fill("form[data-integration=feed] textarea[name=url]", feed.URL+"/feed.xml"); err != nil {
			return err
		}
		if err := b.click("form[data-integration=feed] button[type=submit]", "Connect"); err != nil {
			return err
		}
		return b.waitFor("the connection", `document.body.innerText.includes('RSS or Atom feed is connected') && document.querySelector('li[data-record]')`)
	})
	step("sync", func() error {
		// Connecting queued a first sync; Sync now must fetch the feed again.
		if err := b.waitFor("the first sync", `document.querySelector('li[data-record] .items-synced').textContent === '`+feedItems+` items'`); err != nil {
			return err
		}
		for len(feed.fetched) > 0 { // the first sync's fetches
			<-feed.fetched
		}
		if err := b.click("li[data-record] button", "Sync now"); err != nil {
			return err
		}
		if err := b.waitFor("the sync to be queued", `document.body.innerText.includes('Sync started.') || document.querySelector('li[data-record] button:disabled')`); err != nil {
			return err
		}
		select {
		case <-feed.fetched:
		case <-time.After(time.Minute): // only bounds a failing test
			return fmt.Errorf("the feed was not fetched again after Sync now")
		}
		return b.waitFor("every entry still there", `document.querySelector('li[data-record] .items-synced').textContent === '`+feedItems+` items'`)
	})
	step("connect Gmail through OAuth", func() error {
		if err := b.click("a.button", "Connect Gmail"); err != nil {
			return err
		}
		// authorize → the fake Google, which approves at once → callback →
		// FRONTEND_URL/integrations?status=success, this app.
		if err := b.waitFor("the outcome", `location.pathname === '/integrations' && new URLSearchParams(location.search).get('status') === 'success' && document.body.innerText.includes('Gmail is connected.')`); err != nil {
			return err
		}
		return b.waitFor("its mails synced", cardJS("Gmail")+`.querySelector('.items-synced').textContent === '3 items'`)
	})

	step("a downloading sync's card shows a progress bar", func() error {
		// The fake Gmail's three mails download too fast to catch: the card
		// is drawn from a record as the API shows one mid-sync.
		var got struct {
			Text, Label string
			Value, Max  float64
		}
		err := b.eval(`(() => {
			const li = connectionCard({id: 'r1', integration: 'gmail', status: 'connected', connectedAt: '2026-05-06T07:00:00Z',
				itemsSynced: 32, pendingTasks: 69, activity: 'downloading', itemsLeft: 68, itemsTotal: 100}, liveRegion(), async () => []);
			const p = li.querySelector('progress.sync-progress');
			return {text: li.querySelector('.activity').textContent, label: p.getAttribute('aria-label'), value: p.value, max: p.max};
		})()`, &got)
		if err != nil {
			return err
		}
		if got.Text != "Downloading: 68 items left of 100" || got.Label != "Downloaded 32 of 100 items" || got.Value != 32 || got.Max != 100 {
			return fmt.Errorf("progress: got %+v, want the text, label, value 32 and max 100 of 68 left of 100", got)
		}
		return nil
	})

	step("search a word and open the entry", func() error {
		if err := w.openResult("zeppelin", "Zeppelin"); err != nil {
			return err
		}
		if err := eq("title", `document.querySelector('h1').textContent`, "Zeppelin over the lake"); err != nil {
			return err
		}
		if err := eq("text", `document.querySelector('#item-text').textContent`, "The zeppelin crossed the lake at dawn."); err != nil {
			return err
		}
		return eq("link to the original", `(document.querySelector('a[target=_blank]') || {}).href || ''`, feed.URL+"/zeppelin")
	})
	step("the back button returns to the results", func() error {
		if err := b.eval("history.back()", nil); err != nil {
			return err
		}
		if err := b.waitFor("the results again", `location.search === '?q=zeppelin' && document.querySelector('input#q').value === 'zeppelin' && document.querySelector('.result mark')`); err != nil {
			return err
		}
		// The page asked again, as it did the first time.
		_, err := w.lastSearch(url.Values{"q": {"zeppelin"}, "limit": {"20"}})
		return err
	})
	step("more results", w.moreResults)
	step("filters and order", w.filtersAndOrder)
	step("the keys of the search page", w.keyboard)
	step("a misspelled word offers a did-you-mean link", w.suggestionLink)
	step("a question finds the items with most of its words", w.relaxedShown)
	step("results grouped by conversation, and an item's conversation", w.conversation)
	step("an email's attachment is listed and its text found", w.attachmentListed)
	step("suggestions while typing, by keyboard", w.completionsWhileTyping)

	// Another device: signed in from outside the browser.
	jar, _ := cookiejar.New(nil)
	other := &http.Client{Jar: jar}
	otherUA := "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Gecko/20100101 Firefox/120.0"
	req, _ := http.NewRequest("POST", srv.URL+"/v1/auth/login", strings.NewReader(`{"email":"ann@example.org","password":"a long enough passphrase"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", otherUA)
	if resp, err := other.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("log in from another device: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	step("see the sessions and end the other one", func() error {
		if err := b.click("nav a", "Sessions"); err != nil {
			return err
		}
		if err := b.waitFor("both devices", `document.querySelectorAll('li[data-session]').length === 2 && document.body.innerText.includes('Firefox on Windows') && document.body.innerText.includes('This device')`); err != nil {
			return err
		}
		if err := b.click("li[data-session] button", "End session"); err != nil {
			return err
		}
		return b.waitFor("one device left", `document.querySelectorAll('li[data-session]').length === 1 && document.body.innerText.includes('Ended the session of Firefox on Windows')`)
	})
	resp, err := other.Get(srv.URL + "/v1/user/profile")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the ended session: got %d, want 401", resp.StatusCode)
	}

	noPayload := func() error {
		var bad struct {
			Pwned    bool
			Elements int
			Links    int
		}
		if err := b.eval(`({pwned: window.__pwned !== undefined,
			elements: document.querySelectorAll('main script, main img, main iframe, [onerror]').length,
			links: document.querySelectorAll('a[href^="javascript:"]').length})`, &bad); err != nil {
			return err
		}
		if bad.Pwned || bad.Elements != 0 || bad.Links != 0 {
			return fmt.Errorf("the payload took effect: %+v", bad)
		}
		return nil
	}
	step("search the hostile entry: nothing runs", func() error {
		if err := w.searchFor("/search?q=quokka", []string{hostileTitle}); err != nil {
			return err
		}
		// The snippet is the start of the text, whose first word matched.
		if err := eq("the snippet as text", `document.querySelector('.result .snippet').textContent`, hostileText); err != nil {
			return err
		}
		if err := eq("the match", `[...document.querySelectorAll('.result mark')].map(m => m.textContent).join('|')`, "Quokka"); err != nil {
			return err
		}
		return noPayload()
	})
	step("open the hostile entry: nothing runs", func() error {
		if err := b.click(".result h2 a", "Quokka"); err != nil {
			return err
		}
		if err := b.waitFor("the item", `location.pathname.startsWith('/items/') && document.querySelector('#item-text')`); err != nil {
			return err
		}
		if err := eq("title as text", `document.querySelector('h1').textContent`, hostileTitle); err != nil {
			return err
		}
		if err := eq("text as text", `document.querySelector('#item-text').textContent`, hostileText); err != nil {
			return err
		}
		return noPayload()
	})
	step("a title with a right-to-left override reads as it is", w.reversedShown)
	step("a query error marks its place in the box", w.queryErrorMarked)
	w.picture("search", w.searchPicture)
	step("the OAuth landing page says what happened", func() error {
		if err := b.navigate(srv.URL + "/integrations?status=error&integration=gmail&message=gmail%20authorization%20was%20cancelled"); err != nil {
			return err
		}
		if err := b.waitFor("the outcome in words", `document.body.innerText.includes('Could not connect Gmail. Gmail authorization was cancelled.') && document.querySelector('li[data-record]')`); err != nil {
			return err
		}
		// A message that starts with an address keeps its case.
		if err := b.navigate(srv.URL + "/integrations?status=error&integration=gmail&message=" + url.QueryEscape("http://127.0.0.1:9/callback refused the request")); err != nil {
			return err
		}
		return w.waitValue("the outcome", `(document.querySelector('main .notice.error') || {}).textContent`,
			"Could not connect Gmail. http://127.0.0.1:9/callback refused the request.")
	})
	step("the IMAP form names a field once and keeps its TLS box", w.imapForm)
	step("reconnect Gmail after Google refused its grant", func() error {
		grantMu.Lock()
		refresh := grant
		grantMu.Unlock()
		return w.reconnectOAuth(func() error {
			if !google.Kill(refresh) {
				return fmt.Errorf("the fake Google does not know the grant it issued")
			}
			return nil
		})
	})
	step("reconnect the feed after it asked for a password", func() error { return w.reconnectFeed(feed) })
	// Bob registers elsewhere; the administrator deletes him.
	bobJar, _ := cookiejar.New(nil)
	bob := &http.Client{Jar: bobJar}
	if resp, err := bob.Post(srv.URL+"/v1/auth/register", "application/json",
		strings.NewReader(`{"email":"bob@example.org","password":"bob's long passphrase","name":"Bob"}`)); err != nil || resp.StatusCode != 201 {
		t.Fatalf("register Bob: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	step("administration: delete a user", func() error {
		if err := b.click("nav a", "Administration"); err != nil {
			return err
		}
		if err := b.waitFor("the users and the dashboard", `document.querySelectorAll('table.users tbody tr').length === 2 && document.querySelector('table.users').innerText.includes('bob@example.org') && document.querySelector('.dashboard dd[data-fact=Version]').textContent === 'dev'`); err != nil {
			return err
		}
		if err := b.click("table.users button[aria-label='Delete Bob']", "Delete"); err != nil {
			return err
		}
		if err := b.waitFor("the confirmation", `document.querySelector('dialog[open]') && document.querySelector('dialog[open]').innerText.includes('bob@example.org is signed out everywhere')`); err != nil {
			return err
		}
		if err := b.click("dialog[open] button", "Delete user"); err != nil {
			return err
		}
		return b.waitFor("Bob gone", `document.querySelectorAll('table.users tbody tr').length === 1 && document.body.innerText.includes('Bob is deleted.')`)
	})
	if resp, err := bob.Get(srv.URL + "/v1/user/profile"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("Bob after his deletion: got %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	step("disconnect the feed, and its items go", func() error {
		if err := b.click("nav a", "Connections"); err != nil {
			return err
		}
		if err := b.waitFor("the feed's card", `document.querySelector('li[data-record] .items-synced')`); err != nil {
			return err
		}
		if err := b.eval(`[...document.querySelectorAll('li[data-record]')].find(li => li.querySelector('h3').textContent.startsWith('RSS')).querySelector('button.danger').click()`, nil); err != nil {
			return err
		}
		if err := b.waitFor("the confirmation", `document.querySelector('dialog[open]') && document.querySelector('dialog[open]').innerText.includes('Its `+feedItems+` synced items will be deleted from this server too')`); err != nil {
			return err
		}
		if err := b.click("dialog[open] button", "Disconnect and delete items"); err != nil {
			return err
		}
		if err := b.waitFor("the feed gone", `document.body.innerText.includes('RSS or Atom feed is disconnected and its items are deleted.') && ![...document.querySelectorAll('li[data-record] h3')].some(h => h.textContent.startsWith('RSS'))`); err != nil {
			return err
		}
		// Only the mails are left, and search no longer finds the entries.
		if err := w.eq("the items left", `fetch('/v1/items').then(r => r.json()).then(b => b.results.map(it => it.integration).join(' '))`,
			"gmail gmail gmail"); err != nil {
			return err
		}
		return w.eq("what search finds", `fetch('/v1/search?q=regatta&sort=date').then(r => r.json()).then(b => b.results.map(r => r.title).join(' | '))`,
			regattaDinner+" | "+regattaCrew)
	})
	step("change the password", func() error {
		if err := b.click("nav a", "Account"); err != nil {
			return err
		}
		if err := b.waitFor("the form", `document.querySelectorAll('input[type=password]').length === 3`); err != nil {
			return err
		}
		fill3 := func(current, next string) error {
			for i, v := range []string{current, next, next} {
				if err := b.fill(fmt.Sprintf("form div:nth-of-type(%d) input[type=password]", i+1), v); err != nil {
					return err
				}
			}
			return b.click("form button[type=submit]", "Change password")
		}
		if err := fill3("not my password", "another long passphrase"); err != nil {
			return err
		}
		if err := b.waitFor("the reason", `document.body.innerText.includes('Current password is incorrect.')`); err != nil {
			return err
		}
		if err := fill3("a long enough passphrase", "another long passphrase"); err != nil {
			return err
		}
		return b.waitFor("the change", `document.body.innerText.includes('Password changed.')`)
	})
	w.darkPhoneShots()
	step("sign out", func() error {
		if err := b.click("header button", "Sign out"); err != nil {
			return err
		}
		if err := b.waitFor("the sign-in page", `location.pathname === '/login'`); err != nil {
			return err
		}
		var status int
		if err := b.eval(`fetch('/v1/user/profile').then(r => r.status)`, &status); err != nil {
			return err
		}
		if status != http.StatusUnauthorized {
			return fmt.Errorf("profile after signing out: got %d, want 401", status)
		}
		return nil
	})
	// A second server, with registration closed and two sign-in attempts
	// (and two registrations) per address in ten minutes: what a person is
	// told when refused.
	closed := testEnv(t.TempDir())
	closed["REGISTRATION"] = "closed"
	closed["LOGIN_RATE_LIMIT"] = "2"
	closed["LOGIN_RATE_WINDOW"] = "600"
	w.refusals(startRun(t, closed))
}
