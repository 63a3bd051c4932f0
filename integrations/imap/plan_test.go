package imap_test

import (
	"reflect"
	"testing"

	"searchsvc/integrations/imap"
)

func id(validity, uid uint32, key string) imap.ID {
	return imap.ID{Folder: "INBOX", UIDValidity: validity, UID: uid, Key: key}
}

func TestUnchanged(t *testing.T) {
	state := imap.FolderState{Name: "INBOX", UIDValidity: 7, UIDNext: 10}
	stored := []imap.ID{id(7, 1, "a"), id(7, 4, "b")}
	tests := []struct {
		name   string
		state  imap.FolderState
		stored []imap.ID
		st     imap.Status
		want   bool
	}{
		{"same", state, stored, imap.Status{UIDValidity: 7, UIDNext: 10, Exists: 2}, true},
		{"new mail", state, stored, imap.Status{UIDValidity: 7, UIDNext: 11, Exists: 3}, false},
		{"expunged", state, stored, imap.Status{UIDValidity: 7, UIDNext: 10, Exists: 1}, false},
		{"renumbered", state, stored, imap.Status{UIDValidity: 8, UIDNext: 10, Exists: 2}, false},
		{"no UIDNEXT", state, stored, imap.Status{UIDValidity: 7, Exists: 2}, false},
		{"never synced", imap.FolderState{Name: "INBOX"}, nil, imap.Status{UIDValidity: 7, UIDNext: 1}, false},
		{"stale item left", state, []imap.ID{id(7, 1, "a"), id(6, 4, "b")}, imap.Status{UIDValidity: 7, UIDNext: 10, Exists: 2}, false},
	}
	for _, tt := range tests {
		if got := imap.Unchanged(tt.state, tt.stored, tt.st); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWanted(t *testing.T) {
	server := imap.NewUIDSet(1, 2, 3, 5, 8)
	stored := []imap.ID{id(7, 2, ""), id(7, 9, ""), id(6, 3, "")}
	if got, want := imap.Wanted(imap.Status{UIDValidity: 7}, stored, server).String(), "1,3,5,8"; got != want {
		t.Errorf("same validity: got %s, want %s", got, want)
	}
	if got, want := imap.Wanted(imap.Status{UIDValidity: 9}, stored, server).String(), "1:3,5,8"; got != want {
		t.Errorf("new validity: got %s, want %s", got, want)
	}
}

func TestPlanFolder(t *testing.T) {
	env := func(uid uint32, size int64, key string) imap.Envelope {
		return imap.Envelope{UID: uid, Size: size, Key: key}
	}
	lim := imap.Limits{BatchMessages: 3, BatchBytes: 100, MaxMessageSize: 1000}
	tests := []struct {
		name      string
		st        imap.Status
		stored    []imap.ID
		server    imap.UIDSet
		envelopes []imap.Envelope
		want      imap.Plan
	}{
		{
			name:   "first sync, batches by count and bytes, one over the cap",
			st:     imap.Status{UIDValidity: 7, UIDNext: 9, Exists: 8},
			server: imap.NewUIDSet(1, 2, 3, 4, 5, 6, 7, 8),
			envelopes: []imap.Envelope{
				env(8, 10, ""), env(1, 10, ""), env(2, 10, ""), env(3, 10, ""), env(4, 10, ""),
				env(5, 95, ""), env(6, 5000, ""), env(7, 150, ""),
			},
			want: imap.Plan{Batches: []imap.Batch{
				{UIDs: imap.NewUIDSet(1, 2, 3), Bytes: 30},
				{UIDs: imap.NewUIDSet(4), Bytes: 10},
				{UIDs: imap.NewUIDSet(5), Bytes: 95},
				{UIDs: imap.NewUIDSet(7), Bytes: 150},
				{UIDs: imap.NewUIDSet(8), Bytes: 10},
				{UIDs: imap.NewUIDSet(6), Bytes: 5000, HeadersOnly: true},
			}},
		},
		{
			name:      "expunged and new",
			st:        imap.Status{UIDValidity: 7, UIDNext: 12, Exists: 3},
			stored:    []imap.ID{id(7, 1, "a"), id(7, 2, "b"), id(7, 4, "c")},
			server:    imap.NewUIDSet(1, 4, 11),
			envelopes: []imap.Envelope{env(11, 10, "d"), env(4, 10, "c"), env(99, 10, "x")},
			want: imap.Plan{
				Delete:  []imap.ID{id(7, 2, "b")},
				Batches: []imap.Batch{{UIDs: imap.NewUIDSet(11), Bytes: 10}},
			},
		},
		{
			name: "renumbered: re-keyed one for one by Message-ID",
			st:   imap.Status{UIDValidity: 8, UIDNext: 6, Exists: 5},
			stored: []imap.ID{
				id(7, 10, "a"), id(7, 11, "b"), id(7, 12, "dup"), id(7, 13, "dup"), id(7, 14, ""), id(7, 15, "gone"),
			},
			server: imap.NewUIDSet(1, 2, 3, 4, 5),
			envelopes: []imap.Envelope{
				env(1, 10, "b"), env(2, 10, "dup"), env(3, 10, ""), env(4, 10, "a"), env(5, 10, "new"),
			},
			want: imap.Plan{
				Delete: []imap.ID{id(7, 14, ""), id(7, 13, "dup"), id(7, 15, "gone")},
				Rekey: []imap.Rekey{
					{From: id(7, 11, "b"), To: id(8, 1, "b")},
					{From: id(7, 12, "dup"), To: id(8, 2, "dup")},
					{From: id(7, 10, "a"), To: id(8, 4, "a")},
				},
				Batches: []imap.Batch{{UIDs: imap.NewUIDSet(3, 5), Bytes: 20}},
			},
		},
		{
			name:   "resumed re-key: items of both validities",
			st:     imap.Status{UIDValidity: 8, UIDNext: 3, Exists: 2},
			stored: []imap.ID{id(8, 1, "a"), id(7, 11, "b")},
			server: imap.NewUIDSet(1, 2),
			// Wanted leaves out UID 1, stored under 8 already.
			envelopes: []imap.Envelope{env(2, 10, "b")},
			want: imap.Plan{
				Rekey: []imap.Rekey{{From: id(7, 11, "b"), To: id(8, 2, "b")}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := imap.PlanFolder("INBOX", tt.st, tt.stored, tt.server, tt.envelopes, lim)
			tt.want.Folder, tt.want.UIDValidity = "INBOX", tt.st.UIDValidity
			tt.want.State = imap.FolderState{Name: "INBOX", UIDValidity: tt.st.UIDValidity, UIDNext: tt.st.UIDNext, HighestUID: tt.server.Max()}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestIDString(t *testing.T) {
	tests := []struct {
		id   imap.ID
		want string
	}{
		{imap.ID{Folder: "INBOX", UIDValidity: 3857529045, UID: 20}, "INBOX;UIDVALIDITY=3857529045/;UID=20"},
		{imap.ID{Folder: "a;b%c/d e", UIDValidity: 1, UID: 2, Key: "k-_9"}, "a%3Bb%25c/d%20e;UIDVALIDITY=1/;UID=2;KEY=k-_9"},
		{imap.ID{Folder: "Caf\xc3\xa9", UIDValidity: 1, UID: 2}, "Caf%C3%A9;UIDVALIDITY=1/;UID=2"},
	}
	for _, tt := range tests {
		if got := tt.id.String(); got != tt.want {
			t.Errorf("String: got %s, want %s", got, tt.want)
		}
		if back, err := imap.ParseID(tt.want); err != nil || back != tt.id {
			t.Errorf("ParseID(%s): got %+v, %v; want %+v", tt.want, back, err, tt.id)
		}
	}
	for _, bad := range []string{"", "INBOX", ";UIDVALIDITY=1/;UID=2", "I;UIDVALIDITY=0/;UID=2", "I;UIDVALIDITY=1/;UID=x", "I%2;UIDVALIDITY=1/;UID=2", "I;UIDVALIDITY=1/;UID=2;KEY=", "I;UIDVALIDITY=1/;UID=2;KEY=a/b"} {
		if _, err := imap.ParseID(bad); err == nil {
			t.Errorf("ParseID(%q): got no error", bad)
		}
	}
}

func TestMessageKey(t *testing.T) {
	a := imap.MessageKey([]byte("Message-ID: <a@example.com>\r\n\r\n"))
	tests := []struct {
		header string
		same   bool
	}{
		{"message-id:   <a@example.com>  \r\n\r\n", true},
		{"Subject: x\r\nMessage-Id: junk <a@example.com> (comment)\r\n\r\nbody Message-ID: <b@example.com>\r\n", true},
		{"Message-ID:\r\n <a@example.com>\r\n\r\n", true},
		{"Message-ID: <A@example.com>\r\n\r\n", false},
	}
	for _, tt := range tests {
		if got := imap.MessageKey([]byte(tt.header)); (got == a) != tt.same || got == "" {
			t.Errorf("MessageKey(%q): got %s, same as <a@example.com>: %v, want %v", tt.header, got, got == a, tt.same)
		}
	}
	for _, none := range []string{"", "Subject: x\r\n\r\n", "\r\n\r\nMessage-ID: <a@b>\r\n"} {
		if got := imap.MessageKey([]byte(none)); got != "" {
			t.Errorf("MessageKey(%q): got %s, want none", none, got)
		}
	}
}

func TestGoneFolders(t *testing.T) {
	stored := []imap.ID{
		{Folder: "INBOX", UIDValidity: 1, UID: 1}, {Folder: "Old", UIDValidity: 1, UID: 1},
		{Folder: "Spam", UIDValidity: 1, UID: 2}, {Folder: "Old", UIDValidity: 1, UID: 2},
	}
	synced := imap.SyncedFolders([]imap.Mailbox{{Name: "INBOX"}, {Name: "Spam", Attrs: []string{`\Junk`}}, {Name: "New"}})
	if got, want := imap.GoneFolders(stored, synced), []string{"Old", "Spam"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
