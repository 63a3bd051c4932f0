package imap_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/records"
)

// stopAfter is an IMAP instance that stops the Syncer (cancels its Run)
// once it has run k fetchMessages tasks: a restart between two batches.
type stopAfter struct {
	integrations.Integration
	n    *atomic.Int32
	k    int32
	stop context.CancelFunc
}

func (s stopAfter) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	res, err := s.Integration.RunTask(ctx, task)
	if task.Type == imap.TaskFetchMessages && s.n.Add(1) == s.k {
		s.stop()
	}
	return res, err
}

func TestSyncerIMAPResumesAfterRestart(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 23)
	d := imap.Dialer{Limits: imap.Limits{BatchMessages: 5}}
	f := newE2E(t, srv, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopping := d.Definition()
	stopping.New = func(env integrations.Env) (integrations.Integration, error) {
		in, err := d.Definition().New(env)
		return stopAfter{Integration: in, n: new(atomic.Int32), k: 2, stop: cancel}, err
	}
	f.reopen(stopping)
	rec := f.connect()
	srv.ResetStats()

	// Stopped after two batches of five: they are stored, the three
	// batches left wait in the task queue.
	if err := f.syncer.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wantStats(t, srv, 10, map[string]int{"LIST": 1, "EXAMINE": 1, "UID SEARCH": 1, "UID FETCH": 1 + 2})
	if got, want := titles(f.live(rec.ID)), wantTitles(0, 10); !slices.Equal(got, want) {
		t.Fatalf("items after the stop: got %q, want %q", got, want)
	}
	if n := f.syncer.Pending(rec.ID); n != 4 {
		t.Errorf("tasks left after the stop: got %d, want 4 (three batches and folderDone)", n)
	}
	f.wantView(rec.ID, records.StatusConnected, 10, "", false)
	if got := f.view(rec.ID)["pendingTasks"]; got != float64(4) {
		t.Errorf("pendingTasks shown: got %v, want 4", got)
	}

	// A new Syncer on the same store downloads the rest, and only it: no
	// new listing, no message twice.
	f.reopen(d.Definition())
	f.runOnce()
	wantStats(t, srv, 13, map[string]int{"EXAMINE": 1, "UID FETCH": 3})
	if got, want := titles(f.live(rec.ID)), wantTitles(0, 23); !slices.Equal(got, want) {
		t.Errorf("items after the restart: got %q, want %q", got, want)
	}
	if n := f.syncer.Pending(rec.ID); n != 0 {
		t.Errorf("tasks left after the restart: got %d, want 0", n)
	}
	f.wantView(rec.ID, records.StatusConnected, 23, "", true)
	f.next()
	wantStats(t, srv, 0, map[string]int{"LIST": 1, "EXAMINE": 1})
}

// TestSyncerIMAPFailures: a server that stops answering (before a
// response, or in the middle of a line), or one that hangs up in the
// middle of a message, fails the task with a clear lastError; the task
// is retried after its backoff and the sync then completes.
func TestSyncerIMAPFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		breakIt func(*imaptest.Server)
		mend    func(*imaptest.Server)
		message string
	}{
		{"stalled fetch", func(s *imaptest.Server) { s.Stall("UID FETCH") }, func(s *imaptest.Server) { s.Stall("") },
			"the IMAP server did not answer in time; will retry"},
		{"line held half sent", func(s *imaptest.Server) { s.HoldLines(true) }, func(s *imaptest.Server) { s.HoldLines(false) },
			"the IMAP server did not answer in time; will retry"},
		{"cut in a message", func(s *imaptest.Server) { s.CutBodies(40) }, func(s *imaptest.Server) { s.CutBodies(0) },
			"the IMAP server closed the connection in the middle of an answer; will retry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := imaptest.New(t)
			fill(srv, "INBOX", 0, 4)
			f := newE2E(t, srv, imap.Dialer{ReadTimeout: 500 * time.Millisecond, Limits: imap.Limits{BatchMessages: 2}})
			rec := f.connect()
			tc.breakIt(srv)
			f.runOnce()
			f.wantView(rec.ID, records.StatusError, 0, tc.message, false)
			if n := f.syncer.Pending(rec.ID); n == 0 {
				t.Fatal("no task left after a failure, want the failed one kept for a retry")
			}
			if got := f.syncer.Outcomes()["retried"]; got != 1 {
				t.Errorf("tasks retried: got %d, want 1", got)
			}
			// Not before its backoff.
			f.runOnce()
			if got := f.syncer.Outcomes()["retried"]; got != 1 {
				t.Errorf("tasks retried before the backoff ended: got %d, want still 1", got)
			}
			tc.mend(srv)
			f.clock.Advance(time.Minute)
			f.runOnce()
			if got, want := titles(f.live(rec.ID)), wantTitles(0, 4); !slices.Equal(got, want) {
				t.Errorf("items after the retry: got %q, want %q", got, want)
			}
			f.wantView(rec.ID, records.StatusConnected, 4, "", true)
		})
	}
}

