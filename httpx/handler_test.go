package httpx

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHandle(t *testing.T) {
	tests := []struct {
		name       string
		fn         HandlerFunc
		wantStatus int
		wantCode   string
	}{
		{"answer", func(w http.ResponseWriter, r *http.Request) error {
			One(w, r, "thing.readOne", map[string]string{"a": "b"})
			return nil
		}, http.StatusOK, ""},
		{"typed error", func(w http.ResponseWriter, r *http.Request) error {
			return NewError(http.StatusNotFound, "thing_not_found", "thing not found")
		}, http.StatusNotFound, "thing_not_found"},
		{"internal error", func(w http.ResponseWriter, r *http.Request) error {
			return errors.New("disk on fire")
		}, http.StatusInternalServerError, "internal_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handle("thing.readOne", tt.fn).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			if rec.Code != tt.wantStatus {
				t.Fatalf("status: got %d, want %d", rec.Code, tt.wantStatus)
			}
			var body struct {
				Operation string `json:"operation"`
				Error     *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Operation != "thing.readOne" {
				t.Errorf("operation: got %q, want thing.readOne", body.Operation)
			}
			code := ""
			if body.Error != nil {
				code = body.Error.Code
				if tt.wantStatus == 500 && body.Error.Message == "disk on fire" {
					t.Error("internal error text reached the client")
				}
			}
			if code != tt.wantCode {
				t.Errorf("error code: got %q, want %q", code, tt.wantCode)
			}
		})
	}
}

func TestOperationOf(t *testing.T) {
	if got := OperationOf(Handle("a.b", nil), "x"); got != "a.b" {
		t.Errorf("got %q, want a.b", got)
	}
	if got := OperationOf(http.NotFoundHandler(), "x"); got != "x" {
		t.Errorf("got %q, want x", got)
	}
}
