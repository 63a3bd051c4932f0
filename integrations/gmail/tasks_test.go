package gmail_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
	"searchsvc/integrations/mail"
	"searchsvc/integrations/oauthclient"
)

// mailboxFixture is a connected Gmail account on a fake Google: OAuth
// server and Gmail API on one server.
type mailboxFixture struct {
	google *fakeGoogle
	api    *gmailtest.Server
	p      *oauthclient.Provider
	creds  integrations.Credentials
	bearer atomic.Value // the last Authorization header the API saw
}

func newMailboxFixture(t *testing.T, opts gmailtest.Options) *mailboxFixture {
	t.Helper()
	fx := &mailboxFixture{google: newFakeGoogle(t, nil)}
	opts.Mux, opts.URL = fx.google.Mux, fx.google.URL
	opts.Authorized = func(r *http.Request) bool {
		fx.bearer.Store(r.Header.Get("Authorization"))
		return fx.google.Bearer(r)
	}
	opts.NoProfile = true
	fx.api = gmailtest.New(t, opts)
	fx.google.mailbox.Store(fx.api)
	fx.p = fx.google.provider(t)
	var err error
	if fx.creds, err = connect(t, fx.google, fx.p); err != nil {
		t.Fatal(err)
	}
	return fx
}

// instance builds a connected instance at the given time, knowing what
// st holds and starting from its sync state; st nil: nothing.
func (fx *mailboxFixture) instance(t *testing.T, at time.Time, st *store) integrations.Integration {
	t.Helper()
	fx.p.Now = func() time.Time { return at }
	env := integrations.Env{
		Credentials: fx.creds,
		Provider:    fx.p,
		Now:         func() time.Time { return at },
	}
	if st != nil {
		env.Known, env.State = st.known, st.syncState
	}
	in, err := gmail.Definition().New(env)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// store plays the sync scheduler and the item store: it runs a sync's
// tasks, first in first out, keeps the items by provider id, removes
// those reported deleted, and keeps the sync state.
type store struct {
	items map[string]integrations.Item
	tasks map[string]int // tasks run, by type
	state string
}

func newStore(ids ...string) *store {
	s := &store{items: make(map[string]integrations.Item), tasks: make(map[string]int)}
	for _, id := range ids {
		s.items[id] = integrations.Item{ProviderID: id}
	}
	return s
}

func (s *store) known(id string) bool {
	_, ok := s.items[id]
	return ok
}

func (s *store) syncState(string) string { return s.state }

func (s *store) sync(ctx context.Context, in integrations.Integration) error {
	return s.run(ctx, in, integrations.Task{Type: integrations.TaskStart})
}

// run runs task and its follow-ups.
func (s *store) run(ctx context.Context, in integrations.Integration, task integrations.Task) error {
	queue := []integrations.Task{task}
	for len(queue) > 0 {
		task := queue[0]
		queue = queue[1:]
		s.tasks[task.Type]++
		res, err := in.RunTask(ctx, task)
		if err != nil {
			return fmt.Errorf("task %v: %w", task, err)
		}
		for _, it := range res.Output {
			s.items[it.ProviderID] = it
		}
		for _, id := range res.Removed {
			delete(s.items, id)
		}
		if res.State["mailbox"] != "" {
			s.state = res.State["mailbox"]
		}
		queue = append(queue, res.Tasks...)
	}
	return nil
}

func TestStartTakesTheHistoryIDThenLists(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 3})
	st := newStore()
	res, err := fx.instance(t, now, st).RunTask(context.Background(), integrations.Task{Type: integrations.TaskStart})
	want := fmt.Sprintf(`{"h":"%d","l":true}`, fx.api.HistoryID())
	if err != nil || len(res.Output) != 0 || len(res.Tasks) != 1 || res.Tasks[0].Type != integrations.TaskGetEmailList ||
		len(res.Tasks[0].Payload) != 0 || res.State["mailbox"] != want {
		t.Errorf("start: got %+v, %v; want one getEmailList and state %s", res, err, want)
	}
	if c := fx.api.Counts(); c != (gmailtest.Counts{Profiles: 1}) {
		t.Errorf("start made %+v, want one profile request", c)
	}
}

