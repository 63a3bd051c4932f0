package oauthclient

import (
	"errors"
	"strconv"
	"time"
)

// NotConfiguredError reports an OAuth integration whose client id or secret
// is not set. Its message names the variable, for the administrator:
// "GMAIL_OAUTH_CLIENT_ID not configured".
type NotConfiguredError struct {
	Var string // the environment variable, e.g. GMAIL_OAUTH_CLIENT_SECRET
}

func (e *NotConfiguredError) Error() string { return e.Var + " not configured" }

// TokenError reports a token, refresh or revocation request that the
// provider answered with an error, or answered with something that is not a
// token response. Its text carries the status and the provider's error code,
// never a token, a code or a secret.
type TokenError struct {
	Status int    // HTTP status of the provider's answer
	Code   string // the provider's error code, e.g. invalid_grant; empty if none was given
	// Description is the provider's error_description. It is kept for logs
	// and is not part of Error's text, as a provider may echo input in it.
	Description string
	// RetryAfter is the provider's Retry-After (a 429 or 503); 0 if none.
	RetryAfter time.Duration
}

func (e *TokenError) Error() string {
	code := e.Code
	if code == "" {
		code = "no error code"
	}
	return "provider answered " + strconv.Itoa(e.Status) + ": " + code
}

// InvalidTokensError reports a token response that lacks a required field or
// carries an invalid one. Nothing from such a response may be stored.
type InvalidTokensError struct {
	Field  string // the token response field, e.g. refresh_token
	Reason string // what is wrong with it, e.g. "missing"
}

func (e *InvalidTokensError) Error() string {
	return "invalid token response: " + e.Field + " " + e.Reason
}

// Errors of the OAuth operations.
var (
	// ErrNotOAuth is returned when an OAuth operation is asked of a manual
	// integration.
	ErrNotOAuth = errors.New("integration does not use OAuth")
	// ErrRevokeUnsupported is returned by Revoke for a provider without a
	// revocation endpoint; the caller deletes its copy of the credentials.
	ErrRevokeUnsupported = errors.New("provider offers no token revocation")
)
