package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"
)

// TestBrowserDashboard drives the administrator's dashboard and the item
// page's highlighting in headless Chromium against run() on port 0: the
// administrator syncs the sailing club's feed, opens a result and finds
// the words the search matched marked (the stemmed form as the text
// writes it; the hostile entry's markup still text), goes back with
// Escape; then reads the dashboard: the version, how long the disk lasts
// (not enough history yet, just after the start), the sizes, and each
// user's items and connections, Bob's feed to reconnect, his hostile name
// as text. Any exception, console error or CSP violation fails it, as in
// TestBrowser.
func TestBrowserDashboard(t *testing.T) {
	bin := chromeBin()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no Chromium in CI: .ci/run installs Debian's chromium")
		}
		t.Skip("browser test skipped: no Chromium found (set CHROME_BIN or put chromium on PATH)")
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	feed := newFakeFeed(t)
	env := testEnv(t.TempDir())
	env["ALLOW_PRIVATE_TARGETS"] = "true" // the fake feed is on 127.0.0.1
	srv := startRun(t, env)
	b := startBrowser(t, bin, 1100, 760)
	b.must(b.session, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": `
		window.__violations = [];
		document.addEventListener('securitypolicyviolation', e =>
			window.__violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));`}, nil)
	w := &webTest{t: t, b: b, base: srv.URL, shots: os.Getenv("WEB_SHOTS")}
	step, eq := w.step, w.eq
	feedURL, _ := json.Marshal(feed.URL + "/feed.xml")

	step("the administrator connects the feed", func() error {
		if err := b.navigate(srv.URL + "/login"); err != nil {
			return err
		}
		// The first user is the administrator; the app's own api() signs
		// up and connects, as its forms do, and remember notes the sign-in
		// as the sign-up form does.
		if err := b.eval(`api('POST', '/v1/auth/register', {email: 'ann@example.org', password: 'a long enough passphrase', name: 'Ann'})
			.then(() => api('POST', '/v1/user-integrations/feed/credentials', {fields: {url: `+string(feedURL)+`}}))
			.then(() => { remember(true); return true; })`, nil); err != nil {
			return err
		}
		return w.searchFor("/search?q=quokka", []string{hostileTitle})
	})
	noPayload := func() error {
		var pwned bool
		if err := b.eval(`window.__pwned !== undefined || document.querySelectorAll('main script, main img, main iframe, [onerror]').length > 0`, &pwned); err != nil {
			return err
		}
		if pwned {
			return fmt.Errorf("the payload took effect")
		}
		return nil
	}
	step("the item marks the word the search matched, its markup stays text", func() error {
		if err := b.click(".result h2 a", "Quokka"); err != nil {
			return err
		}
		if err := b.waitFor("the item", `location.pathname.startsWith('/items/') && document.querySelector('#item-text')`); err != nil {
			return err
		}
		if err := eq("the address", `location.search`, "?hl=Quokka"); err != nil {
			return err
		}
		if err := eq("the marks", `[...document.querySelectorAll('#item-text mark')].map(m => m.textContent + ':' + m.querySelectorAll('*').length + m.firstChild.tagName + ':' + m.firstChild.firstChild.nodeType).join('|')`, "Quokka:1BDI:3"); err != nil {
			return err
		}
		if err := eq("the text as text", `document.querySelector('#item-text').textContent`, hostileText); err != nil {
			return err
		}
		return noPayload()
	})
	step("Escape goes back to the results", func() error {
		if err := w.press("Escape"); err != nil {
			return err
		}
		return b.waitFor("the results again", `location.pathname === '/search' && location.search === '?q=quokka' && document.querySelectorAll('.result').length === 1`)
	})
	step("a stemmed word is marked as the text writes it", func() error {
		// "regattas" finds "regatta": the mark holds the text's word, and
		// every place the text writes it whole.
		if err := w.searchFor("/search?q=regattas+winter", []string{"Winter regatta series announced"}); err != nil {
			return err
		}
		if err := b.click(".result h2 a", "Winter regatta"); err != nil {
			return err
		}
		if err := b.waitFor("the item", `location.pathname.startsWith('/items/') && document.querySelector('#item-text mark')`); err != nil {
			return err
		}
		return eq("the marks", `[...document.querySelectorAll('#item-text mark')].map(m => m.textContent).join('|')`, "winter|regatta")
	})

	// Bob, whose name is markup, connects the same feed, which then asks
	// for a password: his connection is to be reconnected.
	bob := newClient(t, srv.URL)
	bobName := `Bob <img src=x onerror="window.__pwned=7">`
	if st, body, _ := bob.do("POST", "/v1/auth/register", map[string]string{"email": "bob@example.org", "password": "bob's long passphrase", "name": bobName}); st != 201 {
		t.Fatalf("register Bob: %d %v", st, body)
	}
	st, body, _ := bob.do("POST", "/v1/user-integrations/feed/credentials", map[string]any{"fields": map[string]string{"url": feed.URL + "/feed.xml"}})
	if st != 201 {
		t.Fatalf("Bob connects the feed: %d %v", st, body)
	}
	bobFeed, _ := body["result"].(map[string]any)["id"].(string)
	// waitBob polls Bob's record until ok; the deadline bounds a failing
	// test only.
	waitBob := func(what string, ok func(r map[string]any) bool, each func()) {
		for deadline := time.Now().Add(searchWait); ; {
			if each != nil {
				each()
			}
			_, body, _ := bob.do("GET", "/v1/user-integrations/"+bobFeed, nil)
			if r, _ := body["result"].(map[string]any); r != nil && ok(r) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("Bob's feed: got %v, want %s", body, what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitBob("its first sync", func(r map[string]any) bool {
		return r["status"] == "connected" && r["itemsSynced"] == float64(len(feedEntries(""))) && r["lastSyncAt"] != nil
	}, nil)
	feed.refuse.Store(true)
	waitBob("needs_reauth", func(r map[string]any) bool { return r["status"] == "needs_reauth" },
		func() { bob.do("POST", "/v1/user-integrations/"+bobFeed+"/sync", nil) })
	feed.refuse.Store(false)

	step("the dashboard", func() error {
		if err := b.navigate(srv.URL + "/admin"); err != nil {
			return err
		}
		if err := b.waitFor("the dashboard and the users", `document.querySelector('.dashboard dd[data-fact=Version]') && document.querySelectorAll('table.users tbody tr').length === 2`); err != nil {
			return err
		}
		fact := func(name string) string {
			return `document.querySelector('.dashboard dd[data-fact="` + name + `"]').textContent`
		}
		if err := eq("the version", fact("Version"), "dev"); err != nil {
			return err
		}
		if err := eq("how long the disk lasts", fact("Lasts"), "not enough history yet: the growth is measured once the service has run for an hour"); err != nil {
			return err
		}
		var free, data string
		if err := b.eval(fact("Disk free"), &free); err != nil {
			return err
		}
		if err := b.eval(fact("Data"), &data); err != nil {
			return err
		}
		if !regexp.MustCompile(`^[\d.,]+ (bytes|kB|MB|GB|TB)$`).MatchString(free) ||
			!regexp.MustCompile(`^main store [\d.,]+ (bytes|kB|MB) · sessions [\d.,]+ (bytes|kB) · items [\d.,]+ (bytes|kB|MB) \(measured .+\) · search index [\d.,]+ (bytes|kB|MB), [\d,]+ documents$`).MatchString(data) {
			return fmt.Errorf("disk free %q, data %q", free, data)
		}
		row := func(who, cell string) string {
			return `[...document.querySelectorAll('table.users tbody tr')].find(tr => tr.cells[1].textContent === '` + who + `').querySelector('td.` + cell + `').textContent`
		}
		for _, c := range []struct{ what, expr, want string }{
			{"Ann's items", row("ann@example.org", "items"), feedItems + " items"},
			{"Ann's connections", row("ann@example.org", "connections"), "1 connected"},
			{"Bob's items", row("bob@example.org", "items"), feedItems + " items"},
			{"Bob's connections", row("bob@example.org", "connections"), "1 to reconnect"},
			{"Bob's name as text", `[...document.querySelectorAll('table.users tbody tr')][1].cells[0].textContent`, bobName},
		} {
			if err := eq(c.what, c.expr, c.want); err != nil {
				return err
			}
		}
		return noPayload()
	})
	step("an error sentence is text", func() error {
		// The service logged no error here: the list is drawn as the page
		// draws one from the dashboard's answer.
		if err := eq("no errors", `document.querySelector('.errors').textContent`, "No errors since the service started."); err != nil {
			return err
		}
		if err := b.eval(`document.querySelector('.errors').replaceChildren(errorList({total: 3, last: [
			{message: '<img src=x onerror="window.__pwned=8">sync: record sync failure', count: 3, firstAt: '2026-11-27T08:00:00Z', lastAt: '2026-11-27T09:00:00Z'}]}))`, nil); err != nil {
			return err
		}
		if err := eq("the sentence", `document.querySelector('.errors .error-text').textContent`, `<img src=x onerror="window.__pwned=8">sync: record sync failure`); err != nil {
			return err
		}
		if err := eq("how often", `document.querySelector('.errors .meta').textContent.split(',')[0]`, "3 times"); err != nil {
			return err
		}
		return noPayload()
	})
}