func TestFirstSyncListsThenHistoryFetchesOnlyWhatIsNew(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 250})
	st := newStore()
	ctx := context.Background()
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	if c := fx.api.Counts(); c != (gmailtest.Counts{Profiles: 1, Lists: 3, Gets: 250}) || len(st.items) != 250 {
		t.Errorf("first sync: got %+v, %d items; want 1 profile, 3 lists, 250 gets, 250 items", c, len(st.items))
	}
	if got, want := fx.api.MaxResults(), fmt.Sprint(gmail.PageSize); got != want {
		t.Errorf("maxResults: got %s, want %s", got, want)
	}
	if want := fmt.Sprintf(`{"h":"%d"}`, fx.api.HistoryID()); st.state != want {
		t.Errorf("state after the listing: got %s, want %s", st.state, want)
	}
	for _, seq := range []int{1, 100, 101, 250} {
		it := st.items[gmailtest.ID(seq)]
		if it.Title != gmailtest.Subject(seq) || !it.Date.Equal(gmailtest.Date(seq)) || it.Size != int64(len(gmailtest.Message(seq))) ||
			it.Link != gmail.WebURL+gmailtest.ID(seq) || it.Thread != gmailtest.ThreadID(seq) || len(it.Refs) != 1 || it.Refs[0] != it.Thread {
			t.Errorf("item %d: got %q %v %d %q thread %q %q; want %q %v %d thread %q", seq, it.Title, it.Date, it.Size, it.Link, it.Thread, it.Refs,
				gmailtest.Subject(seq), gmailtest.Date(seq), len(gmailtest.Message(seq)), gmailtest.ThreadID(seq))
		}
	}

	// 30 new messages: one history request, 30 downloads, no listing.
	fx.api.Add(30)
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	if c := fx.api.Counts(); c != (gmailtest.Counts{Profiles: 1, Lists: 3, Gets: 280, Histories: 1}) || len(st.items) != 280 {
		t.Errorf("second sync: got %+v, %d items; want 1 history request and 30 more gets, 280 items", c, len(st.items))
	}

	// Nothing new: one history request, no download.
	if err := st.sync(ctx, fx.instance(t, now, st)); err != nil {
		t.Fatal(err)
	}
	if c := fx.api.Counts(); c != (gmailtest.Counts{Profiles: 1, Lists: 3, Gets: 280, Histories: 2}) {
		t.Errorf("third sync: got %+v; want one more history request and nothing else", c)
	}
}

func TestListSkipsKnownAndListsEveryPage(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 250})
	ctx := context.Background()
	list := integrations.Task{Type: integrations.TaskGetEmailList}

	// Every other message is known.
	var even []string
	for seq := 2; seq <= 250; seq += 2 {
		even = append(even, gmailtest.ID(seq))
	}
	st := newStore(even...)
	res, err := fx.instance(t, now, st).RunTask(ctx, list)
	if err != nil {
		t.Fatal(err)
	}
	var downloads []string
	var next string
	for _, task := range res.Tasks {
		switch task.Type {
		case gmail.TaskDownloadEmails:
			ids := strings.Split(task.Payload["emailIds"], ",")
			if task.Items != len(ids) {
				t.Errorf("downloadEmails of %d ids: Items %d", len(ids), task.Items)
			}
			downloads = append(downloads, ids...)
		case integrations.TaskGetEmailList:
			next = task.Payload["pageToken"]
		}
	}
	if len(res.Tasks) != 2 || len(downloads) != 50 || next == "" || res.Tasks[len(res.Tasks)-1].Type != integrations.TaskGetEmailList {
		t.Errorf("half known: got %d tasks, %d downloads and next page %q; want one download task of 50 and a follow-up list last",
			len(res.Tasks), len(downloads), next)
	}
	if slices.ContainsFunc(downloads, st.known) || downloads[0] != gmailtest.ID(250-1) {
		t.Errorf("downloads %v: want the unknown ids, newest first", downloads[:3])
	}
	if want := `{"l":true,"p":"` + next + `","n":1}`; res.State["mailbox"] != want || strings.Count(res.State["listed.0"], ",") != 99 {
		t.Errorf("state: got %s, want %s", res.State["mailbox"], want)
	}

	// A page where all is known still gives the next page: mail older
	// than what is stored may be behind it.
	all := newStore()
	for seq := 1; seq <= 250; seq++ {
		all.items[gmailtest.ID(seq)] = integrations.Item{}
	}
	res, err = fx.instance(t, now, all).RunTask(ctx, integrations.Task{
		Type: integrations.TaskGetEmailList, Payload: map[string]string{"pageToken": next}})
	if err != nil || len(res.Tasks) != 1 || res.Tasks[0].Type != integrations.TaskGetEmailList || len(res.Output) != 0 {
		t.Errorf("all known: got %+v, %v; want only the next page", res, err)
	}

	// The last page has no next page token and ends the listing.
	res, err = fx.instance(t, now, nil).RunTask(ctx, integrations.Task{
		Type: integrations.TaskGetEmailList, Payload: map[string]string{"pageToken": "50"}})
	if err != nil || len(res.Tasks) != 1 || res.Tasks[0].Type != gmail.TaskDownloadEmails || res.Tasks[0].Items != 50 || res.State["mailbox"] != `{}` {
		t.Errorf("last page: got %+v, %v, state %s; want one task of 50 downloads, no follow-up, the listing ended", res.Tasks, err, res.State["mailbox"])
	}

	// An empty mailbox.
	empty := newMailboxFixture(t, gmailtest.Options{})
	res, err = empty.instance(t, now, nil).RunTask(ctx, list)
	if err != nil || len(res.Tasks) != 0 {
		t.Errorf("empty mailbox: got %+v, %v; want nothing to do", res, err)
	}
}

