package main

import (
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"searchsvc/integrations/gmail/gmailtest"
)

// mailThread is the fake mailbox's Gmail threads: the dinner mail (seq 3)
// is in the crew list's (seq 1) conversation, the invoice alone.
func mailThread(seq int) string {
	if seq == 3 {
		return gmailtest.ID(1)
	}
	return gmailtest.ID(seq)
}

// TestBrowser's conversation step: grouped by conversation, the two
// regatta mails are one result that says it holds 2 messages; its item
// page lists the conversation oldest first, itself marked, and the other
// mail's link opens it.
func (w *webTest) conversation() error {
	b := w.b
	if err := w.searchFor("/search?q=regatta&sort=date&group=thread", []string{regattaDinner, regattaWinter, regattaAutumn}); err != nil {
		return err
	}
	if err := w.waitValue("the count", countJS, "3 conversations for regatta"); err != nil {
		return err
	}
	if err := w.waitValue("the conversations' sizes", `[...document.querySelectorAll('.result')].map(r => (r.querySelector('.thread-count') || {}).textContent || '')`,
		[]string{"2 messages in this conversation", "", ""}); err != nil {
		return err
	}
	if _, err := w.lastSearch(url.Values{"q": {"regatta"}, "limit": {"50"}, "sort": {"date"}, "collapse": {"thread"}}); err != nil {
		return err
	}
	if err := w.waitValue("the group box", `document.querySelector('input[name=group]').checked`, true); err != nil {
		return err
	}
	if err := b.click(".result h2 a", regattaDinner); err != nil {
		return err
	}
	if err := w.waitValue("the conversation's heading", `(document.querySelector('.conversation h2') || {}).textContent`, "Conversation (2 messages)"); err != nil {
		return err
	}
	if err := w.waitValue("the conversation", `[...document.querySelectorAll('.thread li')].map(li =>
		(li.getAttribute('aria-current') || '-') + ' ' + (li.querySelector('a') ? 'link ' : '') + li.querySelector('a, strong').textContent)`,
		[]string{"- link " + regattaCrew, "page " + regattaDinner}); err != nil {
		return err
	}
	if err := b.click(".thread a", regattaCrew); err != nil {
		return err
	}
	return w.waitValue("the other mail's page", `document.querySelector('main h1').textContent`, regattaCrew)
}

// attachmentListed: the invoice's page lists its attachment with its
// size, and a word only the attachment holds finds the invoice.
func (w *webTest) attachmentListed() error {
	if err := w.searchFor("/search?q=transfer", []string{"Mooring invoice for November"}); err != nil {
		return err
	}
	if err := w.b.click(".result h2 a", "Mooring invoice for November"); err != nil {
		return err
	}
	if err := w.waitValue("the attachments", `[...document.querySelectorAll('.attachments li')].map(li => li.textContent)`,
		[]string{"invoice-november.txt 62 bytes"}); err != nil {
		return err
	}
	// The link downloads it, fetched from Gmail again: the page says so,
	// and what the link answers is the attachment, byte for byte.
	if err := w.b.click(".attachments a", "invoice-november.txt"); err != nil {
		return err
	}
	if err := w.waitValue("the download", `document.getElementById('download-status').textContent`,
		"Downloaded invoice-november.txt (62 bytes)."); err != nil {
		return err
	}
	if err := w.waitValue("the link's answer", `window.__dl || (fetch(document.querySelector('.attachments a').href).then(r => r.text()).then(t => window.__dl = t), '')`,
		invoiceAttachment); err != nil {
		return err
	}
	if err := w.waitValue("the message's download", `[...document.querySelectorAll('dl.facts > dd > a.download')].map(a => a.textContent)`,
		[]string{"The whole message (.eml)"}); err != nil {
		return err
	}
	// Gmail failing: said in words on the page.
	invoiceDown.Store(true)
	defer invoiceDown.Store(false)
	if err := w.b.click(".attachments a", "invoice-november.txt"); err != nil {
		return err
	}
	return w.waitValue("the failed download", `document.getElementById('download-status').textContent`,
		"The download failed: Gmail is having trouble at the moment (it answered 500).")
}

// invoiceDown makes the fake Gmail answer 500 to messages.get of the
// invoice (seq 2), which only a download asks for once it is synced.
var invoiceDown atomic.Bool

// gmailFault is the fake Gmail's Fault: see invoiceDown.
func gmailFault(r *http.Request) (int, string) {
	if invoiceDown.Load() && strings.HasSuffix(r.URL.Path, "/messages/"+gmailtest.ID(2)) {
		return http.StatusInternalServerError, ""
	}
	return 0, ""
}