// TestSyncerIMAPWrongPassword: the form refuses a wrong password naming
// the field; a password changed on the server after connecting puts the
// record in needs_reauth, with its tasks dropped.
func TestSyncerIMAPWrongPassword(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 2)
	f := newE2E(t, srv, imap.Dialer{})
	status, body := f.do("POST", "/v1/user-integrations/imap/credentials", f.form("wrong password"))
	details, _ := body["error"].(map[string]any)["details"].([]any)
	if status != http.StatusBadRequest || len(details) != 1 ||
		fmt.Sprint(details[0]) != "map[field:fields.password message:the server refused the username or password ([AUTHENTICATIONFAILED] Authentication failed.)]" {
		t.Errorf("form with a wrong password: got %d %v", status, body)
	}
	if rs := f.recs.ForUser("u1"); len(rs) != 0 {
		t.Error("a record was stored for a refused password")
	}

	// Connected, then the password or the certificate changed on the
	// server.
	for _, tc := range []struct {
		name, password, certificate, message string
	}{
		{"password", "changed on the server", srv.CAPEM(),
			"the IMAP server refused the username or password; connect it again with the right ones"},
		{"certificate", imaptest.Password, "",
			"the IMAP server's TLS certificate is no longer the one trusted (it changed, or expired); " +
				"connect again, with its new CA certificate or fingerprint in the certificate field if it is on your network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fields := srv.Fields()
			fields["password"], fields["certificate"] = tc.password, tc.certificate
			user := "u-" + tc.name
			rec, err := f.recs.Connect(user, imap.Domain, integrations.Credentials{Fields: fields})
			if err != nil {
				t.Fatal(err)
			}
			f.runOnce()
			got, _ := f.recs.ByID(rec.ID)
			if got.Status != records.StatusNeedsReauth || got.LastError != tc.message || got.ItemsSynced != 0 {
				t.Errorf("record: got %s, %q, %d items; want %s, %q, 0", got.Status, got.LastError, got.ItemsSynced,
					records.StatusNeedsReauth, tc.message)
			}
			if n := f.syncer.Pending(rec.ID); n != 0 {
				t.Errorf("tasks left: got %d, want 0", n)
			}
		})
	}
	assertNothingPlain(t, f.dir, "changed on the server", imaptest.Username)
}

// afterStart is an IMAP instance that calls hook once its start task has
// listed the folders.
type afterStart struct {
	integrations.Integration
	hook func()
}

func (a afterStart) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	res, err := a.Integration.RunTask(ctx, task)
	if task.Type == integrations.TaskStart && a.hook != nil {
		a.hook()
	}
	return res, err
}

// TestSyncerIMAPFolderGoneMidSync: a folder deleted between LIST and its
// EXAMINE is skipped, the record stays connected and the other folders
// sync; the next sync, whose LIST no longer shows it, removes its items.
func TestSyncerIMAPFolderGoneMidSync(t *testing.T) {
	srv := imaptest.New(t)
	srv.AddMailbox("Archive", `\Archive`)
	fill(srv, "INBOX", 0, 2)
	fill(srv, "Archive", 2, 4)
	d := imap.Dialer{}
	var hook func()
	def := d.Definition()
	def.New = func(env integrations.Env) (integrations.Integration, error) {
		in, err := d.Definition().New(env)
		return afterStart{Integration: in, hook: hook}, err
	}
	f := newE2E(t, srv, d)
	f.reopen(def)
	rec := f.connect()
	f.runOnce()
	if got, want := titles(f.live(rec.ID)), wantTitles(0, 4); !slices.Equal(got, want) {
		t.Fatalf("items after the first sync: got %q, want %q", got, want)
	}

	hook = func() { srv.DeleteMailbox("Archive") }
	fill(srv, "INBOX", 4, 5)
	f.next()
	hook = nil
	if got := f.syncer.Outcomes()["skipped"]; got != 1 {
		t.Errorf("tasks skipped: got %d, want 1 (the folder gone)", got)
	}
	if got, want := titles(f.live(rec.ID)), wantTitles(0, 5); !slices.Equal(got, want) {
		t.Errorf("items after the folder went mid-sync: got %q, want %q", got, want)
	}
	f.wantView(rec.ID, records.StatusConnected, 5, "", true)

	f.next()
	if got, want := titles(f.live(rec.ID)), wantTitles(0, 2); !slices.Equal(got, append(want, "message 4")) {
		t.Errorf("items after the next sync: got %q, want INBOX's only", got)
	}
	if _, removed := f.ix.take(); len(removed) != 2 {
		t.Errorf("removed from the index: got %q, want Archive's two items", removed)
	}
}