func TestExpiredTokenRefreshedOnceByInitialize(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 120})
	before := fx.google.TokenRequests()
	later := now.Add(2 * time.Hour) // the access token expired an hour ago
	st := newStore()
	in := fx.instance(t, later, st)
	ctx := context.Background()
	if err := in.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fx.google.TokenRequests() - before; got != 1 {
		t.Fatalf("Initialize made %d token requests, want 1", got)
	}
	if err := st.sync(ctx, in); err != nil {
		t.Fatal(err)
	}
	if got := fx.google.TokenRequests() - before; got != 1 || len(st.items) != 120 {
		t.Errorf("after the sync: %d token requests, %d items; want 1, 120", got, len(st.items))
	}
	if got := fx.bearer.Load().(string); got == "Bearer "+fx.creds.AccessToken || !fx.google.Live(strings.TrimPrefix(got, "Bearer ")) {
		t.Errorf("the API saw the old token or a dead one, want the refreshed one")
	}
}

func TestRevokedRefreshTokenNeedsReauth(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 1})
	fx.google.Kill(fx.creds.RefreshToken)
	in := fx.instance(t, now.Add(2*time.Hour), nil)
	err := in.Initialize(context.Background())
	var te *oauthclient.TokenError
	if !errors.Is(err, integrations.ErrReauthRequired) || !errors.As(err, &te) || te.Code != "invalid_grant" {
		t.Errorf("Initialize: got %v, want ErrReauthRequired from invalid_grant", err)
	}
	_, err = in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskGetEmailList})
	if !errors.Is(err, integrations.ErrReauthRequired) {
		t.Errorf("RunTask: got %v, want ErrReauthRequired", err)
	}
	if lists, _ := fx.api.Requests(); lists != 0 {
		t.Errorf("%d list requests with a dead token, want 0", lists)
	}
}

const multipartMessage = "From: =?UTF-8?Q?Ren=C3=A9e?= <renee@example.fr>\r\n" +
	"To: me@example.com, Bob <bob@example.com>\r\n" +
	"Cc: team@example.com\r\n" +
	"Subject: =?ISO-8859-1?Q?R=E9sum=E9?= attached\r\n" +
	"Date: Tue, 14 Apr 2026 09:30:00 +0200\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=\"outer\"\r\n" +
	"\r\n" +
	"--outer\r\n" +
	"Content-Type: multipart/alternative; boundary=\"inner\"\r\n" +
	"\r\n" +
	"--inner\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"TW9uIENWIGVzdCBlbiBwacOoY2Ugam9pbnRlLg==\r\n" +
	"--inner\r\n" +
	"Content-Type: text/html; charset=utf-8\r\n" +
	"\r\n" +
	"<p>Mon CV</p>\r\n" +
	"--inner--\r\n" +
	"--outer\r\n" +
	"Content-Type: application/pdf; name=cv.pdf\r\n" +
	"Content-Disposition: attachment; filename=cv.pdf\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"JVBERi0xLjQK\r\n" +
	"--outer--\r\n"

