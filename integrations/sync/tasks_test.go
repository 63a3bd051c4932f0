package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

func TestBackoff(t *testing.T) {
	for attempts := 1; attempts <= 25; attempts++ {
		ceil := backoffCap
		if attempts < 20 {
			ceil = min(backoffBase<<(attempts-1), backoffCap)
		}
		lo := backoff(attempts, func(int64) int64 { return 0 })
		hi := backoff(attempts, func(n int64) int64 { return n - 1 })
		if lo != ceil/2 || hi != ceil || lo > hi {
			t.Errorf("attempt %d: got [%v, %v], want [%v, %v]", attempts, lo, hi, ceil/2, ceil)
		}
	}
	for range 1000 {
		if d := backoff(3, cryptoRand); d < 60*time.Second || d > 120*time.Second {
			t.Fatalf("backoff(3) with crypto/rand: got %v, want within [60s, 120s]", d)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		shutdown   bool
		class      failClass
		msg        string
		retryAfter time.Duration
	}{
		{"revoked refresh token", fmt.Errorf("refresh: %w", integrations.ErrReauthRequired), false, failReauth, "connect it again", 0},
		{"invalid_grant", &integrations.TokenError{Status: 400, Code: "invalid_grant"}, false, failReauth, "connect it again", 0},
		{"invalid_client", &integrations.TokenError{Status: 401, Code: "invalid_client"}, false, failReauth, "connect it again", 0},
		{"token endpoint 400", &integrations.TokenError{Status: 400}, false, failReauth, "connect it again", 0},
		{"token endpoint 503", &integrations.TokenError{Status: 503, Code: "temporarily_unavailable"}, false, failTemporary, "token endpoint answered 503", 0},
		{"token endpoint 429", &integrations.TokenError{Status: 429}, false, failTemporary, "answered 429", 0},
		{"API 401", &integrations.APIError{Status: 401}, false, failReauth, "connect it again", 0},
		{"API 429", &integrations.APIError{Status: 429, RetryAfter: time.Minute}, false, failTemporary, "acme answered 429; will retry", time.Minute},
		{"API 500", fmt.Errorf("list: %w", &integrations.APIError{Status: 500}), false, failTemporary, "acme answered 500", 0},
		{"API 404", &integrations.APIError{Status: 404}, false, failGone, "", 0},
		{"skip", fmt.Errorf("gmail downloadEmail: %w: %w", integrations.ErrSkip, errors.New("too large")), false, failGone, "", 0},
		{"API 403", &integrations.APIError{Status: 403, Code: "forbidden"}, false, failPermanent, "acme answered 403", 0},
		{"network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, false, failTemporary, "could not reach acme", 0},
		{"task timeout", context.DeadlineExceeded, false, failTemporary, "could not reach acme", 0},
		{"shutdown", fmt.Errorf("get: %w", context.Canceled), true, failPark, "", 0},
		{"store closed", storage.ErrClosed, false, failPark, "", 0},
		{"reconnected meanwhile", records.ErrCredentialsChanged, false, failPark, "", 0},
		{"unsupported", integrations.ErrUnsupportedTask, false, failPermanent, "this server does not know a sync step of acme (a bug, logged); the sync stopped", 0},
		{"not configured", &integrations.NotConfiguredError{Var: "ACME_OAUTH_CLIENT_ID"}, false, failTemporary, "ACME_OAUTH_CLIENT_ID not configured", 0},
		{"sealed with an unknown key", vault.ErrUnknownKey, false, failTemporary, "key", 0},
		{"credentials do not open", vault.ErrCannotOpen, false, failReauth, "connect it again", 0},
		{"anything else", errors.New("parse: unexpected < in body access_token=abc"), false, failPermanent, "a sync step with acme failed", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := classify(tc.err, "acme", tc.shutdown)
			if f.class != tc.class || f.retryAfter != tc.retryAfter {
				t.Errorf("got class %d retryAfter %v, want %d %v", f.class, f.retryAfter, tc.class, tc.retryAfter)
			}
			if tc.msg != "" && !strings.Contains(f.msg, tc.msg) {
				t.Errorf("message: got %q, want it to contain %q", f.msg, tc.msg)
			}
			if strings.Contains(f.msg, "abc") || strings.Contains(f.msg, "<") {
				t.Errorf("message %q repeats the error's text", f.msg)
			}
		})
	}
}

func TestStartDue(t *testing.T) {
	s := &Syncer{cfg: Config{PollInterval: time.Hour}}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	tests := []struct {
		name string
		rec  records.Record
		due  bool
		next time.Time
	}{
		{"never synced", records.Record{Status: records.StatusConnected, ConnectedAt: now}, true, time.Time{}},
		{"synced recently", records.Record{Status: records.StatusConnected, LastSyncAt: at(-time.Minute)}, false, now.Add(59 * time.Minute)},
		{"interval passed", records.Record{Status: records.StatusConnected, LastSyncAt: at(-time.Hour)}, true, time.Time{}},
		{"failed recently", records.Record{Status: records.StatusError, LastSyncAt: at(-2 * time.Hour), UpdatedAt: now.Add(-time.Minute)}, false, now.Add(59 * time.Minute)},
		{"failed long ago", records.Record{Status: records.StatusError, UpdatedAt: now.Add(-2 * time.Hour)}, true, time.Time{}},
		{"clock went back", records.Record{Status: records.StatusConnected, LastSyncAt: at(48 * time.Hour)}, true, time.Time{}},
		{"needs reauth", records.Record{Status: records.StatusNeedsReauth}, false, time.Time{}},
		{"disconnected", records.Record{Status: records.StatusDisconnected, DeletedAt: at(0)}, false, time.Time{}},
	}
	for _, tc := range tests {
		due, next := s.startDue(&tc.rec, now)
		if due != tc.due || !next.Equal(tc.next) {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, due, next, tc.due, tc.next)
		}
	}
}

