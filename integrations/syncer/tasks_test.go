package syncer

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/netguard"
	"searchsvc/integrations/oauthclient"
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

// TestClassify holds each failure class to its class and to the sentence
// the record shows: words a person understands, never the error's text.
func TestClassify(t *testing.T) {
	const (
		again  = " The sync will try again by itself."
		reauth = "Acme refused the stored authorization. Connect it again to resume syncing."
		net503 = "Acme could not be reached (network, name lookup or a timeout)." + again
	)
	tests := []struct {
		name       string
		err        error
		shutdown   bool
		class      failClass
		msg        string
		retryAfter time.Duration
	}{
		{"revoked refresh token", fmt.Errorf("refresh: %w", integrations.ErrReauthRequired), false, failReauth, reauth, 0},
		{"invalid_grant", &oauthclient.TokenError{Status: 400, Code: "invalid_grant"}, false, failReauth, reauth, 0},
		{"invalid_client", &oauthclient.TokenError{Status: 401, Code: "invalid_client"}, false, failReauth, reauth, 0},
		{"token endpoint 400", &oauthclient.TokenError{Status: 400}, false, failReauth, reauth, 0},
		{"token endpoint 503", &oauthclient.TokenError{Status: 503, Code: "temporarily_unavailable"}, false, failTemporary,
			"Acme's sign-in service did not renew the access (it answered 503)." + again, 0},
		{"API 401", &integrations.APIError{Status: 401}, false, failReauth, reauth, 0},
		{"API 429", &integrations.APIError{Status: 429, RetryAfter: time.Minute}, false, failTemporary,
			"Acme asked the sync to slow down (too many requests)." + again, time.Minute},
		{"API 500", fmt.Errorf("list: %w", &integrations.APIError{Status: 500}), false, failTemporary,
			"Acme is having trouble at the moment (it answered 500)." + again, 0},
		{"API 404", &integrations.APIError{Status: 404}, false, failGone, "", 0},
		{"skip", fmt.Errorf("gmail downloadEmail: %w: %w", integrations.ErrSkip, errors.New("too large")), false, failGone, "", 0},
		{"API 403", &integrations.APIError{Status: 403, Code: "forbidden"}, false, failPermanent,
			"Acme refused access (403). Check that the account still allows it, or connect it again.", 0},
		{"API 400", &integrations.APIError{Status: 400}, false, failPermanent,
			"Acme refused a request of the sync (it answered 400). It will be tried a few more times.", 0},
		{"network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, false, failTemporary, net503, 0},
		{"task timeout", context.DeadlineExceeded, false, failTemporary, net503, 0},
		{"shutdown", fmt.Errorf("get: %w", context.Canceled), true, failPark, "", 0},
		{"store closed", storage.ErrClosed, false, failPark, "", 0},
		{"reconnected meanwhile", records.ErrCredentialsChanged, false, failPark, "", 0},
		{"unsupported", integrations.ErrUnsupportedTask, false, failPermanent,
			"This version of searchsvc cannot run a step of the Acme sync. This is a bug: please report it.", 0},
		{"not configured", &oauthclient.NotConfiguredError{Var: "ACME_OAUTH_CLIENT_ID"}, false, failTemporary,
			"This server is not set up for Acme: the administrator must set ACME_OAUTH_CLIENT_ID.", 0},
		{"sealed with an unknown key", vault.ErrUnknownKey, false, failTemporary,
			"The stored credentials were sealed with a key this server no longer holds. The administrator must restore that key, or connect Acme again.", 0},
		{"credentials do not open", vault.ErrCannotOpen, false, failReauth, reauth, 0},
		{"item content not stored", fmt.Errorf("%w: %w", errStoreContent, errors.New("no space left on device")), false, failTemporary,
			"This server could not store the synced items (is its disk full?)." + again, 0},
		{"private address", fmt.Errorf("dial: %w", netguard.ErrPrivateAddress), false, failPermanent,
			"Acme's address is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true.", 0},
		{"unknown authority", &url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}, false, failPermanent,
			"Acme's server presented a certificate signed by an unknown authority. Give its CA certificate or its fingerprint in the connection form.", 0},
		{"a sentence from the integration", &integrations.ValidationError{Message: "the 2nd feed of 3 is not an RSS or Atom feed"}, false, failPermanent,
			"Acme: the 2nd feed of 3 is not an RSS or Atom feed.", 0},
		{"one feed of several refused", fmt.Errorf("%w: %w", integrations.ErrNextSync, &integrations.ValidationError{
			Message: "the feed number 2 of 3 could not be fetched: the server answered 401 Unauthorized", Err: &integrations.APIError{Status: 401}}),
			false, failPermanent, "Acme: the feed number 2 of 3 could not be fetched: the server answered 401 Unauthorized. The next sync tries again.", 0},
		{"next sync: 503", fmt.Errorf("%w: %w", integrations.ErrNextSync, &integrations.APIError{Status: 503, RetryAfter: time.Hour}), false, failTemporary,
			"Acme is having trouble at the moment (it answered 503). The next sync tries again.", 0},
		{"anything else", errors.New("parse: unexpected < in body access_token=abc"), false, failPermanent,
			"A step of the Acme sync failed unexpectedly. It will be tried a few more times.", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := classify(tc.err, "Acme", tc.shutdown)
			if f.class != tc.class || f.retryAfter != tc.retryAfter {
				t.Errorf("got class %d retryAfter %v, want %d %v", f.class, f.retryAfter, tc.class, tc.retryAfter)
			}
			if f.msg != tc.msg {
				t.Errorf("message:\n got %q\nwant %q", f.msg, tc.msg)
			}
			if wantDrop := errors.Is(tc.err, integrations.ErrNextSync) || errors.Is(tc.err, integrations.ErrUnsupportedTask); f.drop != wantDrop {
				t.Errorf("drop: got %v, want %v", f.drop, wantDrop)
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
	te := oauthclient.ReadError(resp)
	f := classify(fmt.Errorf("refresh: %w", te), "acme", false)
	if f.class != failTemporary || f.retryAfter != 90*time.Second {
		t.Errorf("classify: got class %v retryAfter %v, want temporary after 90 s", f.class, f.retryAfter)
	}
	if f := classify(&oauthclient.TokenError{Status: 400, Code: "invalid_grant"}, "acme", false); f.class != failReauth {
		t.Errorf("invalid_grant: got class %v, want reauth", f.class)
	}
}