func TestDownloadEmail(t *testing.T) {
	messages := map[int]string{
		1: multipartMessage,
		2: "From: a@example.com\r\nSubject: no date\r\n\r\nbody\r\n",
		3: "this is not a message",
	}
	for _, unpadded := range []bool{false, true} {
		t.Run(fmt.Sprintf("unpadded=%v", unpadded), func(t *testing.T) {
			fx := newMailboxFixture(t, gmailtest.Options{Messages: 3, Unpadded: unpadded,
				Message: func(seq int) []byte { return []byte(messages[seq]) }})
			in := fx.instance(t, now, nil)
			download := func(seq int) (integrations.TaskResult, error) {
				return in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskDownloadEmail,
					Payload: map[string]string{"emailId": gmailtest.ID(seq)}})
			}

			res, err := download(1)
			if err != nil || len(res.Output) != 1 || len(res.Tasks) != 0 {
				t.Fatalf("got %+v, %v; want one item", res, err)
			}
			it := res.Output[0]
			want := integrations.Item{
				ProviderID: gmailtest.ID(1),
				Title:      "Résumé attached",
				From:       "Renée <renee@example.fr>",
				To:         []string{"me@example.com", "Bob <bob@example.com>", "team@example.com"},
				Date:       time.Date(2026, 4, 14, 7, 30, 0, 0, time.UTC),
				Size:       int64(len(multipartMessage)),
				Text:       "Mon CV est en pièce jointe.",
			}
			if it.ProviderID != want.ProviderID || it.Title != want.Title || it.From != want.From ||
				!slices.Equal(it.To, want.To) || !it.Date.Equal(want.Date) || it.Size != want.Size || it.Text != want.Text {
				t.Errorf("got %+v,\nwant %+v", it, want)
			}
			if string(it.Raw) != multipartMessage {
				t.Errorf("Raw: got %d bytes, want the message's %d", len(it.Raw), len(multipartMessage))
			}

			// Without a Date header the date is when Gmail received it.
			res, err = download(2)
			if err != nil || !res.Output[0].Date.Equal(gmailtest.Date(2)) {
				t.Errorf("no Date header: got %+v, %v; want the internal date %v", res, err, gmailtest.Date(2))
			}

			if _, err := download(3); !errors.Is(err, mail.ErrMalformed) {
				t.Errorf("not a message: got %v, want mail.ErrMalformed", err)
			}
		})
	}
}

// standalone builds an instance on a gmailtest server of its own, with a
// token that never expires: the setup for benchmarks.
func standalone(tb testing.TB, opts gmailtest.Options, st *store) (*gmailtest.Server, integrations.Integration) {
	tb.Helper()
	api := gmailtest.New(tb, opts)
	in, err := gmail.Definition().New(integrations.Env{
		Credentials: api.Credentials(),
		Provider:    api.Provider(tb),
		Client:      api.Client(),
		Known:       st.known,
		State:       st.syncState,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return api, in
}

func TestStandaloneFake(t *testing.T) {
	st := newStore()
	api, in := standalone(t, gmailtest.Options{Messages: 7}, st)
	if err := st.sync(context.Background(), in); err != nil || len(st.items) != 7 {
		t.Fatalf("got %d items, %v; want 7", len(st.items), err)
	}
	wrong, err := gmail.Definition().New(integrations.Env{
		Credentials: integrations.Credentials{AccessToken: "wrong"},
		Provider:    api.Provider(t),
		Client:      api.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.RunTask(context.Background(), integrations.Task{Type: integrations.TaskGetEmailList})
	var ae *integrations.APIError
	if !errors.As(err, &ae) || !ae.Unauthorized() {
		t.Errorf("wrong token: got %v, want Unauthorized", err)
	}
}

// BenchmarkSync measures a first sync of 1,000 messages over loopback
// HTTP: list pages, downloads, base64 and MIME parsing.
func BenchmarkSync(b *testing.B) {
	const n = 1000
	b.ReportAllocs()
	for b.Loop() {
		st := newStore()
		_, in := standalone(b, gmailtest.Options{Messages: n}, st)
		if err := st.sync(context.Background(), in); err != nil || len(st.items) != n {
			b.Fatalf("got %d items, %v", len(st.items), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/message")
}
