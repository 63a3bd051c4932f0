package main

import (
	"fmt"
	"net/url"
	"strings"
)

// TestBrowser's steps about how the app words and shows things: a title
// with a right-to-left override, a query the API cannot read, a message
// that starts with an address, and the IMAP form's errors and its TLS box.

// reversedShown searches the reversed entry and opens it: its title is in
// an isolated element and reads "gnp.exe" (the override is gone), in the
// results and on the item's page, and its author, which starts with a
// right-to-left mark (U+200F) that would set its direction, reads
// "noom@example.org".
func (w *webTest) reversedShown() error {
	if err := w.searchFor("/search?q=kestrel", []string{"gnp.exe"}); err != nil {
		return err
	}
	// isolatedJS names the text of the element e, and whether every text
	// in it is inside a <bdi>, or an element isolated by its style.
	isolatedJS := func(e string) string {
		return `(e => { const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT); const out = [];
			for (let n = walk.nextNode(); n; n = walk.nextNode()) {
				const p = n.parentElement;
				out.push((p.closest('bdi') || getComputedStyle(p).unicodeBidi === 'isolate' ? 'isolated ' : 'raw ') + JSON.stringify(n.data));
			}
			return out.join(' | '); })(` + e + `)`
	}
	if err := w.eq("the result's title", isolatedJS(`document.querySelector('.result h2 a')`), `isolated "gnp.exe"`); err != nil {
		return err
	}
	var meta string
	if err := w.b.eval(isolatedJS(`document.querySelector('.result .meta')`), &meta); err != nil {
		return err
	}
	if strings.Contains(meta, "raw") || strings.Contains(meta, "\u200F") || !strings.Contains(meta, `"noom@example.org"`) {
		return fmt.Errorf("the result's line: got %s, want every part isolated, the author as noom@example.org", meta)
	}
	if err := w.b.click(".result h2 a", "gnp.exe"); err != nil {
		return err
	}
	if err := w.b.waitFor("the item", `location.pathname.startsWith('/items/') && document.querySelector('#item-text')`); err != nil {
		return err
	}
	if err := w.eq("the item's title", isolatedJS(`document.querySelector('h1')`), `isolated "gnp.exe"`); err != nil {
		return err
	}
	return w.eq("the window's title", `document.title`, "gnp.exe · searchsvc")
}

// queryErrorMarked searches a query whose error the API places after a
// letter of two bytes: the app says what is wrong without a byte offset,
// keeps "from:" as it is written, and marks that place in the box.
func (w *webTest) queryErrorMarked() error {
	q := "café from:"
	if err := w.b.navigate(w.base + "/search?q=" + url.QueryEscape(q)); err != nil {
		return err
	}
	if err := w.waitValue("the error", `(document.querySelector('main .notice.error') || {}).textContent`,
		"This search cannot be read. from: needs a value.Here: café from:"); err != nil {
		return err
	}
	// The API said "at 6", in bytes; "from:" is the box's characters 5 to 10.
	if err := w.eq("the selection", `(i => i.selectionStart + '-' + i.selectionEnd + ' ' + (document.activeElement === i))(document.querySelector('input#q'))`,
		"5-10 true"); err != nil {
		return err
	}
	return w.eq("the mark", `document.querySelector('main .notice.error .query-mark mark').textContent`, "from:")
}

// imapForm fills the IMAP form with a certificate that is neither PEM
// nor a fingerprint: the error under the field names it once, shortly.
// Then the form is reset, as a successful connect resets it: the TLS box,
// ticked by default, stays ticked.
func (w *webTest) imapForm() error {
	if err := w.b.navigate(w.base + "/integrations"); err != nil {
		return err
	}
	form := "form[data-integration=imap]"
	if err := w.b.waitFor("the IMAP form", `document.querySelector('`+form+`')`); err != nil {
		return err
	}
	if err := w.b.click("summary", "Connect IMAP mailbox"); err != nil {
		return err
	}
	if err := w.eq("the TLS box at first", `String(document.querySelector('`+form+` input[name=tls]').checked)`, "true"); err != nil {
		return err
	}
	for sel, v := range map[string]string{"input[name=host]": "imap.example.org", "input[name=username]": "ann",
		"input[name=password]": "a mailbox password", "textarea[name=certificate]": "not a certificate"} {
		if err := w.b.fill(form+" "+sel, v); err != nil {
			return err
		}
	}
	if err := w.b.click(form+" button[type=submit]", "Connect"); err != nil {
		return err
	}
	if err := w.waitValue("the certificate's error", `(e => e ? e.textContent : '')(document.querySelector('`+form+` textarea[name=certificate]').closest('div').querySelector('.field-error'))`,
		"Server certificate must be a CA certificate in PEM (-----BEGIN CERTIFICATE-----) or the SHA-256 fingerprint of the server's certificate (64 hex digits)."); err != nil {
		return err
	}
	return w.eq("the TLS box after a reset", `(f => { f.reset(); return String(f.querySelector('input[name=tls]').checked); })(document.querySelector('`+form+`'))`, "true")
}
