package auth

import (
	"context"
	"errors"
	"net/http"
	"time"

	"searchsvc/httpx"
	"searchsvc/sessions"
)

// Domain errors. Handlers return them, and the sessions package's
// (sessions.ErrNoCookie, ErrInvalid, ErrExpired, ErrNotFound); httpError
// turns them into what a client sees.
var (
	ErrEmailTaken         = errors.New("auth: email already registered")
	ErrRegistrationClosed = errors.New("auth: registration closed")
	ErrInvalidCredentials = errors.New("auth: invalid email or password")
	ErrUserNotFound       = errors.New("auth: user not found")
	ErrInvalidRole        = errors.New("auth: invalid role")
	ErrNotYourSession     = errors.New("auth: not your session")
	ErrInvalidCSRF        = errors.New("auth: invalid CSRF token")
	ErrAdminRequired      = errors.New("auth: admin required")
	ErrCannotDeleteSelf   = errors.New("auth: cannot delete your own account")
)

// ValidationError lists the invalid fields of a request.
type ValidationError struct {
	Fields []httpx.FieldError
}

func (e *ValidationError) Error() string {
	return "auth: validation failed on " + e.Fields[0].Field
}

// RateLimitError refuses an attempt over a rate limit until RetryAfter has
// passed.
type RateLimitError struct {
	Message    string // the client-safe reason, e.g. "too many login attempts"
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string { return "auth: " + e.Message }

// httpError is the one place where auth's errors become client answers.
// Store failures become 503; anything unknown stays a 500 whose text is
// only logged.
func httpError(err error) error {
	var (
		ve *ValidationError
		rl *RateLimitError
		he *httpx.Error
	)
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &ve):
		return httpx.Invalid(ve.Fields...)
	case errors.As(err, &rl):
		return &httpx.Error{Status: http.StatusTooManyRequests, Code: "too_many_attempts",
			Message: rl.Message, RetryAfter: rl.RetryAfter}
	case errors.Is(err, ErrEmailTaken):
		return httpx.NewError(http.StatusConflict, "email_taken", "email already registered")
	case errors.Is(err, ErrRegistrationClosed):
		return httpx.Forbidden("registration_closed", "registration closed")
	case errors.Is(err, ErrInvalidCredentials):
		return httpx.NewError(http.StatusUnauthorized, "invalid_credentials", "invalid email or password")
	case errors.Is(err, sessions.ErrNoCookie):
		return httpx.NewError(http.StatusUnauthorized, "no_session_cookie", "no session cookie")
	case errors.Is(err, sessions.ErrInvalid):
		return httpx.NewError(http.StatusUnauthorized, "invalid_session", "invalid session")
	case errors.Is(err, sessions.ErrExpired):
		return httpx.NewError(http.StatusUnauthorized, "session_expired", "session expired")
	case errors.Is(err, errSessionUserGone):
		return httpx.NewError(http.StatusUnauthorized, "user_not_found", "user not found")
	case errors.Is(err, ErrUserNotFound):
		return httpx.NotFound("user not found")
	case errors.Is(err, sessions.ErrNotFound):
		return httpx.NotFound("session not found")
	case errors.Is(err, ErrNotYourSession):
		return httpx.Forbidden("not_your_session", "not your session")
	case errors.Is(err, ErrInvalidCSRF):
		return httpx.Forbidden("invalid_csrf_token", "invalid CSRF token")
	case errors.Is(err, ErrAdminRequired):
		return httpx.Forbidden("admin_required", "admin required")
	case errors.Is(err, ErrCannotDeleteSelf):
		return httpx.NewError(http.StatusConflict, "cannot_delete_self", "cannot delete your own account")
	case errors.Is(err, ErrTOTPRequired):
		return httpx.NewError(http.StatusUnauthorized, "totp_required", "second factor code required")
	case errors.Is(err, ErrTOTPInvalid):
		return httpx.NewError(http.StatusUnauthorized, "invalid_totp_code", "invalid second factor code")
	case errors.Is(err, ErrTOTPEnabled):
		return httpx.NewError(http.StatusConflict, "totp_enabled", "second factor already on")
	case errors.Is(err, ErrTOTPNotEnabled):
		return httpx.NewError(http.StatusConflict, "totp_not_enabled", "second factor not on")
	case errors.Is(err, ErrTOTPNotEnrolled):
		return httpx.NewError(http.StatusConflict, "totp_not_started", "no second factor enrolment started")
	case errors.Is(err, ErrBusy):
		e := httpx.Unavailable(err)
		e.RetryAfter = BusyRetryAfter
		return e
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The request gave up while waiting for a password hash slot.
		return httpx.Unavailable(err)
	}
	// A store that refuses writes reports Unavailable and becomes 503 in
	// httpx; anything else is a 500 whose cause is logged there.
	return err
}

// errSessionUserGone is the request-authentication failure "the session's
// user is missing": 401, unlike ErrUserNotFound on an admin endpoint (404).
var errSessionUserGone = errors.New("auth: session's user not found")
