package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"maps"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
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
		Authorized: google.Bearer, Message: mail})
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
		return b.waitFor("the sign-in page", `location.pathname === '/login' && document.querySelector('h1').textContent === 'Sign in'`)
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
		if err := b.fill("form[data-integration=feed] input[name=url]", feed.URL+"/feed.xml"); err != nil {
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
		before := feed.hits.Load()
		if err := b.click("li[data-record] button", "Sync now"); err != nil {
			return err
		}
		if err := b.waitFor("the sync to be queued", `document.body.innerText.includes('Sync started.') || document.querySelector('li[data-record] button:disabled')`); err != nil {
			return err
		}
		for i := 0; feed.hits.Load() == before; i++ {
			if i == 200 {
				return fmt.Errorf("the feed was not fetched again within 20 s of Sync now")
			}
			time.Sleep(100 * time.Millisecond)
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

	// openResult searches word and opens the result whose title contains
	// title.
	openResult := func(word, title string) error {
		if err := b.click("nav a", "Search"); err != nil {
			return err
		}
		if err := b.waitFor("the search box", `document.querySelector('input#q')`); err != nil {
			return err
		}
		if err := b.fill("input#q", word); err != nil {
			return err
		}
		// An item is findable within 2 s of being stored, so the search
		// is asked again (as a person would) until it is.
		found := `location.search === '?q=` + word + `' && [...document.querySelectorAll('.result mark')].some(m => m.textContent.toLowerCase() === '` + word + `')`
		for try := 0; ; try++ {
			if err := b.click("form[role=search] button[type=submit]", "Search"); err != nil {
				return err
			}
			err := b.waitFor("the search to answer", `(() => { const c = document.querySelector('.count');
				return document.querySelector('main .notice') || (c && !c.textContent.startsWith('Searching')); })()`)
			if err == nil {
				var ok bool
				if err = b.eval(found, &ok); err == nil && ok {
					break
				}
			}
			if try == 20 {
				return b.waitFor("a highlighted result", found)
			}
			time.Sleep(250 * time.Millisecond)
		}
		if err := b.click(".result h2 a", title); err != nil {
			return err
		}
		return b.waitFor("the item", `location.pathname.startsWith('/items/') && document.querySelector('#item-text')`)
	}
	step("search a word and open the entry", func() error {
		if err := openResult("zeppelin", "Zeppelin"); err != nil {
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
		return b.waitFor("the results again", `location.search === '?q=zeppelin' && document.querySelector('input#q').value === 'zeppelin' && document.querySelector('.result mark')`)
	})
	step("more results", w.moreResults)
	step("filters and order", w.filtersAndOrder)

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
	// The README's picture: a smaller window, so that it stays small.
	if w.shots != "" {
		b.must(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{
			"width": 960, "height": 700, "deviceScaleFactor": 1, "mobile": false}, nil)
		b.must(b.session, "Emulation.setScrollbarsHidden", map[string]any{"hidden": true}, nil)
	}
	step("search", w.searchPicture)
	if w.shots != "" {
		b.must(b.session, "Emulation.setScrollbarsHidden", map[string]any{"hidden": false}, nil)
		b.must(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{
			"width": 1100, "height": 760, "deviceScaleFactor": 1, "mobile": false}, nil)
	}
	step("the OAuth landing page says what happened", func() error {
		if err := b.navigate(srv.URL + "/integrations?status=error&integration=gmail&message=gmail%20authorization%20was%20cancelled"); err != nil {
			return err
		}
		return b.waitFor("the outcome in words", `document.body.innerText.includes('Could not connect Gmail. Gmail authorization was cancelled.') && document.querySelector('li[data-record]')`)
	})
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
		if err := b.waitFor("the users and the metrics", `document.querySelectorAll('table.users tbody tr').length === 2 && document.querySelector('table.users').innerText.includes('bob@example.org') && document.querySelector('.metrics').innerText.includes('sessions active')`); err != nil {
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
	if w.shots != "" {
		// The same page on a phone, and in the dark, for a person to look at.
		b.must(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{
			"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": true}, nil)
		b.must(b.session, "Emulation.setEmulatedMedia", map[string]any{
			"features": []map[string]string{{"name": "prefers-color-scheme", "value": "dark"}}}, nil)
		for _, p := range []struct{ name, path, ready string }{
			{"search on a dark phone", "/search?q=regatta", `document.querySelector('.result mark')`},
			{"connections on a dark phone", "/integrations", `document.querySelector('li[data-record]')`},
			{"sessions on a dark phone", "/sessions", `document.querySelector('li[data-session]')`},
			{"administration on a dark phone", "/admin", `document.querySelector('.metrics dl')`},
		} {
			step(p.name, func() error {
				if err := b.navigate(srv.URL + p.path); err != nil {
					return err
				}
				return b.waitFor("the page", p.ready)
			})
		}
		b.must(b.session, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{}}, nil)
		b.must(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{
			"width": 1100, "height": 760, "deviceScaleFactor": 1, "mobile": false}, nil)
	}
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

// feedItems is how many items the feed syncs: every entry.
var feedItems = strconv.Itoa(len(feedEntries("")))

// cardJS is a JavaScript expression for the card of the connection whose
// service's name starts with name.
func cardJS(name string) string {
	n, _ := json.Marshal(name)
	return `[...document.querySelectorAll('li[data-record]')].find(li => li.querySelector('h3').textContent.startsWith(` + string(n) + `))`
}

// webTest is what TestBrowser's steps share: the browser, the server's
// address, and where screenshots go.
type webTest struct {
	t     *testing.T
	b     *browser
	base  string
	shots string // WEB_SHOTS: keep a screenshot of each step here
}

// step runs one step of the test, fails it on any error, exception,
// console complaint or CSP violation, and keeps its screenshot.
func (w *webTest) step(name string, fn func() error) {
	w.t.Helper()
	start := time.Now()
	if err := fn(); err != nil {
		w.t.Fatalf("step %q: %v", name, err)
	}
	w.t.Logf("step %q: done in %v", name, time.Since(start).Round(time.Millisecond))
	var violations []string
	if err := w.b.eval("window.__violations || []", &violations); err != nil {
		w.t.Fatalf("step %q: read violations: %v", name, err)
	}
	if p := w.b.takeProblems(); len(p) > 0 || len(violations) > 0 {
		w.t.Fatalf("step %q: the page reported problems: %q; CSP violations: %q", name, p, violations)
	}
	if w.shots != "" {
		if raw, err := w.b.screenshot(); err == nil {
			if small, err := fewColours(raw); err == nil {
				raw = small
			}
			os.WriteFile(filepath.Join(w.shots, strings.ReplaceAll(name, " ", "-")+".png"), raw, 0o644)
		}
	}
}

// fewColours re-encodes a screenshot with its 256 most used colours, each
// other pixel taking the nearest of them: a page of text looks the same
// (only the edges of letters have rarer shades) in a third of the bytes.
func fewColours(raw []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	r := img.Bounds()
	rgba := image.NewRGBA(r)
	draw.Draw(rgba, r, img, r.Min, draw.Src)
	pixel := func(i int) uint32 { return binary.BigEndian.Uint32(rgba.Pix[i : i+4]) }
	count := map[uint32]int{}
	for i := 0; i < len(rgba.Pix); i += 4 {
		count[pixel(i)]++
	}
	used := slices.SortedFunc(maps.Keys(count), func(a, b uint32) int {
		if n := count[b] - count[a]; n != 0 {
			return n
		}
		return cmp.Compare(a, b)
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range used[:min(256, len(used))] {
		pal = append(pal, color.RGBA{uint8(c >> 24), uint8(c >> 16), uint8(c >> 8), uint8(c)})
	}
	out := image.NewPaletted(r, pal)
	index := map[uint32]uint8{}
	for i := 0; i < len(rgba.Pix); i += 4 {
		c := pixel(i)
		k, ok := index[c]
		if !ok {
			k = uint8(pal.Index(color.RGBA{uint8(c >> 24), uint8(c >> 16), uint8(c >> 8), uint8(c)}))
			index[c] = k
		}
		out.Pix[i/4] = k
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// eq checks that the JavaScript expression expr is the string want.
func (w *webTest) eq(what, expr, want string) error {
	var got string
	if err := w.b.eval(expr, &got); err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s: got %q, want %q", what, got, want)
	}
	return nil
}

// clickIn clicks the element matching selector inside the element the
// JavaScript expression parent names, whose text is text.
func (w *webTest) clickIn(parent, selector, text string) error {
	sel, _ := json.Marshal(selector)
	txt, _ := json.Marshal(text)
	return w.b.eval(fmt.Sprintf(`(() => { const el = [...(%s).querySelectorAll(%s)].find(e => e.textContent === %s);
		if (!el) throw new Error('nothing to click: ' + %s + ' ' + %s);
		el.click(); })()`, parent, sel, txt, sel, txt), nil)
}

// waitValue polls the JavaScript expression expr until its value is want
// (a string, or a list of strings); the error says what it was last.
func (w *webTest) waitValue(what, expr string, want any) error {
	var wantV any
	raw, _ := json.Marshal(want)
	json.Unmarshal(raw, &wantV)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got any
		err := w.b.eval(expr, &got)
		if err == nil && reflect.DeepEqual(got, wantV) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: got %q (err %v), want %q", what, got, err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
