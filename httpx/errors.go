package httpx

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Error is an error with everything a client may see: the HTTP status, a
// snake_case code and a message. Domain packages return their own errors;
// handlers translate them into an Error, and WriteError writes it. Cause is
// the internal reason: it is logged for 5xx responses and never sent.
type Error struct {
	Status     int
	Code       string
	Message    string
	Details    []FieldError
	RetryAfter time.Duration // sent as Retry-After (whole seconds, rounded up) when positive
	Cause      error
}

// FieldError names one invalid input field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Code, e.Cause)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// NewError returns an Error with the given status, code and message.
func NewError(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// The errors shared by every package. Each call returns a fresh value, so a
// caller may set Cause or Details without touching anyone else's.

// BadBody is the answer to a body that is not the JSON the endpoint wants.
func BadBody(cause error) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "invalid_request_body", Message: "invalid request body", Cause: cause}
}

// Invalid is a validation failure with one detail per offending field.
func Invalid(details ...FieldError) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "validation_failed", Message: "validation failed", Details: details}
}

// NotFound is the answer to an unknown path or record.
func NotFound(message string) *Error {
	return &Error{Status: http.StatusNotFound, Code: "not_found", Message: message}
}

// Forbidden refuses an authenticated caller.
func Forbidden(code, message string) *Error {
	return &Error{Status: http.StatusForbidden, Code: code, Message: message}
}

// Unavailable is the answer while a store refuses writes.
func Unavailable(cause error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "service unavailable", Cause: cause}
}

// Internal hides an unexpected error from the client; the cause is logged.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: "internal_error", Message: "internal error", Cause: cause}
}

// unavailable is implemented by errors that mean "a store cannot take
// writes now" (storage's failed state) without httpx importing storage.
type unavailable interface{ Unavailable() bool }

// AsError turns any error into the Error a client may see: an *Error as it
// is, an error that reports Unavailable() as 503, anything else as a 500
// whose text stays in the log.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var u unavailable
	if errors.As(err, &u) && u.Unavailable() {
		return Unavailable(err)
	}
	return Internal(err)
}
