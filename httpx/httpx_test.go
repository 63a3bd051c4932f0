package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"searchsvc/storage/uuid"
)

// serve runs one request through Handler around mux and returns the
// recorded response and everything logged.
func serve(t *testing.T, mux *http.ServeMux, req *http.Request) (*httptest.ResponseRecorder, string) {
	t.Helper()
	var logs bytes.Buffer
	clock := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	h := newStack(t, mux, Config{
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
		AccessLog: AccessLogAll,
		Now: func() time.Time {
			clock = clock.Add(1500 * time.Microsecond)
			return clock
		},
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, logs.String()
}

func decodeBody(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("body is not JSON: %v: %q", err, rec.Body.String())
	}
	return m
}

func TestEnvelopeOne(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /things/{id}", func(w http.ResponseWriter, r *http.Request) {
		One(w, r, "thing.readOne", map[string]string{"id": r.PathValue("id")})
	})
	rec, _ := serve(t, mux, httptest.NewRequest("GET", "/things/7", nil))
	if rec.Code != 200 {
		t.Fatalf("status: got %d, want 200", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	body := decodeBody(t, rec)
	if got, want := body["requestId"], rec.Header().Get("X-Request-Id"); got != want || !uuid.Valid(want) {
		t.Errorf("requestId: got %v, header %q; want the same UUID in both", got, want)
	}
	if got := body["timestamp"]; got != "2026-11-21T10:00:00.0015Z" && got != "2026-11-21T10:00:00.003Z" {
		t.Errorf("timestamp: got %v, want RFC 3339 UTC with milliseconds", got)
	}
	if got := body["duration"]; got != 1.5 {
		t.Errorf("duration: got %v, want 1.5 (ms, from the injected clock)", got)
	}
	if got := body["operation"]; got != "thing.readOne" {
		t.Errorf("operation: got %v, want thing.readOne", got)
	}
	if got := body["result"].(map[string]any)["id"]; got != "7" {
		t.Errorf("result.id: got %v, want 7", got)
	}
	if strings.Index(rec.Body.String(), `"requestId"`) != 1 {
		t.Errorf("requestId should come first: %s", rec.Body.String())
	}
}

func TestEnvelopeManyNeverNull(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /things", func(w http.ResponseWriter, r *http.Request) {
		var none []string
		Many(w, r, "thing.readMany", none)
	})
	rec, _ := serve(t, mux, httptest.NewRequest("GET", "/things", nil))
	body := decodeBody(t, rec)
	if results, ok := body["results"].([]any); !ok || len(results) != 0 {
		t.Errorf("results: got %#v, want []", body["results"])
	}
	if got := body["count"]; got != 0.0 {
		t.Errorf("count: got %v, want 0", got)
	}
}

func TestSecurityHeaders(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", Health())
	rec, _ := serve(t, mux, httptest.NewRequest("GET", "/healthz", nil))
	want := map[string]string{
		"X-Content-Type-Options":       "nosniff",
		"Cache-Control":                "no-store",
		"Content-Security-Policy":      "default-src 'none'; frame-ancestors 'none'",
		"Cross-Origin-Resource-Policy": "same-origin",
	}
	for k, v := range want {
		if got := rec.Header().Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("%s: got %q, want %q", k, got, v)
		}
	}
	// Nothing beyond these, the request id and the body's own headers: every
	// header is paid for by every response (see securityHeaders).
	for k := range rec.Header() {
		switch k {
		case "X-Content-Type-Options", "Cache-Control", "Content-Security-Policy", "Cross-Origin-Resource-Policy",
			"X-Request-Id", "Content-Type", "Content-Length":
		default:
			t.Errorf("unexpected header %s: %q", k, rec.Header()[k])
		}
	}
	body := decodeBody(t, rec)
	if body["operation"] != "health.read" || body["result"].(map[string]any)["status"] != "ok" {
		t.Errorf("healthz body: got %v", body)
	}
}

