package imap_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
)

// store is the caller's side of a sync, in memory: items by provider id
// and folder states, changed only through Changes, as the sync task
// system will.
type store struct {
	items   map[string]integrations.Item
	states  map[string]imap.FolderState
	applied []changes
	// failAt makes the apply numbered failAt (from 1) fail, as a crash
	// between two batches would.
	failAt int
}

func newStore() *store {
	return &store{items: map[string]integrations.Item{}, states: map[string]imap.FolderState{}}
}

var errCrash = errors.New("crash")

func (s *store) apply(_ context.Context, ch changes) error {
	if s.failAt > 0 && len(s.applied)+1 == s.failAt {
		s.failAt = 0
		return errCrash
	}
	s.applied = append(s.applied, ch)
	for _, id := range ch.Delete {
		delete(s.items, id.String())
	}
	for _, r := range ch.Rekey {
		it, ok := s.items[r.From.String()]
		if !ok {
			return fmt.Errorf("rekey of unknown %s", r.From)
		}
		delete(s.items, r.From.String())
		it.ProviderID = r.To.String()
		s.items[it.ProviderID] = it
	}
	for _, it := range ch.Items {
		if _, dup := s.items[it.ProviderID]; dup {
			return fmt.Errorf("item %s stored twice", it.ProviderID)
		}
		s.items[it.ProviderID] = it
	}
	if ch.State != nil {
		s.states[ch.Folder] = *ch.State
	}
	return nil
}

// stored returns the IDs of a folder's items.
func (s *store) stored(t *testing.T, folder string) []imap.ID {
	t.Helper()
	var out []imap.ID
	for pid := range s.items {
		id, err := imap.ParseID(pid)
		if err != nil {
			t.Fatalf("stored provider id %q: %v", pid, err)
		}
		if id.Folder == folder {
			out = append(out, id)
		}
	}
	return out
}

// sync runs one sync of every folder, as the sync task system will.
func (s *store) sync(t *testing.T, c *imap.Client, lim imap.Limits) (map[string]folderReport, error) {
	t.Helper()
	ctx := context.Background()
	boxes, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	reports := map[string]folderReport{}
	for _, m := range imap.SyncedFolders(boxes) {
		state, ok := s.states[m.Name]
		if !ok {
			state = imap.FolderState{Name: m.Name}
		}
		rep, err := syncFolder(ctx, c, state, s.stored(t, m.Name), lim, s.apply)
		if err != nil {
			return reports, err
		}
		reports[m.Name] = rep
	}
	return reports, nil
}

// dialer trusts srv.
func dialer(srv *imaptest.Server) imap.Dialer {
	return imap.Dialer{TLSConfig: &tls.Config{RootCAs: srv.Pool()}}
}

func dial(t *testing.T, srv *imaptest.Server, d imap.Dialer) *imap.Client {
	t.Helper()
	a, err := imap.ParseFields(srv.Fields())
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Dial(context.Background(), a)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var epoch = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// message returns a small message numbered i.
func message(i int) []byte {
	return fmt.Appendf(nil, "From: Ana <ana@example.com>\r\nTo: bo@example.com\r\nSubject: message %d\r\n"+
		"Message-ID: <%d@example.com>\r\nDate: Fri, 1 Mar 2024 12:00:00 +0000\r\n\r\nbody of message %d\r\n", i, i, i)
}

func fill(srv *imaptest.Server, box string, from, to int) {
	for i := from; i < to; i++ {
		srv.Append(box, message(i), epoch.Add(time.Duration(i)*time.Minute))
	}
}

// titles returns the sorted titles of the store's items.
func (s *store) titles() []string {
	var out []string
	for _, it := range s.items {
		out = append(out, it.Title)
	}
	slices.Sort(out)
	return out
}

func wantTitles(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("message %d", i))
	}
	slices.Sort(out)
	return out
}

