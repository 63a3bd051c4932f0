package gmail_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/gmail"
	"searchsvc/integrations/gmail/gmailtest"
)

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		retryAfter string
		code       string
		wait       time.Duration
		temporary  bool
	}{
		{"rate limited", http.StatusTooManyRequests, "7", "rateLimitExceeded", 7 * time.Second, true},
		{"rate limited until a date", http.StatusTooManyRequests, now.Add(time.Minute).Format(http.TimeFormat), "rateLimitExceeded", time.Minute, true},
		{"backend error", http.StatusInternalServerError, "", "backendError", 0, true},
		{"unavailable", http.StatusServiceUnavailable, "30", "backendError", 30 * time.Second, true},
		{"forbidden", http.StatusForbidden, "", "insufficientPermissions", 0, false},
	}
	tasks := []integrations.Task{
		{Type: integrations.TaskGetEmailList},
		{Type: integrations.TaskDownloadEmail, Payload: map[string]string{"emailId": gmailtest.ID(1)}},
	}
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 1})
	in := fx.instance(t, now, nil)
	for _, tt := range tests {
		for _, task := range tasks {
			t.Run(tt.name+"/"+task.Type, func(t *testing.T) {
				fx.api.Fail(1, tt.status, tt.retryAfter)
				_, err := in.RunTask(context.Background(), task)
				var ae *integrations.APIError
				if !errors.As(err, &ae) {
					t.Fatalf("got %v, want *APIError", err)
				}
				if ae.Status != tt.status || ae.Code != tt.code || ae.RetryAfter != tt.wait || ae.Temporary() != tt.temporary {
					t.Errorf("got %+v (temporary %v), want %d %s after %v (temporary %v)", ae, ae.Temporary(), tt.status, tt.code, tt.wait, tt.temporary)
				}
				if strings.Contains(err.Error(), fx.creds.AccessToken) || strings.Contains(err.Error(), "limit exceeded") {
					t.Errorf("error %q leaks the token or the body", err)
				}
			})
		}
	}

	t.Run("message gone", func(t *testing.T) {
		_, err := in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskDownloadEmail,
			Payload: map[string]string{"emailId": gmailtest.ID(99)}})
		var ae *integrations.APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Code != "notFound" || ae.Temporary() {
			t.Errorf("got %v, want a 404 notFound APIError", err)
		}
	})

	t.Run("revoked access token", func(t *testing.T) {
		fx.google.Kill(fx.creds.AccessToken)
		for _, task := range tasks {
			_, err := in.RunTask(context.Background(), task)
			var ae *integrations.APIError
			if !errors.As(err, &ae) || !ae.Unauthorized() || ae.Code != "authError" || ae.Temporary() {
				t.Errorf("%s: got %v, want an Unauthorized APIError", task.Type, err)
			}
		}
	})
}

// TestBadAnswers checks answers Gmail does not give: each fails its task
// with a clear error.
func TestBadAnswers(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 1})
	answer := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}
	}
	const path = "GET /gmail/v1/users/me/messages/"
	fx.google.Mux.HandleFunc(path+"badbase64", answer(`{"id":"badbase64","raw":"!!not*base64"}`))
	fx.google.Mux.HandleFunc(path+"badjson", answer(`{"id":"badjson","raw":`))
	fx.google.Mux.HandleFunc(path+"other", answer(`{"id":"another","raw":"U3ViamVjdDogeA=="}`))
	fx.google.Mux.HandleFunc(path+"noraw", answer(`{"id":"noraw"}`))
	fx.google.Mux.HandleFunc(path+"escaped", answer(`{"id":"escaped","raw":"U3ViamVjdDogeA\u003d\u003d"}`))
	fx.google.Mux.HandleFunc(path+"huge", func(w http.ResponseWriter, r *http.Request) {
		// Announced: refused before reading. (A raw field that decodes to
		// more than the limit is checked in rawMessage's own test.)
		w.Header().Set("Content-Length", fmt.Sprint(gmail.MaxMessageSize*2))
		io.WriteString(w, `{"id":"huge","raw":"`)
	})
	in := fx.instance(t, now, nil)
	download := func(id string) (integrations.TaskResult, error) {
		return in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskDownloadEmail,
			Payload: map[string]string{"emailId": id}})
	}
	for id, want := range map[string]error{
		"badbase64": gmail.ErrBadResponse,
		"badjson":   gmail.ErrBadResponse,
		"other":     gmail.ErrBadResponse,
		"noraw":     gmail.ErrBadResponse,
	} {
		if _, err := download(id); !errors.Is(err, want) {
			t.Errorf("%s: got %v, want %v", id, err, want)
		}
	}
	// A message over the limit is not fetched: it becomes a placeholder
	// item, so that it is known and not downloaded again each poll.
	if res, err := download("huge"); err != nil || len(res.Output) != 1 || res.Output[0].ProviderID != "huge" ||
		len(res.Output[0].Raw) != 0 || !strings.Contains(res.Output[0].Title, "not downloaded") {
		t.Errorf("huge: got %+v, %v; want a placeholder item", res, err)
	}
	if res, err := download("escaped"); err != nil || res.Output[0].Title != "x" {
		t.Errorf("escaped JSON string: got %+v, %v; want subject x", res, err)
	}

}