func TestJSONNotFoundAndMethodNotAllowed(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/auth/login", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /v1/things/{id}", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, "thing.readOne", NotFound("thing not found"))
	})
	tests := []struct {
		method, path string
		status       int
		code, msg    string
		allow        string
	}{
		{"GET", "/nowhere", 404, "not_found", "not found", ""},
		{"GET", "/v1/auth/login", 405, "method_not_allowed", "method not allowed", "POST"},
		{"DELETE", "/v1/things/1", 405, "method_not_allowed", "method not allowed", "GET, HEAD"},
		{"GET", "/v1/things/1", 404, "not_found", "thing not found", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec, logs := serve(t, mux, httptest.NewRequest(tt.method, tt.path, nil))
			if rec.Code != tt.status {
				t.Fatalf("status: got %d, want %d", rec.Code, tt.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type: got %q, want application/json", ct)
			}
			e := decodeBody(t, rec)["error"].(map[string]any)
			if e["code"] != tt.code || e["message"] != tt.msg {
				t.Errorf("error: got %v, want %s/%s", e, tt.code, tt.msg)
			}
			if got := rec.Header().Get("Allow"); got != tt.allow {
				t.Errorf("Allow: got %q, want %q", got, tt.allow)
			}
			if !strings.Contains(logs, "status="+itoa(tt.status)) {
				t.Errorf("access log lacks status %d: %s", tt.status, logs)
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestPanicRecovery(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) {
		panic("secret internal detail")
	})
	rec, logs := serve(t, mux, httptest.NewRequest("GET", "/boom", nil))
	if rec.Code != 500 {
		t.Fatalf("status: got %d, want 500", rec.Code)
	}
	if strings.Contains(rec.Body.String(), "secret internal detail") || strings.Contains(rec.Body.String(), "goroutine") {
		t.Errorf("panic detail or stack reached the client: %s", rec.Body.String())
	}
	e := decodeBody(t, rec)["error"].(map[string]any)
	if e["code"] != "internal_error" || e["message"] != "internal error" {
		t.Errorf("error: got %v, want internal_error/internal error", e)
	}
	if !strings.Contains(logs, "secret internal detail") || !strings.Contains(logs, "panic serving request") {
		t.Errorf("panic not logged: %s", logs)
	}
}

func TestAccessLogNeverHoldsPathCookieOrBody(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("DELETE /v1/user/sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		One(w, r, "session.deleteOne", true)
	})
	req := httptest.NewRequest("DELETE", "/v1/user/sessions/1111-secret-id", strings.NewReader(`{"password":"hunter2hunter2"}`))
	req.Header.Set("Cookie", "svc_session=cookie-value-xyz")
	req.Header.Set("Content-Type", "application/json")
	rec, logs := serve(t, mux, req)
	if rec.Code != 200 {
		t.Fatalf("status: got %d, want 200", rec.Code)
	}
	for _, leak := range []string{"1111-secret-id", "cookie-value-xyz", "hunter2"} {
		if strings.Contains(logs, leak) {
			t.Errorf("access log holds %q: %s", leak, logs)
		}
	}
	for _, want := range []string{"method=DELETE", `pattern="DELETE /v1/user/sessions/{id}"`, "status=200", "duration_ms="} {
		if !strings.Contains(logs, want) {
			t.Errorf("access log lacks %s: %s", want, logs)
		}
	}
}

type storeDown struct{}

func (storeDown) Error() string     { return "store failed: fsync: input/output error" }
func (storeDown) Unavailable() bool { return true }

func TestWriteError(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		code, msg  string
		retryAfter string
	}{
		{"typed", Forbidden("admin_required", "admin required"), 403, "admin_required", "admin required", ""},
		{"wrapped", errors.Join(errors.New("context"), NotFound("session not found")), 404, "not_found", "session not found", ""},
		{"retry after rounds up", &Error{Status: 429, Code: "too_many_requests", Message: "too many login attempts", RetryAfter: 1500 * time.Millisecond}, 429, "too_many_requests", "too many login attempts", "2"},
		{"store failed", storeDown{}, 503, "unavailable", "service unavailable", ""},
		{"unknown", errors.New("disk on fire at /data/main"), 500, "internal_error", "internal error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) { WriteError(w, r, "x.read", tt.err) })
			rec, logs := serve(t, mux, httptest.NewRequest("GET", "/x", nil))
			if rec.Code != tt.status {
				t.Fatalf("status: got %d, want %d", rec.Code, tt.status)
			}
			e := decodeBody(t, rec)["error"].(map[string]any)
			if e["code"] != tt.code || e["message"] != tt.msg {
				t.Errorf("error: got %v, want %s/%s", e, tt.code, tt.msg)
			}
			if got := rec.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After: got %q, want %q", got, tt.retryAfter)
			}
			if strings.Contains(rec.Body.String(), "/data/main") || strings.Contains(rec.Body.String(), "fsync") {
				t.Errorf("internal cause reached the client: %s", rec.Body.String())
			}
			if tt.status >= 500 && !strings.Contains(logs, "request failed") {
				t.Errorf("5xx cause not logged: %s", logs)
			}
		})
	}
}

func TestValidationDetails(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, "x.create", Invalid(FieldError{"email", "is not an email address"}))
	})
	rec, _ := serve(t, mux, httptest.NewRequest("GET", "/x", nil))
	var body struct {
		Error struct {
			Code, Message string
			Details       []FieldError
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 400 || body.Error.Message != "validation failed" || len(body.Error.Details) != 1 ||
		body.Error.Details[0] != (FieldError{"email", "is not an email address"}) {
		t.Errorf("got %d %+v, want 400 validation failed with the email detail", rec.Code, body.Error)
	}
}

func TestObserve(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/auth/login", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, "auth.login", &Error{Status: 429, Code: "too_many_requests", Message: "too many login attempts"})
	})
	now := time.Unix(1e9, 0)
	mux.HandleFunc("GET /quiet", func(w http.ResponseWriter, r *http.Request) { now = now.Add(1500 * time.Millisecond) })
	var got []string
	h := newStack(t, mux, Config{Now: func() time.Time { return now }, Observe: func(pattern string, status int, elapsed time.Duration) {
		got = append(got, pattern+" "+itoa(status)+" "+elapsed.String())
	}})
	for _, req := range []*http.Request{
		httptest.NewRequest("POST", "/v1/auth/login", nil),
		httptest.NewRequest("GET", "/quiet", nil),
		httptest.NewRequest("GET", "/nowhere", nil),
	} {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	want := []string{"POST /v1/auth/login 429 0s", "GET /quiet 200 1.5s", " 404 0s"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("observed %q, want %q", got, want)
	}
}

// newStack is Handler, failing the test on an error.
func newStack(tb testing.TB, mux *http.ServeMux, cfg Config) *Stack {
	tb.Helper()
	s, err := Handler(mux, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