func TestFolderSelection(t *testing.T) {
	setup := func(srv *imaptest.Server) {
		srv.AddMailbox("INBOX", `\HasChildren`)
		srv.AddMailbox("INBOX/Receipts", `\HasNoChildren`)
		srv.AddMailbox("Sent", `\HasNoChildren`, `\Sent`)
		srv.AddMailbox("Drafts", `\HasNoChildren`, `\Drafts`)
		srv.AddMailbox("Spam", `\HasNoChildren`, `\Junk`)
		srv.AddMailbox("Deleted Items", `\HasNoChildren`, `\Trash`)
		srv.AddMailbox("[Gmail]", `\Noselect`, `\HasChildren`)
		srv.AddMailbox("[Gmail]/All Mail", `\HasNoChildren`, `\All`)
		srv.AddMailbox("Projects", `\HasNoChildren`)
		srv.AddMailbox("Café", `\HasNoChildren`)
	}
	want := []string{"INBOX", "INBOX/Receipts", "Sent", "Drafts", "Projects", "Café"}
	tests := []struct {
		name string
		caps []string
		// listed are the attributes LIST gives Spam, which the server
		// shows only with SPECIAL-USE.
		spamAttrs []string
	}{
		{"SPECIAL-USE with RETURN", imaptest.DefaultCaps(), []string{`\HasNoChildren`, `\Junk`}},
		{"SPECIAL-USE in plain LIST", []string{"IMAP4rev1", "SPECIAL-USE"}, []string{`\HasNoChildren`, `\Junk`}},
		{"names only", []string{"IMAP4rev1"}, []string{`\HasNoChildren`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := imaptest.New(t)
			setup(srv)
			srv.SetCaps(tt.caps...)
			c := dial(t, srv, dialer(srv))
			boxes, err := c.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range boxes {
				if m.Name == "Spam" && !slices.Equal(m.Attrs, tt.spamAttrs) {
					t.Errorf("Spam attributes: got %v, want %v", m.Attrs, tt.spamAttrs)
				}
			}
			var got []string
			for _, m := range imap.SyncedFolders(boxes) {
				got = append(got, m.Name)
			}
			if !slices.Equal(got, want) {
				t.Errorf("synced folders: got %q, want %q", got, want)
			}
			if n := srv.Stats().Commands["LIST"]; n != 1 {
				t.Errorf("LIST commands: got %d, want 1", n)
			}
		})
	}
}

func TestSyncRounds(t *testing.T) {
	srv := imaptest.New(t)
	srv.AddMailbox("Archive", `\Archive`)
	srv.AddMailbox("Junk", `\Junk`)
	srv.AddMailbox("Café \"quoted\"") // listed as a literal, examined with one
	fill(srv, "INBOX", 0, 250)
	fill(srv, "Archive", 250, 259)
	fill(srv, "Café \"quoted\"", 259, 260)
	fill(srv, "Junk", 1000, 1005)
	st := newStore()
	lim := imap.Limits{BatchMessages: 100}

	// First sync: everything, in batches of at most 100.
	c := dial(t, srv, dialer(srv))
	reps, err := st.sync(t, c, lim)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.titles(), wantTitles(0, 260); !slices.Equal(got, want) {
		t.Fatalf("first sync: got %d items, want %d (junk left out)", len(got), len(want))
	}
	var sizes []int
	for _, ch := range st.applied {
		sizes = append(sizes, len(ch.Items))
	}
	if want := []int{100, 100, 50, 9, 1}; !slices.Equal(sizes, want) {
		t.Errorf("first sync batches: got %v items, want %v", sizes, want)
	}
	if r := reps["INBOX"]; r.Downloaded != 250 || r.Unchanged {
		t.Errorf("INBOX report: got %+v, want 250 downloaded", r)
	}
	stats := srv.Stats()
	if stats.Bodies != 260 || stats.Seen != 0 || stats.Commands["UID SEARCH"] != 3 {
		t.Errorf("first sync: got %d bodies, %d fetched without PEEK, %d searches; want 260, 0, 3", stats.Bodies, stats.Seen, stats.Commands["UID SEARCH"])
	}
	for _, it := range st.items {
		id, _ := imap.ParseID(it.ProviderID)
		if it.From != "Ana <ana@example.com>" || len(it.To) != 1 || id.Key == "" || !strings.Contains(it.Text, "body of message") || len(it.Raw) != int(it.Size) {
			t.Fatalf("item %+v: want sender, recipient, key, text and raw", it)
		}
	}

	// Second sync, nothing new: one EXAMINE per folder, nothing else.
	srv.ResetStats()
	st.applied = nil
	if reps, err = st.sync(t, c, lim); err != nil {
		t.Fatal(err)
	}
	stats = srv.Stats()
	wantCmds := map[string]int{"LIST": 1, "EXAMINE": 3}
	if !maps.Equal(stats.Commands, wantCmds) || stats.Bodies+stats.Envelopes+stats.Headers != 0 || len(st.applied) != 0 {
		t.Errorf("second sync: got commands %v, %d bodies, %d changes; want %v and nothing fetched", stats.Commands, stats.Bodies, len(st.applied), wantCmds)
	}
	if !reps["INBOX"].Unchanged {
		t.Errorf("second sync: INBOX report %+v, want unchanged", reps["INBOX"])
	}

	// New mail and expunged mail: only the new downloaded, the gone deleted.
	fill(srv, "INBOX", 300, 303)
	srv.Expunge("INBOX", 1, 2, 250)
	srv.ResetStats()
	if reps, err = st.sync(t, c, lim); err != nil {
		t.Fatal(err)
	}
	want := append(wantTitles(2, 249), wantTitles(250, 260)...)
	want = append(want, wantTitles(300, 303)...)
	slices.Sort(want)
	if got := st.titles(); !slices.Equal(got, want) {
		t.Errorf("third sync: got %d items, want %d", len(got), len(want))
	}
	if stats = srv.Stats(); stats.Bodies != 3 || stats.Envelopes != 3 {
		t.Errorf("third sync: got %d bodies, %d envelopes; want 3, 3", stats.Bodies, stats.Envelopes)
	}
	if r := reps["INBOX"]; r.Downloaded != 3 || r.Deleted != 3 {
		t.Errorf("third sync: INBOX report %+v, want 3 downloaded, 3 deleted", r)
	}
	if err := c.Logout(context.Background()); err != nil {
		t.Errorf("Logout: %v", err)
	}
}