func TestSyncReconnectDuringSyncKeepsNewCredentials(t *testing.T) {
	f := newSyncFixture(t, 1)
	f.mail.Fill("kim", 5, f.clock.Now())
	rec, creds := f.connect("u1", "kim")
	var fresh integrations.Credentials
	// After the first page is listed, the user reconnects and the
	// provider refuses the old access token: the sync's refresh of the old
	// grant must not overwrite the new credentials.
	f.mail.OnList = func(string, string) {
		f.mail.OnList = nil
		_, fresh = f.connect("u1", "kim")
		f.mail.Reject[creds.AccessToken] = true
	}
	f.runOnce()
	stored, err := f.records.Credentials(f.record(rec.ID))
	if err != nil {
		t.Fatal(err)
	}
	if stored.RefreshToken != fresh.RefreshToken || stored.AccessToken != fresh.AccessToken {
		t.Fatal("the sync overwrote the credentials of the reconnect")
	}
	if !strings.Contains(f.logs.String(), "task parked") {
		t.Errorf("the sync did not stop at the changed credentials; log:\n%s", f.logs)
	}
	f.wantStatus(rec, records.StatusConnected, "")
	f.runOnce()
	if got := f.wantStatus(rec, records.StatusConnected, ""); got.ItemsSynced != 5 {
		t.Errorf("itemsSynced: got %d, want 5", got.ItemsSynced)
	}
}

// TestTokenEndpointRetryAfter: a 429 from the token endpoint carries its
// Retry-After into the task's backoff, as a 429 from the API does.
func TestTokenEndpointRetryAfter(t *testing.T) {
	resp := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"90"}},
		Body: io.NopCloser(strings.NewReader(`{"error":"rate_limited"}`))}
	resp.Header.Set("Content-Type", "application/json")
	te := integrations.ReadError(resp)
	f := classify(fmt.Errorf("refresh: %w", te), "acme", false)
	if f.class != failTemporary || f.retryAfter != 90*time.Second {
		t.Errorf("classify: got class %v retryAfter %v, want temporary after 90 s", f.class, f.retryAfter)
	}
	if f := classify(&integrations.TokenError{Status: 400, Code: "invalid_grant"}, "acme", false); f.class != failReauth {
		t.Errorf("invalid_grant: got class %v, want reauth", f.class)
	}
}
