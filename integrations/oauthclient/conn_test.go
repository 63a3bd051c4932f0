package oauthclient_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
)

func TestNewOAuthConnNeedsProvider(t *testing.T) {
	_, err := oauthclient.NewOAuthConn("acme", integrations.Env{})
	if err == nil || err.Error() != "acme: instance needs the OAuth provider" {
		t.Errorf("got %v, want the domain named", err)
	}
}

// TestTokenEndpointRetryAfter: a 429 from the token endpoint keeps its
// Retry-After in the TokenError, for the sync's backoff (the sync
// package's test of the same name checks the backoff uses it).
func TestTokenEndpointRetryAfter(t *testing.T) {
	resp := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"90"}},
		Body: io.NopCloser(strings.NewReader(`{"error":"rate_limited"}`))}
	resp.Header.Set("Content-Type", "application/json")
	te := oauthclient.ReadError(resp)
	if te.RetryAfter != 90*time.Second || te.Code != "rate_limited" {
		t.Fatalf("ReadError: got %+v, want code rate_limited and Retry-After 90 s", te)
	}
}