// TestUIDValidityChange: a renumbered folder is matched by Message-ID:
// nothing is downloaded again but the one message without a Message-ID,
// and a stored message that is gone is deleted.
func TestUIDValidityChange(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 40)
	srv.Append("INBOX", []byte("Subject: no id\r\n\r\nanonymous\r\n"), epoch)
	st := newStore()
	c := dial(t, srv, dialer(srv))
	if _, err := st.sync(t, c, imap.Limits{}); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, it := range st.items {
		before[it.Title] = it.Text
	}
	srv.Expunge("INBOX", 6) // message 5
	srv.Renumber("INBOX")
	srv.ResetStats()
	reps, err := st.sync(t, c, imap.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if r := reps["INBOX"]; r.Rekeyed != 39 || r.Downloaded != 1 || r.Deleted != 2 {
		t.Errorf("report: got %+v, want 39 re-keyed, 1 downloaded (no Message-ID), 2 deleted", r)
	}
	if stats := srv.Stats(); stats.Bodies != 1 || stats.Envelopes != 40 {
		t.Errorf("got %d bodies, %d envelopes; want 1, 40", stats.Bodies, stats.Envelopes)
	}
	ids := st.stored(t, "INBOX")
	if len(ids) != 40 {
		t.Fatalf("got %d items, want 40", len(ids))
	}
	for _, it := range st.items {
		id, _ := imap.ParseID(it.ProviderID)
		if id.UIDValidity != st.states["INBOX"].UIDValidity {
			t.Errorf("item %s: validity %d, want the new %d", it.Title, id.UIDValidity, st.states["INBOX"].UIDValidity)
		}
		if before[it.Title] != it.Text {
			t.Errorf("item %s: content changed", it.Title)
		}
	}
	if _, ok := before["message 5"]; !ok {
		t.Fatal("message 5 was never stored")
	}
	for _, it := range st.items {
		if it.Title == "message 5" {
			t.Error("expunged message 5 is still stored")
		}
	}
	// And the next sync is quiet again.
	srv.ResetStats()
	if reps, err = st.sync(t, c, imap.Limits{}); err != nil || !reps["INBOX"].Unchanged {
		t.Errorf("sync after the re-key: got %+v, %v; want unchanged", reps["INBOX"], err)
	}
}

// TestResume: a sync stopped between two batches resumes where it
// stopped: nothing is downloaded twice.
func TestResume(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 30)
	st := newStore()
	st.failAt = 2
	c := dial(t, srv, dialer(srv))
	lim := imap.Limits{BatchMessages: 10}
	if _, err := st.sync(t, c, lim); !errors.Is(err, errCrash) {
		t.Fatalf("first sync: got %v, want the crash", err)
	}
	if len(st.items) != 10 {
		t.Fatalf("after the crash: got %d items, want 10", len(st.items))
	}
	if _, ok := st.states["INBOX"]; ok {
		t.Error("the folder state was stored before the folder was done")
	}
	srv.ResetStats()
	if _, err := st.sync(t, c, lim); err != nil {
		t.Fatal(err)
	}
	if got, want := st.titles(), wantTitles(0, 30); !slices.Equal(got, want) {
		t.Errorf("after resuming: got %d items, want %d", len(got), len(want))
	}
	if stats := srv.Stats(); stats.Bodies != 20 {
		t.Errorf("resumed sync: got %d bodies, want 20", stats.Bodies)
	}
}

