package mail

import (
	"slices"
	"strings"
	"testing"
)

// TestThread: a message's conversation is the first of References, else
// In-Reply-To, else its own Message-ID; its links are its own id, its
// parent, the first and the latest references, without repeats, at most
// MaxRefs; what is not a message id is skipped.
func TestThread(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		thread       string
		refs         []string
	}{
		{"root", "Message-ID: <a@x>\r\n", "<a@x>", []string{"<a@x>"}},
		{"reply", "Message-ID: <b@x>\r\nIn-Reply-To: <a@x>\r\nReferences: <a@x>\r\n", "<a@x>", []string{"<b@x>", "<a@x>"}},
		{"parent only", "Message-ID: <c@x>\r\nIn-Reply-To: <b@x> (Ann's message)\r\n", "<b@x>", []string{"<c@x>", "<b@x>"}},
		{"chain", "Message-ID: <d@x>\r\nIn-Reply-To: <c@x>\r\nReferences: <a@x>\r\n <b@x> <c@x>\r\n", "<a@x>", []string{"<d@x>", "<c@x>", "<a@x>", "<b@x>"}},
		{"no ids", "Subject: hi\r\n", "", nil},
		{"junk", "Message-ID: not an id\r\nIn-Reply-To: <no at sign> <a b@x> <>\r\nReferences: <<a@x>\r\n", "<a@x>", []string{"<a@x>"}},
	} {
		m, err := Parse([]byte("From: ann@x\r\n" + tc.header + "\r\nbody"))
		if err != nil {
			t.Fatal(err)
		}
		if m.Thread != tc.thread || !slices.Equal(m.Refs, tc.refs) {
			t.Errorf("%s: thread %q refs %q, want %q %q", tc.name, m.Thread, m.Refs, tc.thread, tc.refs)
		}
		th, keys := m.ThreadKeys()
		if th != IDKey(tc.thread) || len(keys) != len(tc.refs) || len(th) != len(IDKey("<a@x>")) && th != "" {
			t.Errorf("%s: keys %q %q", tc.name, th, keys)
		}
	}

	// A long conversation keeps the first and the latest references.
	var refs []string
	for i := range 40 {
		refs = append(refs, "<m"+strings.Repeat("0", 3)+string(rune('a'+i%26))+itoa(i)+"@x>")
	}
	m, _ := Parse([]byte("Message-ID: <z@x>\r\nIn-Reply-To: " + refs[39] + "\r\nReferences: " + strings.Join(refs, " ") + "\r\n\r\n"))
	if len(m.Refs) != MaxRefs || m.Thread != refs[0] || m.Refs[0] != "<z@x>" || m.Refs[1] != refs[39] || m.Refs[2] != refs[0] || m.Refs[3] != refs[38] {
		t.Errorf("long References: thread %q refs %q", m.Thread, m.Refs)
	}
	// An id longer than a line is not one.
	long := "<" + strings.Repeat("a", maxMessageID) + "@x>"
	if m, _ := Parse([]byte("Message-ID: " + long + "\r\n\r\n")); m.Thread != "" {
		t.Errorf("an id of %d bytes kept", len(long))
	}
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }
