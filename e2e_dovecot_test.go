package main

import (
	"testing"

	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/mail/mailtest"
)

// TestDovecotSearch connects the IMAP integration, through run and
// POST /v1/user-integrations/imap/credentials, to Debian's Dovecot (a
// server nobody here wrote) holding the shared corpus's first five mails
// in its maildir, waits for the first sync and finds the one mail about
// Klez by that word.
func TestDovecotSearch(t *testing.T) {
	dc := imaptest.StartDovecot(t)
	corpus := mailtest.Corpus(t)[:5]
	for _, m := range corpus {
		dc.Deliver(t, m)
	}
	env := testEnv(t.TempDir())
	env["ALLOW_PRIVATE_TARGETS"] = "true" // Dovecot is on 127.0.0.1
	srv := startRun(t, env)
	c := newClient(t, srv.URL)
	if status, body, _ := c.do("POST", "/v1/auth/register", map[string]string{
		"email": "dove@example.org", "password": "a long enough password", "name": "Dove"}); status != 201 {
		t.Fatalf("register: %d %v", status, body)
	}
	status, body, _ := c.do("POST", "/v1/user-integrations/imap/credentials", map[string]any{"fields": dc.Fields()})
	if status != 201 {
		t.Fatalf("connect Dovecot: %d %v", status, body)
	}
	items := waitItems(t, c, len(corpus))
	if len(items) != len(corpus) {
		t.Fatalf("items: got %d, want %d", len(items), len(corpus))
	}
	var klez string
	for _, it := range items {
		if m := it.(map[string]any); m["title"] == "[IRR] Klez: The Virus That Won't Die" {
			klez = m["id"].(string)
		}
	}
	if klez == "" {
		t.Fatalf("no item titled as the corpus's fourth mail among %v", items)
	}
	var got []string
	waitFor(t, "q=klez to find the Klez mail", func() bool {
		got, body = searchIDs(t, c, "q=klez")
		return len(got) > 0
	})
	if len(got) != 1 || got[0] != klez {
		t.Fatalf("q=klez: got %v, want [%s]; %v", got, klez, body)
	}
	r := body["results"].([]any)[0].(map[string]any)
	if r["integration"] != "imap" || r["kind"] != "email" {
		t.Errorf("q=klez: result %v, want an imap email", r)
	}
}
