package gmail_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"searchsvc/integrations"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
)

// ids joins the Gmail ids of seqs as a downloadEmails payload.
func ids(seqs ...int) string {
	var s []string
	for _, seq := range seqs {
		s = append(s, gmailtest.ID(seq))
	}
	return strings.Join(s, ",")
}

func downloadMany(in integrations.Integration, list string) (integrations.TaskResult, error) {
	return in.RunTask(context.Background(), integrations.Task{Type: gmail.TaskDownloadEmails,
		Payload: map[string]string{"emailIds": list}})
}

// outputIDs returns the provider ids of res's items.
func outputIDs(res integrations.TaskResult) string {
	var s []string
	for _, it := range res.Output {
		s = append(s, it.ProviderID)
	}
	return strings.Join(s, ",")
}

func TestDownloadEmailsKeepsWhatItGot(t *testing.T) {
	var failing atomic.Int64 // the seq whose download answers 500; 0: none
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 4, Fault: func(r *http.Request) (int, string) {
		if seq := failing.Load(); seq != 0 && strings.HasSuffix(r.URL.Path, "/"+gmailtest.ID(int(seq))) {
			return http.StatusInternalServerError, ""
		}
		return 0, ""
	}})
	in := fx.instance(t, now, nil)

	// All well: every message, in order, and nothing left.
	res, err := downloadMany(in, ids(4, 2, 3))
	if err != nil || outputIDs(res) != ids(4, 2, 3) || len(res.Tasks) != 0 {
		t.Fatalf("got items %s, tasks %+v, %v; want 4, 2, 3 and no task", outputIDs(res), res.Tasks, err)
	}

	// A failure after the first message keeps the messages before it;
	// the rest is a task of its own.
	failing.Store(3)
	res, err = downloadMany(in, ids(1, 2, 3, 4))
	want := []integrations.Task{{Type: gmail.TaskDownloadEmails, Payload: map[string]string{"emailIds": ids(3, 4)}, Items: 2}}
	if err != nil || outputIDs(res) != ids(1, 2) || !sameTasks(res.Tasks, want) {
		t.Fatalf("failure at the third: got items %s, tasks %+v, %v; want 1, 2 and %+v", outputIDs(res), res.Tasks, err, want)
	}

	// A failure at the first message makes it a downloadEmail task of
	// its own, which fails with that message's retries, and the rest
	// waits behind it.
	res, err = downloadMany(in, ids(3, 4))
	want = []integrations.Task{
		{Type: integrations.TaskDownloadEmail, Payload: map[string]string{"emailId": gmailtest.ID(3)}},
		{Type: gmail.TaskDownloadEmails, Payload: map[string]string{"emailIds": ids(4)}, Items: 1},
	}
	if err != nil || len(res.Output) != 0 || !sameTasks(res.Tasks, want) {
		t.Fatalf("failure at the first: got items %s, tasks %+v, %v; want none and %+v", outputIDs(res), res.Tasks, err, want)
	}
	// A task of one message fails as that message does.
	var ae *integrations.APIError
	if _, err := downloadMany(in, ids(3)); !errors.As(err, &ae) || ae.Status != http.StatusInternalServerError {
		t.Fatalf("failure of the only message: got %v, want its 500", err)
	}

	for _, bad := range []string{"", ids(1) + ",", ids(1) + ",../x", strings.Repeat(gmailtest.ID(1)+",", 500) + gmailtest.ID(1)} {
		if _, err := downloadMany(in, bad); !errors.Is(err, gmail.ErrInvalidPayload) {
			t.Errorf("emailIds %.40q: got %v, want ErrInvalidPayload", bad, err)
		}
	}
}

// A run stops after 8 MiB of raw mail: what is left follows as a task.
func TestDownloadEmailsBoundsWhatItHolds(t *testing.T) {
	big := append([]byte("From: a@example.com\r\nSubject: big\r\n\r\n"), bytes.Repeat([]byte("x"), 3<<20)...)
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 4, Message: func(int) []byte { return big }})
	res, err := downloadMany(fx.instance(t, now, nil), ids(1, 2, 3, 4))
	want := []integrations.Task{{Type: gmail.TaskDownloadEmails, Payload: map[string]string{"emailIds": ids(4)}, Items: 1}}
	if err != nil || outputIDs(res) != ids(1, 2, 3) || !sameTasks(res.Tasks, want) {
		t.Fatalf("got items %s, tasks %+v, %v; want 1, 2, 3 (9 MiB) and %+v", outputIDs(res), res.Tasks, err, want)
	}
}

func sameTasks(got, want []integrations.Task) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Type != w.Type || g.Items != w.Items || len(g.Payload) != len(w.Payload) {
			return false
		}
		for k, v := range w.Payload {
			if g.Payload[k] != v {
				return false
			}
		}
	}
	return true
}
