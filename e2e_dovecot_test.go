package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"testing"

	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/mail/mailtest"
)

// TestDovecotSearch connects the IMAP integration, through run and
// POST /v1/user-integrations/imap/credentials, to Debian's Dovecot (a
// server nobody here wrote) holding the shared corpus's first five mails
// in its maildir, waits for the first sync and finds the one mail about
// Klez by that word; a question in the INBOX and its answer in the Sent
// folder are one conversation.
func TestDovecotSearch(t *testing.T) {
	dc := imaptest.StartDovecot(t)
	corpus := mailtest.Corpus(t)[:5]
	for _, m := range corpus {
		dc.Deliver(t, m)
	}
	question := "From: Bob <bob@example.org>\r\nTo: dove@example.org\r\nSubject: Boat keys?\r\n" +
		"Message-ID: <keys-1@example.org>\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\n\r\nWhere are the boat keys?\r\n"
	answer := "From: dove@example.org\r\nTo: Bob <bob@example.org>\r\nSubject: Re: Boat keys?\r\n" +
		"Message-ID: <keys-2@example.org>\r\nIn-Reply-To: <keys-1@example.org>\r\nReferences: <keys-1@example.org>\r\n" +
		"Date: Mon, 2 Nov 2026 11:00:00 +0000\r\n\r\nUnder the mat.\r\n"
	dc.Deliver(t, []byte(question))
	dc.DeliverTo(t, "Sent", []byte(answer))
	attached := "From: Bob <bob@example.org>\r\nTo: dove@example.org\r\nSubject: Timetable\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"sep\"\r\nDate: Tue, 3 Nov 2026 09:00:00 +0000\r\n\r\n" +
		"--sep\r\nContent-Type: text/plain\r\n\r\nThe times are attached.\r\n" +
		"--sep\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Disposition: attachment; filename=\"ferry times.txt\"\r\n\r\n" +
		"The ferry to Zanzibar leaves at nine.\r\n--sep--\r\n"
	attachedFile := dc.Deliver(t, []byte(attached))
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
	items := waitItems(t, c, len(corpus)+3)
	if len(items) != len(corpus)+3 {
		t.Fatalf("items: got %d, want %d", len(items), len(corpus)+3)
	}
	var klez, keys, timetable string
	for _, it := range items {
		switch m := it.(map[string]any); m["title"] {
		case "[IRR] Klez: The Virus That Won't Die":
			klez = m["id"].(string)
		case "Boat keys?":
			keys = m["id"].(string)
		case "Timetable":
			timetable = m["id"].(string)
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

	// The conversation across the INBOX and the Sent folder, once the
	// index has both.
	var titles []string
	waitFor(t, "the boat keys' conversation", func() bool {
		status, body, _ = c.do("GET", "/v1/items/"+keys+"/thread", nil)
		titles = titles[:0]
		rs, _ := body["results"].([]any)
		for _, it := range rs {
			titles = append(titles, it.(map[string]any)["title"].(string))
		}
		return status == 200 && len(titles) == 2
	})
	if titles[0] != "Boat keys?" || titles[1] != "Re: Boat keys?" {
		t.Errorf("the conversation: %q", titles)
	}

	// in: finds the answer in the Sent folder, the question in the INBOX.
	if got, _ := searchIDs(t, c, "q=in:sent"); len(got) != 1 || got[0] == keys {
		t.Errorf("in:sent: %v, want the answer alone", got)
	}
	if got, _ := searchIDs(t, c, "q="+url.QueryEscape("in:inbox boat")); len(got) != 1 || got[0] != keys {
		t.Errorf("in:inbox boat: %v, want the question %s", got, keys)
	}

	// The attachment: listed on its mail, its text and its name found.
	status, body, _ = c.do("GET", "/v1/items/"+timetable, nil)
	atts, _ := body["result"].(map[string]any)["attachments"].([]any)
	if status != 200 || len(atts) != 1 || fmt.Sprint(atts[0]) != "map[index:0 name:ferry times.txt size:37 type:text/plain]" {
		t.Errorf("the timetable's attachments: %d %v", status, atts)
	}
	for _, q := range []string{"q=zanzibar", "q=filename:ferry", "q=has:attachment", "q=" + url.QueryEscape(`filename:"ferry times.txt"`)} {
		if got, _ := searchIDs(t, c, q); len(got) != 1 || got[0] != timetable {
			t.Errorf("%s: %v, want the timetable %s", q, got, timetable)
		}
	}

	// Its download, fetched from Dovecot again; once the mail is deleted
	// there, no longer available.
	resp, err := c.http.Get(srv.URL + "/v1/items/" + timetable + "/attachments/0")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(raw) != "The ferry to Zanzibar leaves at nine." ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="ferry times.txt"` ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Errorf("the attachment's download: %d %q %v", resp.StatusCode, raw, resp.Header)
	}
	if err := os.Remove(attachedFile); err != nil {
		t.Fatal(err)
	}
	status, body, _ = c.do("GET", "/v1/items/"+timetable+"/attachments/0", nil)
	if status != 404 || errMessage(body) != "attachment no longer available" {
		t.Errorf("the attachment of a mail deleted at the server: %d %v", status, body)
	}
}
