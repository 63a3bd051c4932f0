package imap

import (
	"slices"
	"testing"

	"searchsvc/integrations/mail"
)

// TestMessageItemThread: a mail's item names its conversation by the
// first message of its References and is linked by its own id, its
// parent and its references, as keys; a mail without ids has none.
func TestMessageItemThread(t *testing.T) {
	raw := "Message-ID: <c@x>\r\nIn-Reply-To: <b@x>\r\nReferences: <a@x> <b@x>\r\nSubject: Re: plan\r\n\r\nyes"
	it := MessageItem("INBOX", 7, Message{UID: 3, Raw: []byte(raw), Size: int64(len(raw))})
	want := []string{mail.IDKey("<c@x>"), mail.IDKey("<b@x>"), mail.IDKey("<a@x>")}
	if it.Thread != mail.IDKey("<a@x>") || !slices.Equal(it.Refs, want) {
		t.Errorf("thread %q refs %q, want %q %q", it.Thread, it.Refs, mail.IDKey("<a@x>"), want)
	}
	raw = "Subject: no ids\r\n\r\nyes"
	if it := MessageItem("INBOX", 7, Message{UID: 4, Raw: []byte(raw)}); it.Thread != "" || it.Refs != nil {
		t.Errorf("a mail without ids: thread %q refs %q", it.Thread, it.Refs)
	}
}

// TestMailboxUse: a mailbox's special use comes from its attribute, else
// from the name servers without them give it; INBOX is the inbox.
func TestMailboxUse(t *testing.T) {
	for _, tc := range []struct {
		m    Mailbox
		want string
	}{
		{Mailbox{Name: "INBOX"}, "inbox"},
		{Mailbox{Name: "Gesendet", Attrs: []string{`\HasNoChildren`, `\Sent`}}, "sent"},
		{Mailbox{Name: "Sent Items"}, "sent"},
		{Mailbox{Name: "INBOX.Drafts", Delim: "."}, "drafts"},
		{Mailbox{Name: "Projects/Spam", Delim: "/"}, "junk"},
		{Mailbox{Name: "Projects"}, ""},
	} {
		if got := tc.m.Use(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.m, got, tc.want)
		}
	}
}
