package integrations

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"searchsvc/integrations/textguard"
)

// APIError is a failed call to a provider's API (not its token endpoint,
// which gives a TokenError). The sync scheduler decides from it what to do
// next: Status 401 means the access token no longer works (refresh, then
// needs_reauth), 429 and 5xx are retried after RetryAfter or a backoff,
// anything else fails the task. Its text holds no token and no body.
type APIError struct {
	Status     int           // HTTP status
	Code       string        // the provider's error code or reason, if it gave one
	RetryAfter time.Duration // from Retry-After; 0 if absent
}

func (e *APIError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("provider API answered %d %s", e.Status, e.Code)
	}
	return fmt.Sprintf("provider API answered %d", e.Status)
}

// Temporary reports whether the call may succeed if tried again later.
func (e *APIError) Temporary() bool {
	return e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout || e.Status >= 500
}

// Unauthorized reports whether the provider refused the access token.
func (e *APIError) Unauthorized() bool { return e.Status == http.StatusUnauthorized }

// NewAPIError builds an APIError from a failed response: its status, code
// (read by the caller from the body, since each provider shapes it its own
// way) and Retry-After, in seconds or as an HTTP date relative to now.
func NewAPIError(resp *http.Response, code string, now time.Time) *APIError {
	return &APIError{Status: resp.StatusCode, Code: strings.ToValidUTF8(textguard.Truncate(code, 64), ""), RetryAfter: RetryAfter(resp.Header.Get("Retry-After"), now)}
}

// maxRetryAfter caps what a provider may ask us to wait, so a hostile or
// broken header cannot park a sync for years.
const maxRetryAfter = 24 * time.Hour

// RetryAfter parses a Retry-After header value: delay-seconds or an
// HTTP-date. Garbage, negatives and the past give 0; values are capped at
// a day.
func RetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}