// TestSizeCap: a message over the cap is stored from its header only, as
// a placeholder, whether the plan knew its size or the server announced
// a larger literal than RFC822.SIZE said.
func TestSizeCap(t *testing.T) {
	big := append(message(7), strings.Repeat("x", 5000)...)
	tests := []struct {
		name string
		d    func(*imaptest.Server) imap.Dialer
		lim  imap.Limits
	}{
		{"planned", dialer, imap.Limits{MaxMessageSize: 1000}},
		{"client cap", func(srv *imaptest.Server) imap.Dialer {
			d := dialer(srv)
			d.MaxMessageSize = 1000
			return d
		}, imap.Limits{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := imaptest.New(t)
			fill(srv, "INBOX", 0, 2)
			srv.Append("INBOX", big, epoch)
			st := newStore()
			c := dial(t, srv, tt.d(srv))
			if _, err := st.sync(t, c, tt.lim); err != nil {
				t.Fatal(err)
			}
			if got := st.titles(); !slices.Equal(got, []string{"message 0", "message 1", "message 7"}) {
				t.Fatalf("got %q", got)
			}
			for _, it := range st.items {
				if it.Title != "message 7" {
					continue
				}
				if it.Raw != nil || it.Size != int64(len(big)) || it.From != "Ana <ana@example.com>" || !strings.Contains(it.Text, "larger than 25 MiB") {
					t.Errorf("placeholder: got %+v, want header fields, size %d, no content", it, len(big))
				}
			}
			if stats := srv.Stats(); stats.Headers != 1 {
				t.Errorf("got %d header fetches, want 1", stats.Headers)
			}
			srv.ResetStats()
			if reps, err := st.sync(t, c, tt.lim); err != nil || !reps["INBOX"].Unchanged {
				t.Errorf("second sync: got %+v, %v; want unchanged", reps, err)
			}
		})
	}
}

// TestReadTimeout: a server that stops answering fails the sync with a
// timeout, whatever the overall context allows; a slow one that keeps
// answering within the timeout syncs.
func TestReadTimeout(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 3)
	d := dialer(srv)
	d.ReadTimeout = 200 * time.Millisecond
	c := dial(t, srv, d)
	srv.Stall("UID FETCH")
	_, err := newStore().sync(t, c, imap.Limits{})
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled server: got %v, want a deadline error", err)
	}
	if _, err := c.List(context.Background()); err == nil {
		t.Error("the client was used again after a timeout")
	}

	srv.Stall("")
	srv.SetDelay(5 * time.Millisecond)
	d.ReadTimeout = 10 * time.Second
	st := newStore()
	if _, err := st.sync(t, dial(t, srv, d), imap.Limits{}); err != nil || len(st.items) != 3 {
		t.Errorf("slow server: got %d items, %v; want 3", len(st.items), err)
	}
}

func TestCancel(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 3)
	c := dial(t, srv, dialer(srv))
	srv.Stall("EXAMINE")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-srv.Stalled() // EXAMINE sent, its answer awaited
		cancel()
	}()
	_, err := syncFolder(ctx, c, imap.FolderState{Name: "INBOX"}, nil, imap.Limits{}, newStore().apply)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// TestTruncatedLiteral: a connection cut in the middle of a message is an
// error, not a hang or a partial item; the next sync gets it whole.
func TestTruncatedLiteral(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 3)
	srv.CutBodies(20)
	st := newStore()
	_, err := st.sync(t, dial(t, srv, dialer(srv)), imap.Limits{})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
	if len(st.items) != 0 {
		t.Errorf("got %d items from a cut batch, want 0", len(st.items))
	}
	srv.CutBodies(0)
	if _, err := st.sync(t, dial(t, srv, dialer(srv)), imap.Limits{}); err != nil || len(st.items) != 3 {
		t.Errorf("after the cut: got %d items, %v; want 3", len(st.items), err)
	}
}
