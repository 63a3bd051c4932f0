package integrations

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"30", 30 * time.Second},
		{"0", 0},
		{"-5", 0},
		{"soon", 0},
		{"99999999999", 24 * time.Hour},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{now.Add(1000 * time.Hour).Format(http.TimeFormat), 24 * time.Hour},
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.in, now); got != tt.want {
			t.Errorf("RetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestAPIError(t *testing.T) {
	now := time.Now()
	resp := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"7"}}}
	e := NewAPIError(resp, "rateLimitExceeded", now)
	if !e.Temporary() || e.Unauthorized() || e.RetryAfter != 7*time.Second || e.Error() != "provider API answered 429 rateLimitExceeded" {
		t.Errorf("429: got %+v %q", e, e.Error())
	}
	for status, temporary := range map[int]bool{500: true, 503: true, 408: true, 400: false, 403: false, 404: false, 401: false} {
		e := &APIError{Status: status}
		if e.Temporary() != temporary {
			t.Errorf("%d: Temporary() = %v, want %v", status, e.Temporary(), temporary)
		}
	}
	if !(&APIError{Status: 401}).Unauthorized() {
		t.Error("401 is not Unauthorized")
	}
}
