package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestBrowserHome: what the connections page shows of sources at home,
// on a server that keeps manual targets on the public internet
// (ALLOW_PRIVATE_TARGETS off, PRIVATE_TARGETS set): a feed on the
// server's own loopback is refused under its field, in the sentence that
// names the setting. It needs Chromium, as TestBrowser does; it fails
// without it in CI.
func TestBrowserHome(t *testing.T) {
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
	env := testEnv(t.TempDir())
	env["PRIVATE_TARGETS"] = "192.168.1.0/24"
	srv := startRun(t, env)
	b := startBrowser(t, bin, 1100, 760)
	w := &webTest{t: t, b: b, base: srv.URL, shots: os.Getenv("WEB_SHOTS")}
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
	w.step("a feed on the server's loopback is refused under its field", func() error {
		if err := b.navigate(srv.URL + "/integrations"); err != nil {
			return err
		}
		form := "form[data-integration=feed]"
		if err := b.waitFor("the feed form", `document.querySelector('`+form+`')`); err != nil {
			return err
		}
		if err := b.click("summary", "Connect RSS or Atom feed"); err != nil {
			return err
		}
		if err := b.fill(form+" textarea[name=url]", "http://127.0.0.1:9/feed.xml"); err != nil {
			return err
		}
		if err := b.click(form+" button[type=submit]", "Connect"); err != nil {
			return err
		}
		return w.waitValue("the field's error", `(e => e ? e.textContent : '')(document.querySelector('`+form+` textarea[name=url]').closest('div').querySelector('.field-error'))`,
			"This address is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true.")
	})
	w.step("a feed record's card shows each feed's title and last status", func() error {
		var got []string
		err := b.eval(`(() => {
			const li = connectionCard({id: 'r1', integration: 'feed', status: 'error', connectedAt: '2026-05-06T07:00:00Z', itemsSynced: 3,
				sources: ['https://blog.example/feed.xml', 'https://gone.example/feed.xml', 'https://new.example/feed.xml'],
				sourceDetails: [{source: 'https://blog.example/feed.xml', title: 'Example blog', status: 'ok'},
					{source: 'https://gone.example/feed.xml', status: 'the server answered 410 Gone'},
					{source: 'https://new.example/feed.xml'}]}, liveRegion(), async () => []);
			return [...li.querySelectorAll('ul.sources > li')].map(e => [...e.children].map(c => c.textContent).join(' | ') +
				(e.querySelector('.source-status.error') ? ' (error)' : ''));
		})()`, &got)
		if err != nil {
			return err
		}
		want := []string{
			"Example blog | https://blog.example/feed.xml | Last fetch: OK.",
			"https://gone.example/feed.xml | Last fetch failed: The server answered 410 Gone. (error)",
			"https://new.example/feed.xml | Not fetched yet.",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			return fmt.Errorf("sources: got %q, want %q", got, want)
		}
		return nil
	})
	w.step("a mailbox's card shows its label and source, and its Reconnect updates that one", func() error {
		var got struct {
			Heading, Source string
			Body            string
		}
		err := b.eval(`(async () => {
			const li = connectionCard({id: 'r7', integration: 'imap', status: 'needs_reauth', connectedAt: '2026-05-06T07:00:00Z', itemsSynced: 3,
				label: 'Work mail', source: 'ann@example.org on imap.example.org'}, liveRegion(), async () => []);
			document.querySelector('main').append(li);
			const form = li.querySelector('form[data-integration=imap]');
			for (const [n, v] of [['host', 'imap.example.org'], ['username', 'ann@example.org'], ['password', 'pw']]) form.querySelector('[name=' + n + ']').value = v;
			const sent = [];
			const real = api;
			api = async (method, path, body) => { sent.push(body); return {httpStatus: 200}; };
			try {
				form.requestSubmit();
				for (let i = 0; i < 50 && !sent.length; i++) await new Promise(r => setTimeout(r, 10));
			} finally { api = real; }
			const h3 = li.querySelector('h3');
			const out = {heading: [...h3.children].map(c => c.textContent).join(' | '), source: li.querySelector('dd.record-source').textContent,
				body: JSON.stringify({recordId: sent[0] && sent[0].recordId, label: sent[0] && sent[0].fields.label || null})};
			li.remove();
			return out;
		})()`, &got)
		if err != nil {
			return err
		}
		if got.Heading != "IMAP mailbox | Work mail | Needs you to sign in again" || got.Source != "ann@example.org on imap.example.org" || got.Body != `{"recordId":"r7","label":null}` {
			return fmt.Errorf("card: got %+v", got)
		}
		return nil
	})
	w.step("a result names its connection", func() error {
		var got []string
		err := b.eval(`[{id: 'i1', integration: 'feed', kind: 'entry', title: 'Second headline', source: 'News', date: '2026-11-03T10:00:00Z'},
			{id: 'i2', integration: 'imap', kind: 'email', title: 'Hello', from: 'Bob', source: 'Work mail', date: '2026-11-03T10:00:00Z'},
			{id: 'i3', integration: 'feed', kind: 'entry', title: 'Old entry', date: '2026-11-03T10:00:00Z'}]
			.map(r => resultItem(r).querySelector('.meta').textContent.split(' · ').slice(0, 2).join(' · '))`, &got)
		if err != nil {
			return err
		}
		want := []string{"RSS or Atom feed (News) · Feed entry", "IMAP mailbox (Work mail) · Email", "RSS or Atom feed · Feed entry"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			return fmt.Errorf("result sources: got %q, want %q", got, want)
		}
		return nil
	})
}
