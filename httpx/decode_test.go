package httpx

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

type loginBody struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, body, ctype string
		status            int // 0: success
		code              string
	}{
		{"ok", `{"email":"a@b.c","password":"p"}`, "application/json", 0, ""},
		{"ok with charset", `{"email":"a@b.c"}`, "application/json; charset=utf-8", 0, ""},
		{"no content type", `{"email":"a@b.c"}`, "none", 415, "unsupported_media_type"},
		{"bad content type", `{"email":"a@b.c"}`, "application/json; x", 415, "unsupported_media_type"},
		{"trailing white space", "{\"email\":\"a@b.c\"}\n\t ", "", 0, ""},
		{"malformed", `{"email":`, "", 400, "invalid_request_body"},
		{"unknown field", `{"email":"a@b.c","admin":true}`, "", 400, "invalid_request_body"},
		{"two values", `{"email":"a"}{"email":"b"}`, "", 400, "invalid_request_body"},
		{"empty", ``, "", 400, "invalid_request_body"},
		{"wrong type", `{"email":5}`, "", 400, "invalid_request_body"},
		{"array", `[]`, "", 400, "invalid_request_body"},
		{"form post", `email=a`, "application/x-www-form-urlencoded", 415, "unsupported_media_type"},
		{"text plain", `{"email":"a"}`, "text/plain", 415, "unsupported_media_type"},
		{"too big", `{"email":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, "", 413, "body_too_large"},
		{"invalid UTF-8", "{\"email\":\"a@b.c\",\"password\":\"\xff\xfe\"}", "", 400, "invalid_request_body"},
		{"truncated UTF-8", "{\"email\":\"a@b.c\",\"password\":\"\xe2\x82\"}", "", 400, "invalid_request_body"},
		{"lone high surrogate", `{"email":"a@b.c","password":"\ud800x"}`, "", 400, "invalid_request_body"},
		{"lone high surrogate at the end", `{"email":"a@b.c","password":"\ud800"}`, "", 400, "invalid_request_body"},
		{"lone low surrogate", `{"email":"a@b.c","password":"\udc00"}`, "", 400, "invalid_request_body"},
		{"two high surrogates", `{"email":"a@b.c","password":"\ud800\ud800"}`, "", 400, "invalid_request_body"},
		{"surrogate pair", `{"email":"a@b.c","password":"\ud83d\ude00"}`, "", 0, ""},
		{"escaped backslash then u", `{"email":"a@b.c","password":"\\ud800"}`, "", 0, ""},
		{"valid UTF-8", `{"email":"a@b.c","password":"pässwörd €"}`, "", 0, ""},
		{"a key twice", `{"email":"a@b.c","email":"admin@b.c"}`, "", 400, "invalid_request_body"},
		{"a key twice in another case", `{"email":"a@b.c","EMAIL":"admin@b.c"}`, "", 400, "invalid_request_body"},
		{"a key twice, once escaped", `{"email":"a@b.c","em\u0061il":"admin@b.c"}`, "", 400, "invalid_request_body"},
		{"a key's name as a value", `{"email":"a@b.c","password":"email"}`, "", 0, ""},
		{"too big garbage", strings.Repeat("}", 2*MaxBodyBytes), "", 413, "body_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			switch tt.ctype {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "none":
			default:
				req.Header.Set("Content-Type", tt.ctype)
			}
			var v loginBody
			err := Decode(httptest.NewRecorder(), req, &v)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
				if v.Email != "a@b.c" {
					t.Errorf("email: got %q, want a@b.c", v.Email)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if e.Status != tt.status || e.Code != tt.code || e.Message != "invalid request body" {
				t.Errorf("got %d %s %q, want %d %s \"invalid request body\"", e.Status, e.Code, e.Message, tt.status, tt.code)
			}
		})
	}
}

func TestCheckKeys(t *testing.T) {
	for _, tc := range []struct {
		body string
		dup  bool
	}{
		{`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`, false},
		{`{"a":{"b":1,"b":2}}`, true},
		{`{"a":[{"b":1},{"b":2,"c":{},"b":3}]}`, true},
		{`{"a":{},"a":[]}`, true},
		{`{"a":[1,"a",{"x":"a"}],"b":"a"}`, false},
		{`{"K":1,"K":2}`, true}, // the Kelvin sign folds to k, as the decoder matches it
		{`[{"a":1},{"a":1}]`, false},
		{`{"a":1,"a"`, true},
		{`{"a":`, false}, // left to the decoder
	} {
		if err := checkKeys([]byte(tc.body)); (err != nil) != tc.dup {
			t.Errorf("%s: got %v, want duplicate %v", tc.body, err, tc.dup)
		}
	}
}

// FuzzDecode feeds arbitrary bodies to Decode: it must never panic, and on
// success the value must re-encode to an equal value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"email":"a@b.c","password":"p"}`, `{"password":"\ud800"}`, `{"password":"\ud83d\ude00"}`, `{`, `{"email":"\u0000"}`, `null`, `{"email":"a"} x`, "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var v loginBody
		req := httptest.NewRequest("POST", "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		err := Decode(httptest.NewRecorder(), req, &v)
		if err == nil && (!utf8.ValidString(v.Email) || !utf8.ValidString(v.Password)) {
			t.Fatalf("decoded %q into a value that is not UTF-8", body)
		}
		if err == nil && strings.ContainsRune(v.Email+v.Password, utf8.RuneError) && !strings.Contains(strings.ToLower(body), `\ufffd`) && !strings.ContainsRune(body, utf8.RuneError) {
			t.Fatalf("decoded %q with a U+FFFD the body does not hold", body)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Message != "invalid request body" || (e.Status != 400 && e.Status != 413) {
				t.Fatalf("error %v is not a 400/413 invalid request body", err)
			}
		}
	})
}
