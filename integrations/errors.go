package integrations

import "errors"

// ValidationError reports a manual form, or the credentials it holds, that
// the provider or the service refused. Message is plain and safe to show to
// the user; it never holds a password or token.
type ValidationError struct {
	Field   string // the form field at fault; empty when not one field's
	Message string
	Err     error // the underlying cause, for logs; may be nil
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func (e *ValidationError) Unwrap() error { return e.Err }

// ErrSkip marks a task error that trying again cannot fix and that does
// not mean the sync is failing: one message too large to fetch, a payload
// that cannot be valid. An integration wraps it (fmt.Errorf("%w: %w",
// integrations.ErrSkip, err)); the scheduler drops the task at once, logs
// it, and leaves the record's status alone. Other errors that are neither
// temporary nor an authorization refusal are retried a few times.
var ErrSkip = errors.New("task skipped")

// ErrReauthRequired means the provider refused the credentials for good:
// an OAuth refresh token revoked or expired, an access token expired with
// no refresh token, a password that no longer works. The user must
// connect again; the record moves to needs_reauth.
var ErrReauthRequired = errors.New("authorization revoked or expired; the user must connect again")
