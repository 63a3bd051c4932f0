package imap

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// script is a server's side of a whole sync, for the fuzz seeds.
const script = "* OK [CAPABILITY IMAP4rev1 ESEARCH] ready\r\n" +
	"a1 OK [CAPABILITY IMAP4rev1 ESEARCH SPECIAL-USE LIST-EXTENDED] in\r\n" +
	"* LIST (\\HasNoChildren) \"/\" INBOX\r\n* LIST (\\Junk) \"/\" \"Spam\"\r\na2 OK done\r\n" +
	"* 2 EXISTS\r\n* OK [UIDVALIDITY 7] x\r\n* OK [UIDNEXT 3] x\r\na3 OK [READ-ONLY] done\r\n" +
	"* ESEARCH (TAG \"a4\") UID ALL 1:2\r\na4 OK done\r\n" +
	"* 1 FETCH (UID 1 RFC822.SIZE 30 BODY[HEADER.FIELDS (MESSAGE-ID)] {21}\r\nMessage-ID: <a@b>\r\n\r\n)\r\n" +
	"* 2 FETCH (UID 2 RFC822.SIZE 30 BODY[HEADER.FIELDS (MESSAGE-ID)] NIL)\r\na5 OK done\r\n" +
	"* 1 FETCH (UID 1 RFC822.SIZE 12 INTERNALDATE \"17-Jul-1996 02:44:25 -0700\" BODY[] {12}\r\nSubject: x\r\n)\r\n" +
	"* 2 FETCH (UID 2 BODY[] {5000}\r\n" + "\r\n" + "a6 OK done\r\n"

// FuzzClient plays a hostile server through a whole sync: whatever it
// sends, the client ends without a panic, keeps no literal over its
// budget, never quotes the password in an error, and reports only UIDs it
// asked for.
func FuzzClient(f *testing.F) {
	f.Add([]byte(script), "pw")
	f.Add([]byte("* OK ready\r\n+ go\r\na1 NO pässwörd bad\r\n"), "pässwörd")
	f.Add([]byte("* PREAUTH\r\n* CAPABILITY IMAP4rev1\r\na1 OK\r\n"), "x")
	f.Add([]byte("* OK\r\n* BYE pw\r\n"), "pw")
	f.Add([]byte("* OK [CAPABILITY LOGINDISABLED AUTH=PLAIN]\r\n+ \r\na1 OK\r\n"), "pw")
	f.Fuzz(func(t *testing.T, server []byte, password string) {
		if password == "" || strings.IndexByte(password, 0) >= 0 {
			return
		}
		const budget = 1024
		c := newClient(struct {
			io.Reader
			io.Writer
		}{bytes.NewReader(server), io.Discard}, budget)
		c.secret = password
		ctx := context.Background()
		check := func(err error) bool {
			var se *ServerError
			if errors.As(err, &se) && strings.Contains(se.Text, password) && strings.Contains(printable(password), password) {
				t.Fatalf("refusal %q quotes the password", se.Text)
			}
			return err == nil
		}
		if !check(c.login(ctx, Account{Host: "h", Port: 993, Username: "u", Password: password})) {
			return
		}
		if _, err := c.List(ctx); !check(err) {
			return
		}
		st, err := c.Examine(ctx, "INBOX")
		if !check(err) {
			return
		}
		uids, err := c.SearchUIDs(ctx)
		if !check(err) {
			return
		}
		if uids.Len() > int(c.exists) {
			t.Fatalf("%d UIDs for %d messages", uids.Len(), c.exists)
		}
		_ = st
		asked := NewUIDSet(1, 2, 3)
		err = c.FetchEnvelopes(ctx, asked, func(e Envelope) error {
			if !asked.Contains(e.UID) {
				t.Fatalf("envelope of UID %d, not asked for", e.UID)
			}
			return nil
		})
		if !check(err) {
			return
		}
		check(c.FetchMessages(ctx, asked, false, func(m Message) error {
			if !asked.Contains(m.UID) || len(m.Raw) > budget {
				t.Fatalf("message UID %d of %d bytes", m.UID, len(m.Raw))
			}
			MessageItem("INBOX", st.UIDValidity, m)
			return nil
		}))
	})
}

// TestClientScript runs the fuzz seed as a known answer.
func TestClientScript(t *testing.T) {
	c := newClient(struct {
		io.Reader
		io.Writer
	}{strings.NewReader(script), io.Discard}, 1024)
	ctx := context.Background()
	if err := c.login(ctx, Account{Username: "u", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	boxes, err := c.List(ctx)
	if err != nil || len(boxes) != 2 || len(SyncedFolders(boxes)) != 1 {
		t.Fatalf("List: got %+v, %v", boxes, err)
	}
	st, err := c.Examine(ctx, "INBOX")
	if want := (Status{UIDValidity: 7, UIDNext: 3, Exists: 2}); err != nil || st != want {
		t.Fatalf("Examine: got %+v, %v; want %+v", st, err, want)
	}
	uids, err := c.SearchUIDs(ctx)
	if err != nil || uids.String() != "1:2" {
		t.Fatalf("SearchUIDs: got %s, %v", uids, err)
	}
	var keys []string
	if err := c.FetchEnvelopes(ctx, uids, func(e Envelope) error {
		keys = append(keys, e.Key)
		return nil
	}); err != nil || len(keys) != 2 || keys[0] == "" || keys[1] != "" {
		t.Fatalf("FetchEnvelopes: got keys %q, %v", keys, err)
	}
	var got []Message
	err = c.FetchMessages(ctx, uids, false, func(m Message) error {
		got = append(got, m)
		return nil
	})
	// UID 2 is over the budget: the client asks for its header, and the
	// script has ended.
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 1 || string(got[0].Raw) != "Subject: x\r\n" {
		t.Fatalf("FetchMessages: got %d messages, %v", len(got), err)
	}
}
