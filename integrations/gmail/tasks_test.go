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
)

// mailboxFixture is a connected Gmail account on a fake Google: OAuth
// server and Gmail API on one server.
type mailboxFixture struct {
	google *fakeGoogle
	api    *gmailtest.Server
	p      *integrations.Provider
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
	fx.api = gmailtest.New(t, opts)
	fx.p = fx.google.provider(t)
	var err error
	if fx.creds, err = connect(t, fx.google, fx.p); err != nil {
		t.Fatal(err)
	}
	return fx
}

// instance builds a connected instance at the given time, knowing what
// known knows.
func (fx *mailboxFixture) instance(t *testing.T, at time.Time, known func(string) bool) integrations.Integration {
	t.Helper()
	fx.p.Now = func() time.Time { return at }
	in, err := gmail.Definition().New(integrations.Env{
		Credentials: fx.creds,
		Provider:    fx.p,
		Now:         func() time.Time { return at },
		Known:       known,
	})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// store plays the sync scheduler and the item store: it runs a sync's
// tasks, first in first out, and keeps the items by provider id.
type store struct {
	items map[string]integrations.Item
	tasks map[string]int // tasks run, by type
}

func newStore() *store {
	return &store{items: make(map[string]integrations.Item), tasks: make(map[string]int)}
}

func (s *store) known(id string) bool {
	_, ok := s.items[id]
	return ok
}

func (s *store) sync(ctx context.Context, in integrations.Integration) error {
	queue := []integrations.Task{{Type: integrations.TaskStart}}
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
		queue = append(queue, res.Tasks...)
	}
	return nil
}

func TestStartGivesOneList(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 3})
	res, err := fx.instance(t, now, nil).RunTask(context.Background(), integrations.Task{Type: integrations.TaskStart})
	want := []integrations.Task{{Type: integrations.TaskGetEmailList}}
	if err != nil || len(res.Output) != 0 || len(res.Tasks) != 1 || res.Tasks[0].Type != want[0].Type || len(res.Tasks[0].Payload) != 0 {
		t.Errorf("start: got %+v, %v; want only %+v", res, err, want)
	}
	if lists, gets := fx.api.Requests(); lists+gets != 0 {
		t.Errorf("start made %d requests, want none", lists+gets)
	}
}

func TestSyncPagesThenFetchesOnlyWhatIsNew(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 250})
	st := newStore()
	ctx := context.Background()
	if err := st.sync(ctx, fx.instance(t, now, st.known)); err != nil {
		t.Fatal(err)
	}
	if lists, gets := fx.api.Requests(); lists != 3 || gets != 250 || len(st.items) != 250 {
		t.Errorf("first sync: got %d lists, %d gets, %d items; want 3, 250, 250", lists, gets, len(st.items))
	}
	if got, want := fx.api.MaxResults(), fmt.Sprint(gmail.PageSize); got != want {
		t.Errorf("maxResults: got %s, want %s", got, want)
	}
	for _, seq := range []int{1, 100, 101, 250} {
		it := st.items[gmailtest.ID(seq)]
		if it.Title != gmailtest.Subject(seq) || !it.Date.Equal(gmailtest.Date(seq)) || it.Size != int64(len(gmailtest.Message(seq))) {
			t.Errorf("item %d: got %q %v %d; want %q %v %d", seq, it.Title, it.Date, it.Size,
				gmailtest.Subject(seq), gmailtest.Date(seq), len(gmailtest.Message(seq)))
		}
	}

	// 30 new messages: the first page holds them and 70 known ones, so the
	// second page is listed too; it holds only known ones, so paging stops.
	fx.api.Add(30)
	if err := st.sync(ctx, fx.instance(t, now, st.known)); err != nil {
		t.Fatal(err)
	}
	if lists, gets := fx.api.Requests(); lists != 3+2 || gets != 250+30 || len(st.items) != 280 {
		t.Errorf("second sync: got %d lists, %d gets, %d items; want 5, 280, 280", lists, gets, len(st.items))
	}

	// Nothing new: one list request, no download.
	if err := st.sync(ctx, fx.instance(t, now, st.known)); err != nil {
		t.Fatal(err)
	}
	if lists, gets := fx.api.Requests(); lists != 6 || gets != 280 {
		t.Errorf("third sync: got %d lists, %d gets; want 6, 280", lists, gets)
	}
}

func TestListSkipsKnownAndStopsAtAllKnownPage(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 250})
	ctx := context.Background()
	list := integrations.Task{Type: integrations.TaskGetEmailList}

	// Every other message of the first page is known.
	even := make(map[string]bool)
	for seq := 2; seq <= 250; seq += 2 {
		even[gmailtest.ID(seq)] = true
	}
	known := func(id string) bool { return even[id] }
	res, err := fx.instance(t, now, known).RunTask(ctx, list)
	if err != nil {
		t.Fatal(err)
	}
	var downloads []string
	var next string
	for _, task := range res.Tasks {
		switch task.Type {
		case integrations.TaskDownloadEmail:
			downloads = append(downloads, task.Payload["emailId"])
		case integrations.TaskGetEmailList:
			next = task.Payload["pageToken"]
		}
	}
	if len(downloads) != 50 || next == "" || res.Tasks[len(res.Tasks)-1].Type != integrations.TaskGetEmailList {
		t.Errorf("half known: got %d downloads and next page %q; want 50 and a follow-up list last", len(downloads), next)
	}
	if slices.ContainsFunc(downloads, known) || downloads[0] != gmailtest.ID(250-1) {
		t.Errorf("downloads %v: want the unknown ids, newest first", downloads[:3])
	}

	// The second page is all known: no task at all.
	res, err = fx.instance(t, now, func(string) bool { return true }).RunTask(ctx, integrations.Task{
		Type: integrations.TaskGetEmailList, Payload: map[string]string{"pageToken": next}})
	if err != nil || len(res.Tasks) != 0 || len(res.Output) != 0 {
		t.Errorf("all known: got %+v, %v; want nothing to do", res, err)
	}

	// The last page has no next page token.
	res, err = fx.instance(t, now, nil).RunTask(ctx, integrations.Task{
		Type: integrations.TaskGetEmailList, Payload: map[string]string{"pageToken": "50"}})
	if err != nil || len(res.Tasks) != 50 || res.Tasks[49].Type != integrations.TaskDownloadEmail {
		t.Errorf("last page: got %d tasks, %v; want 50 downloads and no follow-up", len(res.Tasks), err)
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
	in := fx.instance(t, later, st.known)
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
	var te *integrations.TokenError
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
func standalone(tb testing.TB, opts gmailtest.Options, known func(string) bool) (*gmailtest.Server, integrations.Integration) {
	tb.Helper()
	api := gmailtest.New(tb, opts)
	in, err := gmail.Definition().New(integrations.Env{
		Credentials: api.Credentials(),
		Provider:    api.Provider(tb),
		Client:      api.Client(),
		Known:       known,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return api, in
}

func TestStandaloneFake(t *testing.T) {
	st := newStore()
	api, in := standalone(t, gmailtest.Options{Messages: 7}, st.known)
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
		_, in := standalone(b, gmailtest.Options{Messages: n}, st.known)
		if err := st.sync(context.Background(), in); err != nil || len(st.items) != n {
			b.Fatalf("got %d items, %v", len(st.items), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/message")
}