func TestBadListAnswers(t *testing.T) {
	g := newFakeGoogle(t, nil)
	var body atomic.Value
	g.Mux.HandleFunc("GET /gmail/v1/users/me/messages", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body.Load().(string))
	})
	p := g.provider(t)
	creds, err := connect(t, g, p)
	if err != nil {
		t.Fatal(err)
	}
	in := instance(t, p, creds, func() time.Time { return now }, nil)
	list := func(answer string) (integrations.TaskResult, error) {
		body.Store(answer)
		return in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskGetEmailList})
	}
	for _, answer := range []string{`not json`, `{"messages":[{"id":1}]}`, `{"messages":[],"nextPageToken":"a b"}`, `{"messages":`} {
		if _, err := list(answer); !errors.Is(err, gmail.ErrBadResponse) {
			t.Errorf("%s: got %v, want ErrBadResponse", answer, err)
		}
	}
	// Ids that cannot be Gmail's are skipped, repeated ones listed once.
	res, err := list(`{"messages":[{"id":"../x"},{"id":"ok1"},{"id":""},{"id":"ok1"}],"resultSizeEstimate":4}`)
	if err != nil || len(res.Tasks) != 1 || res.Tasks[0].Payload["emailIds"] != "ok1" {
		t.Errorf("got %+v, %v; want one download of ok1", res, err)
	}
	// An empty page that says there is more: go on.
	res, err = list(`{"nextPageToken":"123","resultSizeEstimate":0}`)
	if err != nil || len(res.Tasks) != 1 || res.Tasks[0].Payload["pageToken"] != "123" {
		t.Errorf("got %+v, %v; want the next page", res, err)
	}
}

func TestHostilePayloads(t *testing.T) {
	fx := newMailboxFixture(t, gmailtest.Options{Messages: 1})
	in := fx.instance(t, now, nil)
	for _, id := range []string{"", "../profile", "..%2fprofile", "a b", "id?format=full", "a/b", "ü", strings.Repeat("a", 65)} {
		_, err := in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskDownloadEmail,
			Payload: map[string]string{"emailId": id}})
		if !errors.Is(err, gmail.ErrInvalidPayload) {
			t.Errorf("emailId %q: got %v, want ErrInvalidPayload", id, err)
		}
	}
	for _, tok := range []string{"a b", "x\ny", strings.Repeat("1", 513)} {
		_, err := in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskGetEmailList,
			Payload: map[string]string{"pageToken": tok}})
		if !errors.Is(err, gmail.ErrInvalidPayload) {
			t.Errorf("pageToken %q: got %v, want ErrInvalidPayload", tok, err)
		}
	}
	if lists, gets := fx.api.Requests(); lists+gets != 0 {
		t.Errorf("%d requests made for hostile payloads, want none", lists+gets)
	}
	if _, err := in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskDownloadEmail}); !errors.Is(err, gmail.ErrInvalidPayload) {
		t.Errorf("downloadEmail without emailId: got %v, want ErrInvalidPayload", err)
	}
}
