package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"searchsvc/httpx"
)

// decodeBody runs httpx.Decode on body as a handler would.
func decodeBody(t *testing.T, body string, v any) error {
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return httpx.Decode(httptest.NewRecorder(), r, v)
}

// checkValidation fails unless err is nil or a ValidationError whose
// details each name a field and a message.
func checkValidation(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Fields) == 0 {
		t.Fatalf("validate returned %v", err)
	}
	for _, f := range ve.Fields {
		if f.Field == "" || f.Message == "" {
			t.Fatalf("empty detail %+v", f)
		}
	}
	if e := httpx.AsError(httpError(err)); e.Status != http.StatusBadRequest || e.Message != "validation failed" {
		t.Fatalf("mapped to %d %q", e.Status, e.Message)
	}
}

var bodySeeds = []string{
	`{"email":"ada@example.com","name":"Ada","password":"correct horse battery"}`,
	`{"email":"ADA@EXAMPLE.COM ","name":" Ada ","password":"ada@example.com"}`,
	`{"email":"a@b@c.d","name":"\u0000","password":"\ud800\udc00\ud800"}`,
	`{"email":"","password":""}`,
	`{"currentPassword":"x","newPassword":"y","csrfToken":"z"}`,
	`{"email":1}`, `[]`, `null`, `{`, ``, `{"a":{"b":[1,2,{}]}}`,
}

func FuzzRegisterBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var req registerRequest
		if err := decodeBody(t, body, &req); err != nil {
			return
		}
		req.normalize()
		err := req.validate()
		checkValidation(t, err)
		if err == nil && (req.Email != strings.ToLower(req.Email) || len(req.Email) > maxEmailBytes || strings.Count(req.Email, "@") != 1) {
			t.Fatalf("accepted email %q", req.Email)
		}
	})
}

func FuzzLoginBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var req loginRequest
		if err := decodeBody(t, body, &req); err != nil {
			return
		}
		checkValidation(t, req.validate())
	})
}

func FuzzPasswordBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add(s)
	}
	u := User{ID: "u1", Email: "ada@example.com", Name: "Ada Lovelace"}
	f.Fuzz(func(t *testing.T, body string) {
		var req passwordRequest
		if err := decodeBody(t, body, &req); err != nil {
			return
		}
		checkValidation(t, req.validate(u))
	})
}
